import { describe, expect, it } from 'vitest';
import { chainEntry, GENESIS, verifyChain, type AuditFacts } from '../../src/domain/audit-chain.ts';

const KEY = 'k'.repeat(32);
const facts = (i: number): AuditFacts => ({
  at: `2026-12-01T00:00:0${i}Z`,
  kind: i % 2 ? 'read' : 'write',
  op: i % 2 ? 'query.recall' : 'mutation.propose',
  tenant: 'acme',
  who: 'muninn-dev|alice',
  chain: ['muninn-dev|agent-7'],
  purpose: 'support',
  ids: [`r-${i}`],
  code: 'OK',
});

function chain(n: number, key = KEY): string[] {
  const lines: string[] = [];
  let prev = GENESIS;
  for (let i = 1; i <= n; i++) {
    const e = chainEntry(key, facts(i), i, prev);
    prev = e.mac;
    lines.push(JSON.stringify(e));
  }
  return lines;
}

describe('audit chain', () => {
  it('a chain written in order verifies, entry by entry', () => {
    const v = verifyChain(KEY, chain(5));
    expect(v).toMatchObject({ ok: true, entries: 5 });
  });

  it('an edited entry is detected at its line, even with its own fields consistent', () => {
    const lines = chain(5);
    const e = JSON.parse(lines[2]!) as Record<string, unknown>;
    lines[2] = JSON.stringify({ ...e, purpose: 'marketing' });
    expect(verifyChain(KEY, lines)).toEqual({ ok: false, line: 3, reason: expect.stringMatching(/MAC/) });
  });

  it('a dropped, a reordered and an inserted entry are each detected', () => {
    const dropped = chain(5);
    dropped.splice(1, 1);
    expect(verifyChain(KEY, dropped)).toMatchObject({ ok: false, line: 2 });
    const swapped = chain(5);
    [swapped[1], swapped[2]] = [swapped[2]!, swapped[1]!];
    expect(verifyChain(KEY, swapped)).toMatchObject({ ok: false, line: 2 });
    const lines = chain(3);
    const last = JSON.parse(lines[2]!) as { mac: string };
    // A forger without the key: correct sequence and link, but the MAC made with another key.
    lines.push(JSON.stringify(chainEntry('x'.repeat(32), facts(4), 4, last.mac)));
    expect(verifyChain(KEY, lines)).toMatchObject({
      ok: false,
      line: 4,
      reason: expect.stringMatching(/MAC/),
    });
  });

  it('the wrong key fails at the first entry; a line that is not JSON is named', () => {
    expect(verifyChain('y'.repeat(32), chain(2))).toMatchObject({ ok: false, line: 1 });
    const lines = chain(2);
    lines[1] = '{not json';
    expect(verifyChain(KEY, lines)).toEqual({ ok: false, line: 2, reason: 'not JSON' });
  });
});
