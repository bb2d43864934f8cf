import { describe, expect, it } from 'vitest';
import { SubjectGate, type GateResult } from '../../src/ingest/subject-gate.ts';
import type { SubjectHold, SubjectTurns } from '../../src/ports/ingest-lookups.ts';

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

/** The graph's turns as another process would see them: taken, or kept by `busy` keys; logged. */
class FakeTurns implements SubjectTurns {
  readonly log: string[] = [];
  readonly busy = new Set<string>();
  async hold(keys: readonly string[], waitMs: number): Promise<SubjectHold | null> {
    const names = keys.map((k) => k.split('\u0000')[1]).join(',');
    if (keys.some((k) => this.busy.has(k))) {
      await new Promise((r) => setTimeout(r, waitMs));
      this.log.push(`gave up ${names}`);
      return null;
    }
    this.log.push(`took ${names}`);
    return { release: () => void this.log.push(`gave back ${names}`) };
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

  it('across processes: a write takes the graph turn after its turn here, and gives it back once its write is projected', async () => {
    const projection = new FakeProjection();
    const turns = new FakeTurns();
    const gate = new SubjectGate(projection, 2_000, { turns, holdMs: 10_000 });
    await gate.around('acme', ['Billing-API'], async () => (turns.log.push('first decides'), pending(7)));
    await tick();
    expect(turns.log).toEqual(['took billing-api', 'first decides']);
    const second = gate.around(
      'acme',
      ['billing-api'],
      async () => (turns.log.push('second decides'), pending(8)),
    );
    await tick();
    expect(turns.log).toHaveLength(2); // neither given back nor taken again before the projection
    projection.apply(7n);
    await second;
    expect(turns.log.slice(2).sort()).toEqual(
      ['gave back billing-api', 'second decides', 'took billing-api'].sort(),
    );
    expect(turns.log.indexOf('second decides')).toBeGreaterThan(turns.log.indexOf('took billing-api', 2));
  });

  it('a graph turn another process keeps past the wait refuses the write RATE_LIMITED before it gathers', async () => {
    const projection = new FakeProjection();
    const turns = new FakeTurns();
    turns.busy.add('acme\u0000billing-api');
    const gate = new SubjectGate(projection, 60, { turns, holdMs: 10_000 });
    let ran = false;
    const err = await gate
      .around('acme', ['billing-api'], async () => ((ran = true), pending(1)))
      .catch((e) => e);
    expect(ran).toBe(false);
    expect(err).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
    expect(turns.log).toEqual(['gave up billing-api']);
  });

  it('a write that leaves nothing to project, or fails, gives its graph turn back at once', async () => {
    const projection = new FakeProjection();
    const turns = new FakeTurns();
    const gate = new SubjectGate(projection, 2_000, { turns, holdMs: 10_000 });
    await gate.around('acme', ['a'], async () => ({ outcome: 'REINFORCED', position: '0:3' }));
    await expect(
      gate.around('acme', ['b'], () => Promise.reject(new Error('embedder down'))),
    ).rejects.toThrow();
    expect(turns.log).toEqual(['took a', 'gave back a', 'took b', 'gave back b']);
    expect(projection.waits).toEqual([]);
  });
});
