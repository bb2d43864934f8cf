/**
 * The Muninn side of the Heimdall-only handoff contract over one outbox (a "stream").
 *
 *   health        readiness and operations metadata — never transcript content
 *   manifests     trusted manifests after a sequence (chain verified from genesis, anchored at the checkpoint)
 *   window        one object, only if a trusted manifest names it and its bytes hash to its id
 *   acquireLease / renewLease   bounded ownership of the next sequence (lease state only)
 *   checkpoint    the committed sequence and manifest hash
 *   commit        exact-next compare-and-swap of the checkpoint (checkpoint state only)
 *
 * The outbox is read through `OutboxReader`, which has no write operation; `outboxReader` builds it over the
 * outbox port's read side (`OutboxRecords`), which only opens, reads and lists (it never creates the outbox).
 * State changes go through `HandoffStateStore.transact` with the pure decisions of state.ts. Refusals are
 * typed: malformed or oversized input BAD_USER_INPUT (details.reason 'oversized' | 'invalid'), an unreadable
 * object NOT_FOUND (whether it exists or not), everything else CONFLICT with a stable `details.reason` (see
 * HandoffConflictReason).
 *
 * Authorization is the surface's job: call `requireHandoffCaller` before any operation.
 *
 * Cost: every operation that needs the chain re-verifies it from genesis, objects included (no cache, so a
 * tampered record is noticed on the next call).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  badInput,
  conflict,
  forbidden,
  notFound,
  unauthenticated,
  type ErrorDetails,
} from '../domain/errors.ts';
import { hasScope, type Principal } from '../domain/principal.ts';
import type { Clock, IdSource } from '../ports/clock.ts';
import { silentLogger, type Logger } from '../ports/logger.ts';
import type { BoundedRead, OutboxRecords } from '../ports/outbox.ts';
import { countRecords, readObjectBounded, verifyChain, type ChainBreak, type ChainResult } from './outbox.ts';
import {
  LEASE_TTL,
  decideAcquire,
  decideCommit,
  decideRenew,
  trustChain,
  type CommitOutcome,
  type Decision,
  type HandoffConflictReason,
  type HandoffState,
  type HandoffStateStore,
  type LeaseGrant,
  type TrustedChain,
} from './state.ts';

/** Read-only port over an outbox. */
export interface OutboxReader {
  /** Full verification from genesis (links, canonical bytes, every named object's hash). */
  verify(): Promise<ChainResult>;
  readObject(id: string, maxBytes: number): Promise<BoundedRead>;
  counts(): Promise<{ manifests: number; objects: number }>;
}

export const outboxReader = (records: OutboxRecords): OutboxReader => ({
  verify: () => verifyChain(records),
  readObject: (id, maxBytes) => readObjectBounded(records, id, maxBytes),
  counts: () => countRecords(records),
});

export interface HandoffLimits {
  /** Upper bound (and default) of `first` in a manifest listing. */
  maxManifests: number;
  /** Largest object a window read returns. */
  maxObjectBytes: number;
}
export const DEFAULT_HANDOFF_LIMITS: HandoffLimits = { maxManifests: 100, maxObjectBytes: 1024 * 1024 };
/** Longest accepted holder or lease id. */
export const MAX_ID_LENGTH = 128;

export interface HandoffServiceDeps {
  stream: string;
  outbox: OutboxReader;
  store: HandoffStateStore;
  clock: Clock;
  /** Source of lease ids (default: crypto.randomUUID). */
  ids?: IdSource;
  limits?: Partial<HandoffLimits>;
  /** Receives reason codes and sequence numbers only. */
  log?: Logger;
}

export interface ChainStatus {
  verified: boolean;
  /** Highest trusted sequence. */
  trustedHead: number;
  break: { seq: number; reason: ChainBreak } | null;
}

export interface HandoffHealth {
  stream: string;
  status: 'ok' | 'degraded';
  checkedAt: string;
  chain: ChainStatus;
  checkpoint: { seq: number; committedAt: string | null; ageMs: number | null };
  /** Trusted manifests not yet committed. */
  backlog: number;
  /**
   * Age of the oldest trusted, uncommitted manifest (from its createdAt). The age of content not yet
   * published lives in the exporter's observation state and is not derivable here.
   */
  oldestPendingAgeMs: number | null;
  lease: { seq: number; expiresAt: string; live: boolean } | null;
  leaseConflicts: number;
  checkpointConflicts: number;
  leaseExpiries: number;
  records: { manifestFiles: number; objectFiles: number; namedObjects: number };
}

export interface ManifestInfo {
  seq: number;
  hash: string;
  prev: string | null;
  objects: string[];
  createdAt: string;
}

