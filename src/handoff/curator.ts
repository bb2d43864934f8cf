/**
 * `muninn curate` — takes the next manifest through the handoff contract and turns its windows into
 * CANDIDATE drafts through the ingest pipeline, then commits the checkpoint.
 *
 * Order: checkpoint → next verified manifest → lease on it → for each object: read the window (only a
 * verified manifest's objects can be read), ingest it as an episode whose idempotency key is derived from
 * the object id, wait until every draft is persisted → commit seq N+1 with the manifest's hash and the
 * lease. A failure anywhere before the commit leaves the checkpoint where it was; the retry re-ingests
 * with the same keys, so no draft is created twice. Nothing here logs transcript text.
 */
import { z } from 'zod';
import { MuninnError } from '../domain/errors.ts';
import type { Logger } from '../ports/logger.ts';
import type { HandoffService } from './contract.ts';
import { WINDOW_SCHEMA } from './minimize.ts';

/**
 * What the curator needs of the handoff contract: `muninn curate` uses a GraphQL client of /handoff
 * (src/client/handoff.ts); the HandoffService itself fits too. Only the fields the curator reads.
 */
export interface HandoffPort {
  checkpoint(): Promise<{ readonly seq: number }>;
  manifests(input: { after?: number; first?: number }): Promise<{
    readonly items: ReadonlyArray<{
      readonly seq: number;
      readonly hash: string;
      readonly objects: readonly string[];
    }>;
  }>;
  acquireLease(input: Parameters<HandoffService['acquireLease']>[0]): Promise<{ readonly leaseId: string }>;
  renewLease(input: Parameters<HandoffService['renewLease']>[0]): Promise<{ readonly leaseId: string }>;
  window(objectId: string): Promise<{ readonly content: string }>;
  commit(
    input: Parameters<HandoffService['commit']>[0],
  ): Promise<{ readonly seq: number; readonly repeated: boolean }>;
}

/** An ingest receipt as far as the curator cares: PENDING means "not persisted yet". */
export interface IngestReceipt {
  readonly outcome: string;
  readonly recordId: string | null;
}

export interface EpisodeDraft {
  readonly namespace: string;
  readonly source: string;
  readonly occurredAt: string;
  readonly turns: ReadonlyArray<{ role: string; text: string; label: string }>;
  readonly purpose: string;
  readonly idempotencyKey: string;
  readonly changesetId: string;
  readonly review: true;
}

export interface CuratorDeps {
  readonly handoff: HandoffPort;
  /**
   * Ingests one episode and waits for its projection: the main API's ingestEpisode with `await: true`
   * under the curator's own token (src/client/handoff.ts), or the WriteService bound to a principal.
   */
  readonly ingest: (episode: EpisodeDraft) => Promise<readonly IngestReceipt[]>;
  readonly holder: string;
  /** Root namespace; each window lands in `<root>/<source>/<owner pseudonym>`. */
  readonly namespace: string;
  readonly logger: Logger;
  readonly leaseTtlMs?: number;
}

export type CurateOutcome =
  | { kind: 'idle'; checkpoint: number }
  | { kind: 'committed'; seq: number; windows: number; drafts: number; repeated: boolean };

const Window = z.object({
  schema: z.literal(WINDOW_SCHEMA),
  source: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/),
  ownerRef: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  sessionRef: z.string().min(1),
  messages: z
    .array(
      z.object({
        ref: z.string().min(1).max(200),
        role: z.enum(['user', 'assistant']),
        text: z.string(),
        at: z.string(),
      }),
    )
    .min(1),
  window: z.object({ firstAt: z.string(), lastAt: z.string(), count: z.number() }),
});

/** The episode a window becomes: pure, so the idempotency key and namespace are fixed by the object. */
export function episodeOf(objectId: string, seq: number, content: string, root: string): EpisodeDraft {
  const parsed = Window.safeParse(JSON.parse(content));
  if (!parsed.success)
    throw new MuninnError('BAD_USER_INPUT', `window ${objectId} is not a transcript window`);
  const w = parsed.data;
  return {
    namespace: `${root}/${w.source}/${w.ownerRef.toLowerCase().slice(0, 62)}`,
    source: `handoff:${w.source}`,
    occurredAt: new Date(w.window.lastAt).toISOString(),
    turns: w.messages.map((m) => ({ role: m.role, text: m.text, label: m.ref })),
    purpose: 'handoff',
    idempotencyKey: `handoff:${objectId}`,
    changesetId: `handoff:seq:${seq}`,
    review: true,
  };
}

/** One step: process the next manifest, if there is one. Throws (checkpoint unchanged) on any failure. */
export async function curateNext(d: CuratorDeps): Promise<CurateOutcome> {
  const cp = await d.handoff.checkpoint();
  const page = await d.handoff.manifests({ after: cp.seq, first: 1 });
  const manifest = page.items[0];
  if (!manifest) return { kind: 'idle', checkpoint: cp.seq };
  const ttlMs = d.leaseTtlMs ?? 60_000;
  let lease = await d.handoff.acquireLease({ holder: d.holder, seq: manifest.seq, ttlMs });
  let drafts = 0;
  for (const objectId of manifest.objects) {
    const w = await d.handoff.window(objectId);
    const receipts = await d.ingest(episodeOf(objectId, manifest.seq, w.content, d.namespace));
    const pending = receipts.filter((r) => r.outcome === 'PENDING').length;
    if (pending > 0)
      throw new MuninnError('UNAVAILABLE', `window ${objectId}: ${pending} drafts not yet persisted`, {}, {});
    drafts += receipts.filter((r) => r.recordId !== null).length;
    lease = await d.handoff.renewLease({ leaseId: lease.leaseId, holder: d.holder, ttlMs });
  }
  const done = await d.handoff.commit({
    seq: manifest.seq,
    manifestHash: manifest.hash,
    leaseId: lease.leaseId,
  });
  d.logger.info(
    { op: 'curate', seq: done.seq, windows: manifest.objects.length, drafts, repeated: done.repeated },
    'curated',
  );
  return {
    kind: 'committed',
    seq: done.seq,
    windows: manifest.objects.length,
    drafts,
    repeated: done.repeated,
  };
}

/** Curate until no manifest is left (or `max` steps). */
export async function curateAll(d: CuratorDeps, max = Number.MAX_SAFE_INTEGER): Promise<CurateOutcome[]> {
  const out: CurateOutcome[] = [];
  for (let i = 0; i < max; i++) {
    const r = await curateNext(d);
    out.push(r);
    if (r.kind === 'idle') break;
  }
  return out;
}
