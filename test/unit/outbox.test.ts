import { nodeTextFiles } from '../../src/adapters/files/text-files.ts';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileSessionSource } from '../../src/handoff/file-source.ts';
import { fileObservationStore, memoryObservationStore } from '../../src/handoff/observation-file.ts';
import type { PublishStep } from '../../src/ports/outbox.ts';
import { exportOnce, verifyChain, type ExportConfig, type ExporterDeps } from '../support/outbox-dir.ts';
import type { SessionSource, SessionSummary } from '../../src/handoff/ports.ts';
import { createPseudonymizer } from '../../src/handoff/pseudonym.ts';
import { qualify } from '../../src/handoff/qualify.ts';
import { containsSecret } from '../../src/ingest/screen.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hermes');
const KEY = { keyId: 'k-test-1', secret: Buffer.alloc(32, 7) };
const MIN = 60_000;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'muninn-export-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const config = (over: Partial<ExportConfig> = {}): ExportConfig => ({
  outboxDir: join(dir, 'outbox'),
  allowlist: [
    { source: 'signal', owner: 'owner-alice' },
    { source: 'webui', owner: 'owner-webui-canary' },
  ],
  quietPeriodMs: 10 * MIN,
  selectedWebUiSessions: ['sess-webui-0001'],
  ...over,
});

function clockAt(iso: string): { now(): Date; set(iso: string): void } {
  let t = new Date(iso);
  return { now: () => new Date(t), set: (s) => void (t = new Date(s)) };
}

const loadFixture = async (name: string): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(join(FIXTURES, name), 'utf8')) as Record<string, unknown>;

/** In-memory source over mutable session objects, recording which ids were fetched. */
function memorySource(sessions: Record<string, unknown>[]): SessionSource & { fetched: string[] } {
  const fetched: string[] = [];
  return {
    fetched,
    listSessions: () =>
      Promise.resolve(
        sessions.map((s): SessionSummary => ({
          id: s.id as string,
          source: s.source as string,
          owner: s.owner as string,
          revision: s.revision as string,
        })),
      ),
    getSession: (id) => {
      fetched.push(id);
      return Promise.resolve(structuredClone(sessions.find((s) => s.id === id)));
    },
  };
}

const names = async (sub: string): Promise<string[]> => {
  try {
    return (await readdir(join(dir, 'outbox', sub))).filter((n) => !n.startsWith('.')).sort();
  } catch {
    return [];
  }
};
const readObjects = async (): Promise<string[]> =>
  Promise.all((await names('objects')).map((n) => readFile(join(dir, 'outbox', 'objects', n), 'utf8')));