export interface ManifestPage {
  items: ManifestInfo[];
  /** More trusted manifests follow the page. */
  hasMore: boolean;
  trustedHead: number;
  /** Set when the chain breaks after the returned items; the listing never passes it. */
  chainBreak: { seq: number; reason: ChainBreak } | null;
}

export interface WindowRead {
  objectId: string;
  /** First trusted manifest naming the object. */
  seq: number;
  /** The stored canonical JSON, exactly the bytes that hash to objectId. */
  content: string;
  size: number;
}

export interface CheckpointView {
  seq: number;
  manifestHash: string | null;
  committedAt: string | null;
}

// ---------------------------------------------------------------------------------------------------------
// Input validation

const HEX64 = /^[0-9a-f]{64}$/;
const id = z
  .string()
  .min(1)
  .max(MAX_ID_LENGTH)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII');
const hash = z.string().max(64).regex(HEX64, 'lowercase hex SHA-256');
const seq = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const ttlMs = z.number().int().min(LEASE_TTL.minMs).max(LEASE_TTL.maxMs).optional();

const AcquireInput = z.strictObject({ holder: id, seq, ttlMs });
const RenewInput = z.strictObject({ leaseId: id, holder: id, ttlMs });
const CommitInput = z.strictObject({ seq, manifestHash: hash, leaseId: id });

function parse<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw badInput('invalid handoff request', {
    field: issue?.path.join('.') ?? '',
    reason: issue?.code === 'too_big' ? 'oversized' : 'invalid',
  });
}

// ---------------------------------------------------------------------------------------------------------

/** Only Heimdall's explicitly granted `handoff` scope may use the contract (admin does not imply it). */
export function requireHandoffCaller(principal: Principal | null | undefined): Principal {
  if (!principal) throw unauthenticated();
  if (!hasScope(principal, 'handoff'))
    throw forbidden('the handoff contract is reserved for the handoff caller');
  return principal;
}

export class HandoffService {
  private readonly stream: string;
  private readonly outbox: OutboxReader;
  private readonly store: HandoffStateStore;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly limits: HandoffLimits;
  private readonly log: Logger;

  constructor(deps: HandoffServiceDeps) {
    const limits = { ...DEFAULT_HANDOFF_LIMITS, ...deps.limits };
    for (const [k, v] of Object.entries(limits))
      if (!Number.isSafeInteger(v) || v < 1)
        throw new Error(`handoff: limit ${k} must be a positive integer`);
    if (!deps.stream) throw new Error('handoff: stream is required');
    this.stream = deps.stream;
    this.outbox = deps.outbox;
    this.store = deps.store;
    this.clock = deps.clock;
    this.ids = deps.ids ?? { uuid: () => randomUUID() };
    this.limits = limits;
    this.log = (deps.log ?? silentLogger).child({ component: 'handoff', stream: deps.stream });
  }

  async health(): Promise<HandoffHealth> {
    const now = this.clock.now();
    const [state, raw, counts] = await Promise.all([
      this.store.read(this.stream),
      this.outbox.verify(),
      this.outbox.counts(),
    ]);
    const chain = trustChain(raw, state.checkpoint);
    const cp = state.checkpoint;
    const pending = chain.entries[cp.seq];
    const ageOf = (iso: string | null | undefined): number | null =>
      iso ? Math.max(0, now.getTime() - Date.parse(iso)) : null;
    return {
      stream: this.stream,
      status: chain.break ? 'degraded' : 'ok',
      checkedAt: now.toISOString(),
      chain: chainStatus(chain),
      checkpoint: { seq: cp.seq, committedAt: cp.committedAt, ageMs: ageOf(cp.committedAt) },
      backlog: Math.max(0, chain.head - cp.seq),
      oldestPendingAgeMs: ageOf(pending?.manifest.createdAt),
      lease: state.lease
        ? {
            seq: state.lease.seq,
            expiresAt: state.lease.expiresAt,
            live: now.getTime() < Date.parse(state.lease.expiresAt),
          }
        : null,
      leaseConflicts: state.leaseConflicts,
      checkpointConflicts: state.checkpointConflicts,
      leaseExpiries: state.leaseExpiries,
      records: {
        manifestFiles: counts.manifests,
        objectFiles: counts.objects,
        namedObjects: new Set(chain.entries.flatMap((e) => e.manifest.objects)).size,
      },
    };
  }

