import { type LedgerEvent } from '../domain/events.ts';
import { decodeEvent, type DecodeResult } from '../domain/event-wire.ts';
import { MemoryState } from '../domain/memory-state.ts';
import { isMuninnError } from '../domain/errors.ts';
import type { ProjectionStore, ProjectionTx, StateKeys } from '../ports/graph.ts';
import type { DeadLetter, LedgerMessage } from '../ports/ledger.ts';
import type { WrittenKeys } from './written-keys.ts';

/**
 * Applies one partition's batch: decode → (dead-letter what cannot be decoded) → in ONE graph
 * transaction: lock the checkpoint, skip what it already covers, load the state the events touch, fold,
 * write the effects and move the checkpoint. Redelivery is therefore a no-op and a crash at any point
 * leaves either all of a batch or none of it.
 */
export interface ApplyDeps {
  readonly store: ProjectionStore;
  readonly topic: string;
  readonly deadLetter: (d: DeadLetter) => Promise<void>;
  /** Bytes → event, opening sealed payloads (lifecycle/sealing.ts); without it a sealed event is dead-lettered. */
  readonly decode?: (bytes: Uint8Array) => Promise<DecodeResult>;
  /** A replay into an emptied graph (rebuild.ts): keys it never wrote cannot exist and are not loaded. */
  readonly written?: WrittenKeys;
  /** The rebuild's fence (rebuild.ts): its transactions pass it, every other projector's waits. */
  readonly fence?: string;
}

export interface ApplyResult {
  readonly applied: number;
  readonly skipped: number;
  readonly deadLettered: number;
  readonly lastOffset: string | null;
}

const k = (tenant: string, id: string): string => `${tenant}\u0000${id}`;

export async function applyBatch(
  deps: ApplyDeps,
  partition: number,
  messages: readonly LedgerMessage[],
): Promise<ApplyResult> {
  if (messages.length === 0) return { applied: 0, skipped: 0, deadLettered: 0, lastOffset: null };
  const decoded: Array<{ offset: bigint; event: LedgerEvent; bytes: Uint8Array | null }> = [];
  const dead: DeadLetter[] = [];
  const decode = deps.decode ?? ((b: Uint8Array) => Promise.resolve(decodeEvent(b)));
  const results = await decodeAll(messages, decode);
  for (const [i, m] of messages.entries()) {
    const r = results[i]!;
    if (r.ok) decoded.push({ offset: BigInt(m.offset), event: r.event, bytes: m.value });
    else
      dead.push({
        sourcePartition: partition,
        sourceOffset: m.offset,
        reason: r.reason,
        retryableAfterUpgrade: r.retryableAfterUpgrade,
        value: m.value,
      });
  }
  const lastOffset = BigInt(messages[messages.length - 1]!.offset);
  // Dead letters go out before the checkpoint passes them: a crash in between re-sends them (the DLQ key
  // is the source coordinate, so readers can tell), never loses them.
  const deadOffsets = new Set(dead.map((d) => d.sourceOffset));
  // Only a batch with dead letters needs the checkpoint here (a round trip the common case skips).
  const cp = dead.length > 0 ? await currentCheckpoint(deps, partition) : -1n;
  for (const d of dead) if (BigInt(d.sourceOffset) > cp) await deps.deadLetter(d);

  try {
    const res = await deps.store.projection((tx) => foldInto(tx, deps, partition, decoded, lastOffset));
    return {
      ...res,
      deadLettered: [...deadOffsets].filter((o) => BigInt(o) > cp).length,
      lastOffset: String(lastOffset),
    };
  } catch (e) {
    if (isMuninnError(e) && e.retryable) throw e;
    // A deterministic failure inside the batch: isolate it by applying one event at a time.
    return applyOneByOne(deps, partition, decoded, lastOffset, dead.length);
  }
}

/**
 * Decodes DECODE_AT_ONCE messages at a time, in order. One at a time, each await of the loop waited its
 * turn behind the whole event loop (the API's requests, in a process that serves both): under load that
 * was most of a batch's time (17 of 24 s in one measured run). The bound keeps a 2,000-event rebuild
 * batch from opening 2,000 key files at once.
 */