describe('exporter canaries (twice-observed quiescent window)', () => {
  it('first observation publishes nothing, second publishes one object + manifest, third nothing, a later exchange only the new window', async () => {
    const stable = await loadFixture('signal-stable.json');
    const source = memorySource([stable]);
    const clock = clockAt('2025-03-01T12:00:00Z');
    const statePath = join(dir, 'state', 'observations.json');
    const deps = (): ExporterDeps => ({
      source,
      store: fileObservationStore(statePath, nodeTextFiles), // fresh adapter each run: state must persist on disk
      clock,
      detectSecret: containsSecret,
      key: KEY,
    });

    const r1 = await exportOnce(deps(), config());
    expect(r1).toMatchObject({ published: 0, deferred: 1, reasons: { FIRST_OBSERVATION: 1 } });
    expect(await names('objects')).toEqual([]);
    expect(await names('manifests')).toEqual([]);

    clock.set('2025-03-01T12:05:00Z');
    const r2 = await exportOnce(deps(), config());
    expect(r2).toMatchObject({ published: 1, manifests: [{ seq: 1, created: true }] });
    expect(await names('objects')).toHaveLength(1);
    expect(await names('manifests')).toEqual(['000000000001.json']);

    clock.set('2025-03-01T12:10:00Z');
    const r3 = await exportOnce(deps(), config());
    expect(r3).toMatchObject({ published: 0, unchanged: 1, reasons: { NOTHING_NEW: 1 } });
    expect(await names('objects')).toHaveLength(1);
    expect(await names('manifests')).toHaveLength(1);

    // A later exchange: new revision, two new messages.
    const msgs = stable.messages as Record<string, unknown>[];
    msgs.push(
      {
        id: 'msg-user-0002',
        role: 'user',
        content: 'And what about roses?',
        created_at: '2025-03-01T12:20:00Z',
      },
      {
        id: 'msg-asst-0003',
        role: 'assistant',
        content: 'Prune roses in late winter.',
        created_at: '2025-03-01T12:21:00Z',
        final: true,
      },
    );
    stable.revision = 'rev-0001-b';
    stable.updated_at = '2025-03-01T12:21:00Z';
    clock.set('2025-03-01T12:25:00Z');
    expect((await exportOnce(deps(), config())).reasons).toEqual({ NOT_QUIET: 1 });
    clock.set('2025-03-01T12:40:00Z');
    expect((await exportOnce(deps(), config())).reasons).toEqual({ FIRST_OBSERVATION: 1 });
    clock.set('2025-03-01T12:45:00Z');
    const r4 = await exportOnce(deps(), config());
    expect(r4).toMatchObject({ published: 1, manifests: [{ seq: 2, created: true }] });

    const chain = await verifyChain(join(dir, 'outbox'));
    expect(chain.ok).toBe(true);
    if (!chain.ok) return;
    const [first, second] = await Promise.all(
      chain.manifests.map(
        async (m) =>
          JSON.parse(
            await readFile(join(dir, 'outbox', 'objects', `${m.manifest.objects[0]}.json`), 'utf8'),
          ) as {
            messages: { ref: string; role: string; text: string }[];
            after: string | null;
            sessionRef: string;
          },
      ),
    );
    expect(first!.messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'What should we plan for the garden this spring?'],
      ['assistant', 'Plant tomatoes after the last frost and start herbs indoors now.'],
    ]);
    expect(second!.messages.map((m) => m.text)).toEqual([
      'And what about roses?',
      'Prune roses in late winter.',
    ]);
    expect(second!.after).toBe(first!.messages[1]!.ref);
    expect(second!.sessionRef).toBe(first!.sessionRef);
    expect(chain.manifests[1]!.manifest.prev).toBe(chain.manifests[0]!.hash);

    // The persisted state holds pseudonyms only.
    const state = await readFile(statePath, 'utf8');
    expect(state).not.toMatch(/sess-signal|msg-|owner-alice|garden/);
  });

  it('any change between observations resets the count', async () => {
    const stable = await loadFixture('signal-stable.json');
    const clock = clockAt('2025-03-01T12:00:00Z');
    const store = memoryObservationStore();
    const deps: ExporterDeps = {
      source: memorySource([stable]),
      store,
      clock,
      detectSecret: containsSecret,
      key: KEY,
    };
    expect((await exportOnce(deps, config())).reasons).toEqual({ FIRST_OBSERVATION: 1 });
    stable.title = 'renamed'; // even a dropped field changes what was observed
    expect((await exportOnce(deps, config())).reasons).toEqual({ REVISION_CHANGED: 1 });
    expect((await exportOnce(deps, config())).published).toBe(1);
  });

  it('a non-qualifying observation in between resets the candidate', async () => {
    const stable = await loadFixture('signal-stable.json');
    const clock = clockAt('2025-03-01T12:00:00Z');
    const sessions: Record<string, unknown>[] = [stable];
    const source = memorySource(sessions);
    const deps: ExporterDeps = {
      source,
      store: memoryObservationStore(),
      clock,
      detectSecret: containsSecret,
      key: KEY,
    };
    await exportOnce(deps, config());
    sessions[0] = { ...stable, messages: 'garbage' };
    expect((await exportOnce(deps, config())).reasons).toEqual({ MALFORMED: 1 });
    sessions[0] = stable;
    expect((await exportOnce(deps, config())).reasons).toEqual({ FIRST_OBSERVATION: 1 });
    expect((await exportOnce(deps, config())).published).toBe(1);
  });
});

