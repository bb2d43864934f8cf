import { describe, expect, it } from 'vitest';
import { SubjectGate, type GateResult } from '../../src/ingest/subject-gate.ts';

/** A projection that applies only when told to (`apply`), and records what was waited for. */
class FakeProjection {
  applied = -1n;
  readonly waits: string[] = [];
  private readonly waiters: Array<{ offset: bigint; resolve: (ok: boolean) => void }> = [];

  waitFor(partition: number, offset: string, timeoutMs: number): Promise<boolean> {
    this.waits.push(`${partition}:${offset}`);
    const o = BigInt(offset);
    if (this.applied >= o) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w = { offset: o, resolve };
      this.waiters.push(w);
      setTimeout(() => resolve(false), timeoutMs);
    });
  }

  apply(offset: bigint): void {
    this.applied = offset;
    for (const w of this.waiters) if (w.offset <= offset) w.resolve(true);
  }
}

const pending = (offset: number): GateResult => ({ outcome: 'PENDING', position: `0:${offset}` });
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('SubjectGate', () => {
  it('a write about a subject gathers only once the write before it about that subject is projected', async () => {
    const projection = new FakeProjection();
    const gate = new SubjectGate(projection, 2_000);
    const order: string[] = [];
    const first = gate.around('acme', ['billing-api'], async () => {
      order.push('first decides');
      return pending(7);
    });
    const second = gate.around('acme', ['billing-api'], async () => {
      order.push('second decides');
      return pending(8);
    });
    await first;
    await tick();
    expect(order).toEqual(['first decides']);
    expect(projection.waits).toEqual(['0:7']);
    projection.apply(7n);
    await second;
    expect(order).toEqual(['first decides', 'second decides']);
  });

  it('subjects are held by their key: case and surrounding spaces do not make another subject', async () => {
    const projection = new FakeProjection();
    const gate = new SubjectGate(projection, 2_000);
    await gate.around('acme', ['Billing-API '], async () => pending(3));
    let ran = false;
    const next = gate.around('acme', ['billing-api'], async () => {
      ran = true;
      return pending(4);
    });
    await tick();
    expect(ran).toBe(false);
    projection.apply(3n);
    await next;
    expect(ran).toBe(true);
  });

  it('writes about other subjects, or in another tenant, never wait', async () => {
    const projection = new FakeProjection();
    const gate = new SubjectGate(projection, 2_000);
    await gate.around('acme', ['billing-api'], async () => pending(1));
    const ran: string[] = [];
    await gate.around('acme', ['cart-api'], async () => (ran.push('other subject'), pending(2)));
    await gate.around('globex', ['billing-api'], async () => (ran.push('other tenant'), pending(3)));
    await gate.around('acme', [], async () => (ran.push('no subject'), pending(4)));
    expect(ran).toEqual(['other subject', 'other tenant', 'no subject']);
    expect(projection.waits).toEqual([]);
  });

  it('a write that left nothing unprojected (awaited, or refused) does not hold the next one', async () => {
    const projection = new FakeProjection();
    const gate = new SubjectGate(projection, 2_000);
    await gate.around('acme', ['billing-api'], async () => ({ outcome: 'ADMITTED', position: '0:9' }));
    await gate.around('acme', ['billing-api'], async () => ({ outcome: 'REJECTED', position: null }));
    await expect(
      gate.around('acme', ['billing-api'], () => Promise.reject(new Error('embedder down'))),
    ).rejects.toThrow('embedder down');
    const r = await gate.around('acme', ['billing-api'], async () => pending(10));
    expect(r.position).toBe('0:10');
    expect(projection.waits).toEqual([]);
  });

  it('a write that would wait past maxWaitMs is refused RATE_LIMITED, and the one behind it still waits for what it waited for', async () => {
    const projection = new FakeProjection();
    const gate = new SubjectGate(projection, 50);
    await gate.around('acme', ['billing-api'], async () => pending(5));
    let refusedRan = false;
    const err = await gate
      .around('acme', ['billing-api'], async () => {
        refusedRan = true;
        return pending(6);
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(refusedRan).toBe(false);
    expect(err).toMatchObject({ code: 'RATE_LIMITED', retryable: true, details: { retryAfterMs: 100 } });
    const third = gate.around('acme', ['billing-api'], async () => pending(7));
    await tick();
    expect(projection.waits.at(-1)).toBe('0:5');
    projection.apply(5n);
    await expect(third).resolves.toMatchObject({ position: '0:7' });
  });

  it('a write about several subjects waits for each, and holds each for the next', async () => {
    const projection = new FakeProjection();
    const gate = new SubjectGate(projection, 2_000);
    await gate.around('acme', ['a'], async () => pending(1));
    await gate.around('acme', ['b'], async () => pending(2));
    projection.apply(2n);
    await gate.around('acme', ['b', 'a'], async () => pending(3));
    expect(projection.waits).toEqual(['0:2']);
    let ran = false;
    const next = gate.around('acme', ['a'], async () => ((ran = true), pending(4)));
    await tick();
    expect(ran).toBe(false);
    projection.apply(3n);
    await next;
    expect(ran).toBe(true);
  });
});