const DECODE_AT_ONCE = 64;

async function decodeAll(
  messages: readonly LedgerMessage[],
  decode: (bytes: Uint8Array) => Promise<DecodeResult>,
): Promise<DecodeResult[]> {
  const out: DecodeResult[] = [];
  for (let i = 0; i < messages.length; i += DECODE_AT_ONCE) {
    const chunk = messages.slice(i, i + DECODE_AT_ONCE).map((m) =>
      m.value
        ? decode(m.value)
        : Promise.resolve<DecodeResult>({
            ok: false,
            reason: 'empty message',
            retryableAfterUpgrade: false,
          }),
    );
    out.push(...(await Promise.all(chunk)));
  }
  return out;
}

async function currentCheckpoint(deps: ApplyDeps, partition: number): Promise<bigint> {
  const cps = await deps.store.checkpoints(deps.topic);
  const c = cps.find((x) => x.partition === partition);
  return c ? BigInt(c.offset) : -1n;
}

async function applyOneByOne(
  deps: ApplyDeps,
  partition: number,
  decoded: ReadonlyArray<{ offset: bigint; event: LedgerEvent; bytes: Uint8Array | null }>,
  lastOffset: bigint,
  deadCount: number,
): Promise<ApplyResult> {
  let applied = 0;
  let skipped = 0;
  let deadLettered = deadCount;
  for (const d of decoded) {
    try {
      const r = await deps.store.projection((tx) => foldInto(tx, deps, partition, [d], d.offset));
      applied += r.applied;
      skipped += r.skipped;
    } catch (e) {
      if (isMuninnError(e) && e.retryable) throw e;
      await deps.deadLetter({
        sourcePartition: partition,
        sourceOffset: String(d.offset),
        reason: `apply failed: ${e instanceof Error ? e.message : String(e)}`,
        retryableAfterUpgrade: true,
        // The message as it was on the ledger (sealed parts stay sealed), never the opened event.
        value: d.bytes,
      });
      deadLettered++;
      await deps.store.projection((tx) => foldInto(tx, deps, partition, [], d.offset));
    }
  }
  await deps.store.projection((tx) => foldInto(tx, deps, partition, [], lastOffset));
  return { applied, skipped, deadLettered, lastOffset: String(lastOffset) };
}

async function foldInto(
  tx: ProjectionTx,
  { topic, written, fence }: Pick<ApplyDeps, 'topic' | 'written' | 'fence'>,
  partition: number,
  decoded: ReadonlyArray<{ offset: bigint; event: LedgerEvent }>,
  lastOffset: bigint,
): Promise<{ applied: number; skipped: number }> {
  // Each round trip of a batch waits its turn on a busy event loop and a busy database (~12 ms each
  // under the bench's load, seven of them a batch): so the statements go out together where their order
  // alone is what they need. The lock is sent first and the loads right behind it, so the reads run
  // under the lock; the events it proves applied already were loaded for nothing, and nothing of theirs
  // is written (the fold writes only what it changed).
  const [cp, loaded] = await Promise.all([
    tx.lockCheckpoint(topic, partition, fence),
    decoded.length > 0 ? loadWithTargets(tx, keysOf(decoded.map((d) => d.event)), written) : null,
  ]);
  const todo = decoded.filter((d) => d.offset > cp);
  const skipped = decoded.length - todo.length;
  const sent: Array<Promise<void>> = [];
  if (todo.length > 0 && loaded) {
    const state = new MemoryState(loaded);
    for (const { event } of todo) state.apply(event);
    const changes = state.changes();
    written?.note(changes);
    sent.push(tx.write(changes));
  }
  if (lastOffset > cp) sent.push(tx.setCheckpoint(topic, partition, lastOffset));
  await Promise.all(sent);
  return { applied: todo.length, skipped };
}