describe('fixture directory: deferred and rejected windows leave no output', () => {
  it('publishes only the stable Signal and the selected WebUI session; everything else is deferred or rejected', async () => {
    // The fixtures plus one file that is not even JSON (kept out of the repo so formatters stay happy).
    const fixtures = join(dir, 'fixtures');
    await cp(FIXTURES, fixtures, { recursive: true });
    await writeFile(
      join(fixtures, 'broken-json.json'),
      '{"id": "sess-signal-0009", "source": "signal", "messages": [',
    );
    const source = fileSessionSource(fixtures, nodeTextFiles);
    const fetched: string[] = [];
    const spy: SessionSource = {
      listSessions: () => source.listSessions(),
      getSession: (id) => {
        fetched.push(id);
        return source.getSession(id);
      },
    };
    const clock = clockAt('2025-03-01T12:00:00Z');
    const deps: ExporterDeps = {
      source: spy,
      store: memoryObservationStore(),
      clock,
      detectSecret: containsSecret,
      key: KEY,
    };
    const first = await exportOnce(deps, config());
    expect(first.published).toBe(0);
    expect(await names('objects')).toEqual([]);
    clock.set('2025-03-01T12:01:00Z');
    const second = await exportOnce(deps, config());
    expect(second).toMatchObject({ considered: 10, published: 2 });
    expect(second.reasons).toEqual({
      NOT_QUIET: 1,
      MALFORMED: 1,
      UNKNOWN_SOURCE: 1,
      NOT_ALLOWLISTED: 1,
      PENDING_TOOL_CALL: 1,
      SECRET_DETECTED: 2,
      WEBUI_NOT_SELECTED: 1,
    });
    expect(second.rejected).toBe(4);
    expect(second.deferred).toBe(4);
    // Non-allowlisted and unselected WebUI sessions are never even fetched.
    expect(fetched).not.toContain('sess-signal-0004');
    expect(fetched).not.toContain('sess-webui-0002');
    expect(await names('objects')).toHaveLength(2);
    expect(await names('manifests')).toHaveLength(2);
    expect((await verifyChain(join(dir, 'outbox'))).ok).toBe(true);

    const all = (await readObjects()).join('\n');
    for (const forbidden of [
      'SYNTH-SYSTEM-PROMPT',
      'SYNTH-REASONING',
      'SYNTH_TOOL',
      'SYNTH-TOOL-RESULT',
      'call-0001',
      '/home/',
      '/etc/',
      '/srv/',
      'SYNTH-ATTACHMENT',
      'SYNTHBINARY',
      'SYNTH-TITLE',
      'SYNTH-ACCOUNT',
      'synth-model-config',
      '+1555',
      'sess-',
      'msg-',
      'rev-',
      'owner-',
      'access_token',
      'SYNTHFAKE',
      'synth-not-a-password',
      'example.invalid',
      'Unselected WebUI',
      'dentist',
      'archive it',
      'Please export everything',
    ]) {
      expect(all, forbidden).not.toContain(forbidden);
    }
    expect(all).not.toContain(Buffer.from(KEY.secret).toString('hex'));
    expect(JSON.stringify(second)).not.toMatch(/garden|sess-|owner-/); // outcome: counts and ids only
  });

  it('the secondary detectors catch both credential URL fixtures', async () => {
    for (const f of ['signal-credential-url.json', 'signal-userinfo-url.json']) {
      const s = await loadFixture(f);
      const text = (s.messages as { content: string }[])[0]!.content;
      expect(containsSecret(text), f).toBe(true);
    }
    // Even with a detector that misses everything, the built-in credential-URL floor rejects the window.
    const s = await loadFixture('signal-credential-url.json');
    const deps: ExporterDeps = {
      source: memorySource([s]),
      store: memoryObservationStore(),
      clock: clockAt('2025-03-01T12:00:00Z'),
      detectSecret: () => false,
      key: KEY,
    };
    expect((await exportOnce(deps, config())).reasons).toEqual({ SECRET_DETECTED: 1 });
    expect((await exportOnce(deps, config())).reasons).toEqual({ SECRET_DETECTED: 1 });
    expect(await names('objects')).toEqual([]);
  });
});

