/** The handoff contract's persisted state per stream (src/handoff/state.ts decides how it changes). */
import { z } from 'zod';
import { MuninnError } from './errors.ts';

export interface HandoffCheckpoint {
  /** Last committed manifest sequence; 0 before the first commit. */
  seq: number;
  manifestHash: string | null;
  committedAt: string | null;
  /** Lease id the last commit was made with (lets an exact repeat be recognised). Never returned to callers. */
  leaseId: string | null;
}

export interface HandoffLease {
  seq: number;
  holder: string;
  /** Random lease id handed to the holder; required for renew and commit. */
  leaseId: string;
  acquiredAt: string;
  expiresAt: string;
}

export interface HandoffState {
  stream: string;
  checkpoint: HandoffCheckpoint;
  /** Possibly expired: expiry is evaluated against the clock, never by a background sweep. */
  lease: HandoffLease | null;
  /** lease-held / lease-expired / lease-unknown refusals. */
  leaseConflicts: number;
  /** Every other refusal of acquire or commit (skip, rewind, hash mismatch, inconsistent repeat, chain). */
  checkpointConflicts: number;
  /** Expired leases taken over by a new acquire. */
  leaseExpiries: number;
}

export const initialHandoffState = (stream: string): HandoffState => ({
  stream,
  checkpoint: { seq: 0, manifestHash: null, committedAt: null, leaseId: null },
  lease: null,
  leaseConflicts: 0,
  checkpointConflicts: 0,
  leaseExpiries: 0,
});

const HEX64 = /^[0-9a-f]{64}$/;
const isoString = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'ISO timestamp');
const count = z.number().int().nonnegative();
const handoffStateSchema = z.strictObject({
  stream: z.string().min(1),
  checkpoint: z.strictObject({
    seq: count,
    manifestHash: z.string().regex(HEX64).nullable(),
    committedAt: isoString.nullable(),
    leaseId: z.string().min(1).nullable(),
  }),
  lease: z
    .strictObject({
      seq: z.number().int().positive(),
      holder: z.string().min(1),
      leaseId: z.string().min(1),
      acquiredAt: isoString,
      expiresAt: isoString,
    })
    .nullable(),
  leaseConflicts: count,
  checkpointConflicts: count,
  leaseExpiries: count,
});

/** For adapters: validates persisted state (a corrupt record is INTERNAL, never silently reset). */
export function parseHandoffState(raw: unknown): HandoffState {
  const r = handoffStateSchema.safeParse(raw);
  if (!r.success) throw new MuninnError('INTERNAL', 'handoff state record is invalid');
  const s = r.data;
  if ((s.checkpoint.seq === 0) !== (s.checkpoint.manifestHash === null))
    throw new MuninnError('INTERNAL', 'handoff state record is invalid');
  return s;
}