function keysOf(events: readonly LedgerEvent[]): StateKeys {
  const records = new Map<string, { tenant: string; id: string }>();
  const entities = new Map<string, { tenant: string; id: string }>();
  const receipts = new Map<string, { tenant: string; idempotencyKey: string }>();
  const episodes = new Map<string, { tenant: string; id: string }>();
  const grants = new Map<string, { tenant: string; id: string }>();
  const holds = new Map<string, { tenant: string; id: string }>();
  const findings = new Map<string, { tenant: string; id: string }>();
  const rec = (tenant: string, id: string) => records.set(k(tenant, id), { tenant, id });
  for (const e of events) {
    receipts.set(k(e.tenant, e.idempotencyKey), { tenant: e.tenant, idempotencyKey: e.idempotencyKey });
    if ('recordId' in e.payload && e.payload.recordId) rec(e.tenant, e.payload.recordId);
    if (e.type === 'HoldPlaced' || e.type === 'HoldReleased')
      holds.set(k(e.tenant, e.payload.holdId), { tenant: e.tenant, id: e.payload.holdId });
    if (e.type === 'FindingRaised' || e.type === 'FindingResolved')
      findings.set(k(e.tenant, e.payload.findingId), { tenant: e.tenant, id: e.payload.findingId });
    if (e.type === 'RecordProposed' && e.payload.relation) rec(e.tenant, e.payload.relation.target);
    if (e.type === 'RecordRelated') {
      if (e.payload.targetKind === 'RECORD') rec(e.tenant, e.payload.target);
      else entities.set(k(e.tenant, e.payload.target), { tenant: e.tenant, id: e.payload.target });
    }
    if (e.type === 'RecordProposed') {
      for (const id of e.payload.derivedFrom) rec(e.tenant, id);
      for (const id of e.payload.about) entities.set(k(e.tenant, id), { tenant: e.tenant, id });
    }
    if (e.type === 'RolledBack')
      for (const x of [...e.payload.compensations, ...e.payload.taints]) rec(e.tenant, x.recordId);
    if (e.type === 'RecordRetracted') for (const x of e.payload.taints) rec(e.tenant, x.recordId);
    if (e.type === 'EntityCreated') {
      entities.set(k(e.tenant, e.payload.entityId), { tenant: e.tenant, id: e.payload.entityId });
      if (e.payload.sameAs)
        entities.set(k(e.tenant, e.payload.sameAs.entityId), {
          tenant: e.tenant,
          id: e.payload.sameAs.entityId,
        });
    }
    if (e.type === 'AccessGranted' || e.type === 'AccessRevoked')
      grants.set(k(e.tenant, e.payload.grantId), { tenant: e.tenant, id: e.payload.grantId });
    if (e.type === 'EpisodeStored')
      episodes.set(k(e.tenant, e.payload.episodeId), { tenant: e.tenant, id: e.payload.episodeId });
    if (e.type === 'Erased') {
      const into = { RECORD: records, ENTITY: entities, EPISODE: episodes }[e.payload.target];
      into.set(k(e.tenant, e.payload.id), { tenant: e.tenant, id: e.payload.id });
    }
  }
  return {
    records: [...records.values()],
    entities: [...entities.values()],
    receipts: [...receipts.values()],
    episodes: [...episodes.values()],
    grants: [...grants.values()],
    holds: [...holds.values()],
    findings: [...findings.values()],
  };
}

/** Loads the keys, then the targets of the loaded records' relations (an approval activates them). */
async function loadWithTargets(tx: ProjectionTx, keys: StateKeys, written?: WrittenKeys) {
  const load = (k: StateKeys) => tx.load(written ? written.mayExist(k) : k);
  const first = await load(keys);
  const have = new Set(first.records.map((r) => k(r.tenant, r.id)));
  const targets = new Map<string, { tenant: string; id: string }>();
  for (const r of first.records) {
    for (const rel of r.relations)
      if ((rel.targetKind ?? 'RECORD') === 'RECORD' && !have.has(k(r.tenant, rel.target)))
        targets.set(k(r.tenant, rel.target), { tenant: r.tenant, id: rel.target });
  }
  if (targets.size === 0) return first;
  const more = await load({
    records: [...targets.values()],
    entities: [],
    receipts: [],
    episodes: [],
    grants: [],
    holds: [],
    findings: [],
  });
  return { ...first, records: [...first.records, ...more.records] };
}
