/**
 * Ports of the transcript exporter (`muninn outbox export`). The exporter is a use case: it sees sessions only
 * through `SessionSource`, time only through `Clock`, its own persisted qualification state only through
 * `ObservationStore`, the outbox only through `OutboxStore` (src/ports/outbox.ts), and the secret screen only
 * through `SecretDetector` (the composition root passes `containsSecret` from src/ingest/screen.ts; this
 * layer may not import it).
 */
import type { Clock } from '../ports/clock.ts';

export type { Clock };

/**
 * What a listing tells us before a session is fetched. `owner` is the source's own attribution (for Signal,
 * the sender-to-owner mapping); it is matched against the configured allowlist, never extended by it.
 */
export interface SessionSummary {
  id: string;
  source: string;
  owner?: string | undefined;
  updatedAt?: string | undefined;
  revision?: string | undefined;
}

/** Read-only view of a Hermes-style session API. `getSession` returns the raw JSON; the exporter validates it. */
export interface SessionSource {
  listSessions(): Promise<SessionSummary[]>;
  getSession(id: string): Promise<unknown>;
}

/**
 * Qualification state of one session, keyed by a pseudonymous session key (never a raw id).
 * `candidate` is the fingerprint of the last qualifying observation not yet published (count = observations
 * of exactly that fingerprint); any change replaces it and resets `count` to 1, any non-qualifying
 * observation clears it. `watermark` is the pseudonymous ref of the last message already published.
 */
export interface ObservationRecord {
  candidate: { fingerprint: string; count: number; firstObservedAt: string } | null;
  watermark: { messageRef: string; at: string } | null;
  publishedFingerprint: string | null;
  lastObservedAt: string;
}

export interface ObservationState {
  version: 1;
  /** Key id of the pseudonymization key the session keys were derived with; a rotation starts over. */
  keyId: string;
  sessions: Record<string, ObservationRecord>;
}

export interface ObservationStore {
  /** Returns an empty state when nothing was persisted yet. */
  load(): Promise<ObservationState | null>;
  save(state: ObservationState): Promise<void>;
}

/** High-confidence secret screen over retained text; `true` rejects the whole window. */
export type SecretDetector = (text: string) => boolean;

/** Runtime-provisioned HMAC key. Never serialized into objects, state or logs — only `keyId` is. */
export interface PseudonymKey {
  keyId: string;
  secret: Uint8Array;
}