  /** Trusted manifests with seq > `after` (default: the committed checkpoint), at most `first`. */
  async manifests(input: { after?: number; first?: number } = {}): Promise<ManifestPage> {
    const { after, first } = parse(
      z.strictObject({
        after: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
        first: z.number().int().min(1).max(this.limits.maxManifests).optional(),
      }),
      input,
    );
    const { state, chain } = await this.trusted();
    const from = after ?? state.checkpoint.seq;
    const take = first ?? this.limits.maxManifests;
    const rest = chain.entries.filter((e) => e.seq > from);
    if (chain.break && rest.length === 0) throw this.chainBroken(chain);
    const items = rest.slice(0, take).map((e): ManifestInfo => ({
      seq: e.seq,
      hash: e.hash,
      prev: e.manifest.prev,
      objects: [...e.manifest.objects],
      createdAt: e.manifest.createdAt,
    }));
    return { items, hasMore: rest.length > take, trustedHead: chain.head, chainBreak: chain.break };
  }

  /** One object named by a trusted manifest; NOT_FOUND for anything else, without revealing existence. */
  async window(objectId: string): Promise<WindowRead> {
    const { objectId: oid } = parse(z.strictObject({ objectId: hash }), { objectId });
    const { chain } = await this.trusted();
    const named = chain.entries.find((e) => e.manifest.objects.includes(oid));
    if (!named) throw notFound('no such transcript window');
    const read = await this.outbox.readObject(oid, this.limits.maxObjectBytes);
    if (!read.ok) {
      if (read.reason === 'too-large')
        throw this.refusal('object-too-large', { seq: named.seq, limit: this.limits.maxObjectBytes });
      throw notFound('no such transcript window');
    }
    return { objectId: oid, seq: named.seq, content: read.bytes.toString('utf8'), size: read.bytes.length };
  }

  async acquireLease(input: { holder: string; seq: number; ttlMs?: number }): Promise<LeaseGrant> {
    const req = parse(AcquireInput, input);
    const leaseId = this.ids.uuid();
    const ttl = req.ttlMs ?? LEASE_TTL.defaultMs;
    return this.decide(req.seq, (s, now, chain) =>
      decideAcquire(s, { holder: req.holder, seq: req.seq, ttlMs: ttl, leaseId }, now, chain),
    );
  }

  async renewLease(input: { leaseId: string; holder: string; ttlMs?: number }): Promise<LeaseGrant> {
    const req = parse(RenewInput, input);
    const ttl = req.ttlMs ?? LEASE_TTL.defaultMs;
    return this.decide(null, (s, now, chain) =>
      decideRenew(s, { leaseId: req.leaseId, holder: req.holder, ttlMs: ttl }, now, chain),
    );
  }

  async checkpoint(): Promise<CheckpointView> {
    const { seq, manifestHash, committedAt } = (await this.store.read(this.stream)).checkpoint;
    return { seq, manifestHash, committedAt };
  }

  async commit(input: { seq: number; manifestHash: string; leaseId: string }): Promise<CommitOutcome> {
    const req = parse(CommitInput, input);
    return this.decide(req.seq, (s, now, chain) => decideCommit(s, req, now, chain));
  }

  // -------------------------------------------------------------------------------------------------------

  private async trusted(): Promise<{ state: HandoffState; chain: TrustedChain }> {
    const [state, raw] = await Promise.all([this.store.read(this.stream), this.outbox.verify()]);
    return { state, chain: trustChain(raw, state.checkpoint) };
  }

  /**
   * Verifies the outbox first (outside the transaction), then decides atomically against the current state,
   * anchoring the verified chain at that state's checkpoint.
   */
  private async decide<T>(
    seq: number | null,
    fn: (s: HandoffState, now: Date, chain: TrustedChain) => Decision<T>,
  ): Promise<T> {
    const raw = await this.outbox.verify();
    const now = this.clock.now();
    const out = await this.store.transact(this.stream, (s) => {
      const chain = trustChain(raw, s.checkpoint);
      const d = fn(s, now, chain);
      return {
        next: d.next,
        result: { d, chain, checkpointSeq: d.next?.checkpoint.seq ?? s.checkpoint.seq },
      };
    });
    if (out.d.ok) return out.d.result;
    const details: Record<string, string | number | null> = { checkpointSeq: out.checkpointSeq };
    if (seq !== null) details.seq = seq;
    if (out.d.reason === 'chain-broken' && out.chain.break) {
      details.breakSeq = out.chain.break.seq;
      details.breakReason = out.chain.break.reason;
    }
    throw this.refusal(out.d.reason, details);
  }

  private chainBroken(chain: TrustedChain): Error {
    return this.refusal('chain-broken', {
      breakSeq: chain.break?.seq ?? null,
      breakReason: chain.break?.reason ?? null,
    });
  }

  private refusal(reason: HandoffConflictReason, details: ErrorDetails): Error {
    this.log.warn({ reason, ...details }, 'handoff refusal');
    return conflict(`handoff: ${reason}`, { ...details, reason });
  }
}

const chainStatus = (chain: TrustedChain): ChainStatus => ({
  verified: chain.break === null,
  trustedHead: chain.head,
  break: chain.break,
});
