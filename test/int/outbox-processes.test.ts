import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyChain } from '../support/outbox-dir.ts';
import { endpoints } from '../support/harness.ts';

/**
 * `muninn outbox export` as real processes: several exporters at once over one outbox produce one chain
 * with no gap and no fork, and a CLI run prints operations metadata only (no transcript text).
 */
const ROOT = join(import.meta.dirname, '..', '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'hermes');
const SECRET_TEXT = 'SYNTH-PROCESS-TEXT';

function runExport(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'outbox', 'export'], {
      cwd: ROOT,
      env: { ...process.env, ...endpoints(), MUNINN_LOG_LEVEL: 'silent', ...env },
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('outbox export as concurrent processes', () => {
  it('3 exporters × 4 sessions, each run twice at once: 12 objects, manifests 1..12 in one verified chain, no duplicates', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'muninn-outbox-procs-'));
    const outbox = join(dir, 'outbox');
    const base = JSON.parse(await readFile(join(FIXTURES, 'signal-stable.json'), 'utf8')) as {
      id: string;
      messages: Array<{ role: string; content: string | null }>;
    };
    const exporters = [0, 1, 2];
    for (const e of exporters) {
      await mkdir(join(dir, `src-${e}`), { recursive: true });
      for (let i = 0; i < 4; i++) {
        const s = structuredClone(base);
        s.id = `sess-proc-${e}-${i}`;
        for (const m of s.messages)
          if (m.role === 'user') m.content = `${SECRET_TEXT} ${e}-${i} garden plans`;
        await writeFile(join(dir, `src-${e}`, `${s.id}.json`), JSON.stringify(s));
      }
    }
    const env = (e: number) => ({
      MUNINN_STATE_DIR: join(dir, `state-${e}`),
      MUNINN_OUTBOX_DIR: outbox,
      MUNINN_EXPORT_SOURCE: `file:${join(dir, `src-${e}`)}`,
      MUNINN_EXPORT_ALLOWLIST: 'signal:owner-alice',
      MUNINN_EXPORT_QUIET_MS: '0',
      MUNINN_PSEUDONYM_KEY: 'k'.repeat(40),
      MUNINN_PSEUDONYM_KEY_ID: 'k-proc',
    });
    for (const round of [0, 1]) {
      const runs = await Promise.all(exporters.map((e) => runExport(env(e))));
      for (const r of runs) {
        expect(r.code, r.stderr).toBe(0);
        const out = JSON.parse(r.stdout) as { published: number; reasons: Record<string, number> };
        expect(out.published).toBe(round === 0 ? 0 : 4);
        expect(r.stdout + r.stderr).not.toContain(SECRET_TEXT);
        expect(r.stdout + r.stderr).not.toContain('sess-proc');
        expect(r.stdout + r.stderr).not.toContain('k'.repeat(40));
      }
    }
    const chain = await verifyChain(outbox);
    expect(chain.ok).toBe(true);
    const seqs = chain.manifests.map((m) => m.manifest.seq);
    expect(seqs).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const objects = chain.manifests.flatMap((m) => m.manifest.objects);
    expect(new Set(objects).size).toBe(12);
    // A third round publishes nothing.
    const third = await Promise.all(exporters.map((e) => runExport(env(e))));
    for (const r of third) expect((JSON.parse(r.stdout) as { published: number }).published).toBe(0);
    expect((await verifyChain(outbox)).manifests.length).toBe(12);
  }, 120_000);
});
