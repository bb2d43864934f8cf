import { z } from 'zod';
import { Envelope, EventTypes, LedgerEvent, SealedPayload, type EventType } from './events.ts';

/**
 * The ledger's wire format: which schema version of each event type this build writes, the upcasters that
 * bring older ones forward, and the decoding of the topic's bytes into typed events (and back).
 */

/** The newest schema version of each type this build writes and understands. */
export const CURRENT_VERSION: Readonly<Record<EventType, number>> = {
  RecordProposed: 1,
  RecordRevised: 2,
  RecordRetracted: 1,
  EntityCreated: 1,
  RecordReinforced: 1,
  ProposalApproved: 2,
  ProposalRejected: 1,
  EpisodeStored: 1,
  AccessGranted: 1,
  AccessRevoked: 1,
  FeedbackRecorded: 1,
  Erased: 1,
  HoldPlaced: 1,
  HoldReleased: 1,
  RecordArchived: 1,
  RecordRelated: 1,
  FindingRaised: 1,
  FindingResolved: 1,
  RolledBack: 1,
};

/**
 * Upcasters: `upcasters[type][n]` turns a version-n raw event into version n+1. The ledger is never
 * rewritten; old events pass through these on every read.
 */
type Raw = Record<string, unknown>;
export const upcasters: Partial<Record<EventType, Record<number, (e: Raw) => Raw>>> = {
  // v1 approvals predate separation of duties: no configured approvers (the fold still applies the floor).
  ProposalApproved: { 1: (e) => ({ ...e, payload: { ...(e['payload'] as Raw), required: 0 } }) },
  // v1 revisions changed only the statement and validity.
  RecordRevised: {
    1: (e) => ({
      ...e,
      payload: { ...(e['payload'] as Raw), class: null, sensitivity: null, namespace: null, reason: null },
    }),
  },
};

/**
 * What may sit on the wire: the envelope and its payload, plus, for an event that carries personal data,
 * `sealed`: the personal fields, encrypted. Its `payload` then holds the markers of sealing.ts in their
 * place; opening merges the decrypted fields back (lifecycle/sealing.ts). An event about several items
 * (a rollback) carries `sealedParts` instead, one per item, each under that item's key.
 */
export const WireEvent = Envelope.extend({
  payload: z.unknown(),
  sealed: SealedPayload.optional(),
  sealedParts: z.array(SealedPayload).max(10_000).optional(),
});
export type WireEvent = z.infer<typeof WireEvent>;

export type DecodeResult =
  { ok: true; event: LedgerEvent } | { ok: false; reason: string; retryableAfterUpgrade: boolean };

/** Bytes → the raw JSON object and its checked envelope, or why it is not an event. Never throws. */
export function parseWire(
  bytes: Uint8Array | string,
): { ok: true; raw: Raw; wire: WireEvent } | { ok: false; reason: string; retryableAfterUpgrade: false } {
  let raw: unknown;
  try {
    raw = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
  } catch {
    return { ok: false, reason: 'not JSON', retryableAfterUpgrade: false };
  }
  const wire = WireEvent.safeParse(raw);
  if (!wire.success)
    return { ok: false, reason: `bad envelope: ${summarize(wire.error)}`, retryableAfterUpgrade: false };
  return { ok: true, raw: raw as Raw, wire: wire.data };
}

/** Bytes from the topic → a typed event, or the reason it cannot be one. Never throws; never opens a seal. */
export function decodeEvent(bytes: Uint8Array | string): DecodeResult {
  const p = parseWire(bytes);
  if (!p.ok) return p;
  if (p.wire.sealed || p.wire.sealedParts) {
    return { ok: false, reason: 'sealed payload: no key store bound', retryableAfterUpgrade: true };
  }
  return decodeRaw(p.raw);
}

/** A parsed (and, if it was sealed, opened) wire object → a typed event: version check and upcasting. */
export function decodeRaw(raw: Raw): DecodeResult {
  const type = String(raw['type']);
  if (!(EventTypes as string[]).includes(type)) {
    return { ok: false, reason: `unknown event type ${type}`, retryableAfterUpgrade: true };
  }
  const known = CURRENT_VERSION[type as EventType];
  const version = Number(raw['schemaVersion']);
  if (version > known) {
    return {
      ok: false,
      reason: `${type} schemaVersion ${version} is newer than this build (${known})`,
      retryableAfterUpgrade: true,
    };
  }
  let cur: Raw = { ...raw };
  delete cur['sealed'];
  delete cur['sealedParts'];
  for (let v = version; v < known; v++) {
    const up = upcasters[type as EventType]?.[v];
    if (!up) return { ok: false, reason: `no upcaster for ${type} v${v}`, retryableAfterUpgrade: false };
    try {
      cur = { ...up(cur), schemaVersion: v + 1 };
    } catch (e) {
      return {
        ok: false,
        reason: `upcasting ${type} v${v} failed: ${e instanceof Error ? e.message : String(e)}`,
        retryableAfterUpgrade: true,
      };
    }
  }
  const typed = LedgerEvent.safeParse(cur);
  if (!typed.success)
    return { ok: false, reason: `bad ${type}: ${summarize(typed.error)}`, retryableAfterUpgrade: false };
  return { ok: true, event: typed.data };
}

export const encodeEvent = (e: LedgerEvent): string => JSON.stringify(e);

function summarize(err: z.ZodError): string {
  return err.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}