describe('pseudonyms', () => {
  it('are keyed, stable, domain-separated and carry the key id', async () => {
    const raw = await loadFixture('signal-stable.json');
    const run = (keyByte: number, keyId: string) => {
      const pseudo = createPseudonymizer({ keyId, secret: Buffer.alloc(32, keyByte) });
      return { pseudo, d: qualifyTwice(raw, pseudo) };
    };
    const a = run(1, 'k1');
    const b = run(2, 'k2');
    expect(a.d.sessionRef).toMatch(/^[0-9a-f]{64}$/);
    expect(a.d.keyId).toBe('k1');
    expect(a.d.sessionRef).not.toBe(b.d.sessionRef);
    expect(a.pseudo.ref('session', 'signal', 'x')).not.toBe(a.pseudo.ref('message', 'signal', 'x'));
    expect(a.pseudo.ref('session', 'signal', 'x')).toBe(run(1, 'k1').pseudo.ref('session', 'signal', 'x'));
    expect(() => createPseudonymizer({ keyId: 'short', secret: Buffer.alloc(8) })).toThrow();
  });

  it('refuses to continue observation state written under another key id', async () => {
    const store = memoryObservationStore({ version: 1, keyId: 'old', sessions: {} });
    const deps: ExporterDeps = {
      source: memorySource([]),
      store,
      clock: clockAt('2025-03-01T12:00:00Z'),
      detectSecret: containsSecret,
      key: KEY,
    };
    await expect(exportOnce(deps, config())).rejects.toThrow(/key id/);
  });
});

describe('crash during export', () => {
  it.each<[PublishStep, 'object' | 'manifest']>([
    ['temp-synced', 'object'],
    ['linked', 'object'],
    ['temp-synced', 'manifest'],
    ['linked', 'manifest'],
    ['temp-removed', 'manifest'],
  ])('a crash after %s (%s) is retried into exactly one object and one manifest', async (step, record) => {
    const stable = await loadFixture('signal-stable.json');
    const clock = clockAt('2025-03-01T12:00:00Z');
    const store = memoryObservationStore();
    const base: ExporterDeps = {
      source: memorySource([stable]),
      store,
      clock,
      detectSecret: containsSecret,
      key: KEY,
    };
    await exportOnce(base, config());
    const crashed = await exportOnce(
      {
        ...base,
        hooks: {
          afterStep(s, r) {
            if (s === step && r === record) throw new Error('crash');
          },
        },
      },
      config(),
    );
    expect(crashed).toMatchObject({ published: 0, failed: 1, reasons: { PUBLISH_FAILED: 1 } });
    expect((await verifyChain(join(dir, 'outbox'))).ok).toBe(true);
    const retry = await exportOnce(base, config());
    expect(retry.published).toBe(1);
    expect(await names('objects')).toHaveLength(1);
    expect(await names('manifests')).toEqual(['000000000001.json']);
    expect((await exportOnce(base, config())).reasons).toEqual({ NOTHING_NEW: 1 });
  });
});

function qualifyTwice(raw: unknown, pseudo: ReturnType<typeof createPseudonymizer>) {
  const summary = { id: 'sess-signal-0001', source: 'signal', owner: 'owner-alice' };
  const base = {
    raw,
    summary,
    now: new Date('2025-03-01T12:00:00Z'),
    config: config(),
    pseudo,
    detectSecret: containsSecret,
  };
  const first = qualify({ ...base, prior: null });
  const second = qualify({ ...base, prior: first.next });
  if (second.kind !== 'qualify') throw new Error(second.reason);
  return { keyId: pseudo.keyId, sessionRef: pseudo.ref('session', 'signal', second.session.id) };
}
