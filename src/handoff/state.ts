/**
 * Persistent handoff state (one per stream = one outbox) and the pure decisions that change it.
 *
 * The handoff may change only this state — never an outbox object or manifest. Every change is one
 * `HandoffStateStore.transact` call whose function is one of the pure `decide*` functions below, so the
 * rules live here and an adapter only has to provide an atomic read-modify-write.
 *
 * Rules (Heimdall handoff contract):
 *  - A lease gives one holder bounded ownership of exactly the next sequence (checkpoint.seq + 1), and only
 *    when that manifest is present in the trusted chain. One live lease per stream, hence per sequence.
 *    The same holder acquiring its own live lease renews it (same lease id); a live lease of another holder
 *    is `lease-held`; an expired lease may be taken by anyone (a new lease id — the old one is stale).
 *  - Renew needs the live lease's id and holder; an expired lease cannot be renewed (re-acquire instead).
 *  - Checkpoint compare-and-swap accepts only seq 1 from 0 or N + 1 from N, with the exact hash of that
 *    trusted manifest and the id of the live lease for that sequence. A successful commit releases the lease.
 *  - Repeat commit: an EXACT repeat of the last successful commit (same seq, same hash, same lease id) is
 *    idempotent — it returns the current checkpoint unchanged with `repeated: true`, so a caller whose commit
 *    response was lost can safely retry. Any other commit of the committed seq is `already-committed`, and a
 *    commit below it (including an exact repeat after the checkpoint has moved on) is `rewind`.
 *  - Everything else is a CONFLICT with a stable reason code. Conflicts are counted (metadata for operations).
 *
 * Trust: the chain is verified from genesis by `verifyChain` and then anchored at the committed checkpoint
 * (`trustChain`): if the manifest at checkpoint.seq no longer has the committed hash, nothing is trusted.
 */
import { isMuninnError } from '../domain/errors.ts';
import type { ChainBreak, ChainEntry, ChainResult } from './outbox.ts';
import {
  initialHandoffState,
  type HandoffCheckpoint,
  type HandoffLease,
  type HandoffState,
} from '../domain/handoff-state.ts';
import type { HandoffStateStore } from '../ports/handoff-state.ts';

// The state and its store's port live in the domain and the ports (an adapter implements the store).
export {
  initialHandoffState,
  parseHandoffState,
  type HandoffCheckpoint,
  type HandoffLease,
  type HandoffState,
} from '../domain/handoff-state.ts';
export type { HandoffStateStore } from '../ports/handoff-state.ts';

