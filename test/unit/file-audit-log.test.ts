import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileAuditLog, verifyAuditDir } from '../../src/adapters/audit/file-audit-log.ts';
import type { AuditFacts } from '../../src/domain/audit-chain.ts';

const KEY = 'k'.repeat(32);
const facts = (i: number): AuditFacts => ({
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  kind: 'read',
  op: 'query.recall',
  tenant: 't',
  who: `caller-${i}`,
  chain: [],
  purpose: 'test',
  ids: [`r-${i}`],
  code: 'OK',
});

describe('file audit log', () => {
  it('entries appended at once, and while a write is in flight, land whole, once each and in call order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-'));
    const log = await FileAuditLog.open(dir, KEY);
    const first = Array.from({ length: 50 }, (_, i) => log.append(facts(i)));
    await Promise.resolve(); // the first write starts; the next 150 arrive while it runs
    const rest = Array.from({ length: 150 }, (_, i) => log.append(facts(50 + i)));
    await Promise.all([...first, ...rest]);
    await log.close();
    const lines = readFileSync(log.file, 'utf8').split('\n').filter(Boolean);
    expect(lines.map((l) => (JSON.parse(l) as { who: string }).who)).toEqual(
      Array.from({ length: 200 }, (_, i) => `caller-${i}`),
    );
    expect(await verifyAuditDir(dir, KEY)).toEqual([
      { file: log.file.split('/').pop(), verdict: expect.objectContaining({ ok: true, entries: 200 }) },
    ]);
    expect(statSync(log.file).mode & 0o777).toBe(0o600);
  });

  it('a failed write rejects its entries, and a later one opens the file again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-'));
    const log = await FileAuditLog.open(join(dir, 'missing', 'deeper'), KEY);
    // The directory is gone before the first write: that entry fails instead of vanishing silently.
    rmSync(join(dir, 'missing'), { recursive: true });
    await expect(log.append(facts(0))).rejects.toThrow(/ENOENT/);
    mkdirSync(join(dir, 'missing', 'deeper'), { recursive: true });
    await log.append(facts(1));
    await log.close();
    expect(readFileSync(log.file, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('verify: a last line without its newline is an append in flight, not tampering; a broken line before it fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-'));
    const log = await FileAuditLog.open(dir, KEY);
    for (let i = 0; i < 3; i++) await log.append(facts(i));
    await log.close();
    const whole = readFileSync(log.file, 'utf8');
    const name = log.file.split('/').pop();
    appendFileSync(log.file, '{"seq":4,"at":"2026-01-0');
    expect(await verifyAuditDir(dir, KEY)).toEqual([
      { file: name, verdict: expect.objectContaining({ ok: true, entries: 3 }), inFlight: true },
    ]);
    // The same broken line with entries after it: a torn write inside the trail is named.
    const [a, b, c] = whole.split('\n');
    writeFileSync(log.file, `${a}\n{"seq":2,"at":"2026-01-0\n${b}\n${c}\n`);
    expect(await verifyAuditDir(dir, KEY)).toEqual([
      { file: name, verdict: { ok: false, line: 2, reason: 'not JSON' } },
    ]);
  });
});