/** In-memory store for tests and single-process use: transact calls are serialized; states are copied. */
export function memoryHandoffStateStore(): HandoffStateStore {
  const states = new Map<string, HandoffState>();
  let tail: Promise<unknown> = Promise.resolve();
  const current = (stream: string): HandoffState =>
    structuredClone(states.get(stream) ?? initialHandoffState(stream));
  return {
    read: (stream) => Promise.resolve(current(stream)),
    transact<T>(
      stream: string,
      fn: (s: HandoffState) => { next: HandoffState | null; result: T },
    ): Promise<T> {
      const run = tail.then(() => {
        const { next, result } = fn(current(stream));
        if (next) states.set(stream, structuredClone(next));
        return result;
      });
      tail = run.catch(() => undefined);
      return run;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------

export const LEASE_TTL = { minMs: 1_000, maxMs: 300_000, defaultMs: 60_000 } as const;

export const LeaseConflictReasons = ['lease-held', 'lease-expired', 'lease-unknown'] as const;
export const CheckpointConflictReasons = [
  'not-next-seq',
  'rewind',
  'hash-mismatch',
  'already-committed',
  'unknown-manifest',
  'chain-broken',
] as const;
/** Refusals of reads (not counted in state): the object exceeds the configured response bound. */
export const ReadConflictReasons = ['object-too-large'] as const;
export const HandoffConflictReasons = [
  ...LeaseConflictReasons,
  ...CheckpointConflictReasons,
  ...ReadConflictReasons,
] as const;
/**
 * lease-held         another holder has a live lease on the sequence (acquire)
 * lease-expired      the lease id is the current lease but it has expired (renew, commit)
 * lease-unknown      no such live lease: never issued, replaced after expiry, committed, or another holder's
 * not-next-seq       seq skips ahead of checkpoint + 1 (acquire, commit)
 * rewind             seq is below the committed sequence (acquire, commit)
 * hash-mismatch      manifestHash is not the trusted hash of manifest seq (commit)
 * already-committed  seq is the committed sequence but hash or lease differ from that commit (acquire, commit)
 * unknown-manifest   no manifest seq exists yet (acquire, commit)
 * chain-broken       the chain does not verify up to seq, or no longer contains the committed checkpoint
 *                    (also: a manifest listing that has nothing trusted left to return)
 * object-too-large   window read of a named object larger than the configured maxObjectBytes
 */
export type HandoffConflictReason = (typeof HandoffConflictReasons)[number];

export type Decision<T> =
  | { ok: true; next: HandoffState | null; result: T }
  | { ok: false; next: HandoffState; reason: HandoffConflictReason };

/** The chain as far as it can be trusted: verified from genesis and anchored at the committed checkpoint. */
export interface TrustedChain {
  /** Manifests 1..head, contiguous. Empty when the checkpoint anchor fails. */
  entries: readonly ChainEntry[];
  head: number;
  /** First untrusted sequence and why; null when every manifest present is trusted. */
  break: { seq: number; reason: ChainBreak } | null;
}

export function trustChain(
  raw: ChainResult,
  checkpoint: Pick<HandoffCheckpoint, 'seq' | 'manifestHash'>,
): TrustedChain {
  const rawBreak = raw.ok ? null : raw.break;
  const verified = rawBreak ? raw.manifests.filter((m) => m.seq < rawBreak.seq) : raw.manifests;
  if (checkpoint.seq > 0 && verified[checkpoint.seq - 1]?.hash !== checkpoint.manifestHash) {
    // The committed history cannot be authenticated: trust nothing.
    const brk =
      rawBreak && rawBreak.seq <= checkpoint.seq
        ? rawBreak
        : { seq: checkpoint.seq, reason: 'CHECKPOINT_MISMATCH' as const };
    return { entries: [], head: 0, break: brk };
  }
  return { entries: verified, head: verified.length, break: rawBreak };
}

export interface LeaseGrant {
  seq: number;
  holder: string;
  leaseId: string;
  manifestHash: string;
  expiresAt: string;
  /** true when an existing live lease of the same holder was extended. */
  renewed: boolean;
}

export interface CommitOutcome {
  seq: number;
  manifestHash: string;
  committedAt: string;
  /** true for an idempotent exact repeat of the last commit (nothing changed). */
  repeated: boolean;
}

const isLeaseReason = (r: HandoffConflictReason): boolean =>
  (LeaseConflictReasons as readonly string[]).includes(r);

function refuse<T>(state: HandoffState, reason: HandoffConflictReason): Decision<T> {
  const next = structuredClone(state);
  if (isLeaseReason(reason)) next.leaseConflicts++;
  else next.checkpointConflicts++;
  return { ok: false, next, reason };
}

const live = (lease: HandoffLease, now: Date): boolean => now.getTime() < Date.parse(lease.expiresAt);
const plus = (now: Date, ms: number): string => new Date(now.getTime() + ms).toISOString();

/** Sequence rules shared by acquire and commit for a requested `seq` that is not the committed one. */
function nextSeqCheck(
  state: HandoffState,
  seq: number,
  chain: TrustedChain,
): { ok: true; hash: string } | { ok: false; reason: HandoffConflictReason } {
  const cp = state.checkpoint.seq;
  if (seq < cp) return { ok: false, reason: 'rewind' };
  if (seq === cp) return { ok: false, reason: cp === 0 ? 'rewind' : 'already-committed' };
  if (seq > cp + 1) return { ok: false, reason: 'not-next-seq' };
  const entry = chain.entries[seq - 1];
  if (entry && seq <= chain.head) return { ok: true, hash: entry.hash };
  return { ok: false, reason: chain.break && chain.break.seq <= seq ? 'chain-broken' : 'unknown-manifest' };
}

export function decideAcquire(
  state: HandoffState,
  input: { holder: string; seq: number; ttlMs: number; leaseId: string },
  now: Date,
  chain: TrustedChain,
): Decision<LeaseGrant> {
  const s = nextSeqCheck(state, input.seq, chain);
  if (!s.ok) return refuse(state, s.reason);
  const cur = state.lease;
  const expiresAt = plus(now, input.ttlMs);
  if (cur && live(cur, now)) {
    if (cur.holder !== input.holder || cur.seq !== input.seq) return refuse(state, 'lease-held');
    const lease = { ...cur, expiresAt };
    return {
      ok: true,
      next: { ...state, lease },
      result: { ...grantOf(lease, s.hash), renewed: true },
    };
  }
  const lease: HandoffLease = {
    seq: input.seq,
    holder: input.holder,
    leaseId: input.leaseId,
    acquiredAt: now.toISOString(),
    expiresAt,
  };
  return {
    ok: true,
    next: { ...state, lease, leaseExpiries: state.leaseExpiries + (cur ? 1 : 0) }, // a lease here is an expired one
    result: { ...grantOf(lease, s.hash), renewed: false },
  };
}

export function decideRenew(
  state: HandoffState,
  input: { leaseId: string; holder: string; ttlMs: number },
  now: Date,
  chain: TrustedChain,
): Decision<LeaseGrant> {
  const cur = state.lease;
  if (!cur || cur.leaseId !== input.leaseId || cur.holder !== input.holder)
    return refuse(state, 'lease-unknown');
  if (!live(cur, now)) return refuse(state, 'lease-expired');
  const s = nextSeqCheck(state, cur.seq, chain);
  if (!s.ok) return refuse(state, s.reason);
  const lease = { ...cur, expiresAt: plus(now, input.ttlMs) };
  return { ok: true, next: { ...state, lease }, result: { ...grantOf(lease, s.hash), renewed: true } };
}

export function decideCommit(
  state: HandoffState,
  input: { seq: number; manifestHash: string; leaseId: string },
  now: Date,
  chain: TrustedChain,
): Decision<CommitOutcome> {
  const cp = state.checkpoint;
  if (
    cp.seq > 0 &&
    input.seq === cp.seq &&
    input.manifestHash === cp.manifestHash &&
    input.leaseId === cp.leaseId &&
    cp.committedAt
  ) {
    return {
      ok: true,
      next: null,
      result: { seq: cp.seq, manifestHash: cp.manifestHash, committedAt: cp.committedAt, repeated: true },
    };
  }
  const s = nextSeqCheck(state, input.seq, chain);
  if (!s.ok) return refuse(state, s.reason);
  if (input.manifestHash !== s.hash) return refuse(state, 'hash-mismatch');
  const lease = state.lease;
  if (!lease || lease.leaseId !== input.leaseId || lease.seq !== input.seq)
    return refuse(state, 'lease-unknown');
  if (!live(lease, now)) return refuse(state, 'lease-expired');
  const committedAt = now.toISOString();
  return {
    ok: true,
    next: {
      ...state,
      checkpoint: { seq: input.seq, manifestHash: s.hash, committedAt, leaseId: lease.leaseId },
      lease: null,
    },
    result: { seq: input.seq, manifestHash: s.hash, committedAt, repeated: false },
  };
}

const grantOf = (lease: HandoffLease, manifestHash: string): Omit<LeaseGrant, 'renewed'> => ({
  seq: lease.seq,
  holder: lease.holder,
  leaseId: lease.leaseId,
  manifestHash,
  expiresAt: lease.expiresAt,
});

/** The reason code of a handoff CONFLICT error, if it is one. */
export function handoffConflictReason(e: unknown): HandoffConflictReason | null {
  if (!isMuninnError(e) || e.code !== 'CONFLICT') return null;
  const r = e.details.reason;
  return typeof r === 'string' && (HandoffConflictReasons as readonly string[]).includes(r)
    ? (r as HandoffConflictReason)
    : null;
}
