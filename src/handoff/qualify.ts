/**
 * Transcript-window qualification — pure (no I/O, no clock: `now` is an argument).
 *
 * A window is the part of a session after the last published message (the watermark). It qualifies only when:
 *   source known; WebUI-class sessions explicitly selected; owner present; (source, owner) on the allowlist;
 *   the session parses (ambiguity = MALFORMED); ≥ 1 user and ≥ 1 final assistant message in the window; the
 *   session ends with a final assistant message; no tool call pending or awaiting approval; retained text
 *   passes the secret detector; unchanged for the quiet period; and the identical session content was
 *   already recorded as candidate by an earlier qualifying observation (twice-observed quiescent rule).
 * Every other outcome is a reason code; nothing here produces partial output.
 */
import { canonicalJson } from '../domain/canonical.ts';
import type { ObservationRecord, SecretDetector, SessionSummary } from './ports.ts';
import type { Pseudonymizer } from './pseudonym.ts';
import {
  KNOWN_SOURCES,
  SessionSchema,
  WEBUI_CLASS_SOURCES,
  isFinalAssistant,
  type HermesMessage,
  type HermesSession,
} from './session-schema.ts';

export const REASON_CODES = [
  // rejected: policy says no, re-running will not change that
  'NOT_ALLOWLISTED',
  'WEBUI_NOT_SELECTED',
  'SECRET_DETECTED',
  // deferred: not (yet) safe to export
  'UNKNOWN_SOURCE',
  'MISSING_OWNER',
  'MALFORMED',
  'SOURCE_ERROR',
  'SUMMARY_MISMATCH',
  'WATERMARK_NOT_FOUND',
  'NO_USER_MESSAGE',
  'NO_FINAL_ASSISTANT',
  'INCOMPLETE_TURN',
  'PENDING_TOOL_CALL',
  'NOT_QUIET',
  'FIRST_OBSERVATION',
  'REVISION_CHANGED',
  // nothing to do
  'NOTHING_NEW',
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

export interface AllowlistEntry {
  source: string;
  owner: string;
}

export interface QualifyConfig {
  allowlist: readonly AllowlistEntry[];
  quietPeriodMs: number;
  /** Raw ids of WebUI-class sessions the operator selected for a manual canary. */
  selectedWebUiSessions: readonly string[];
}

export type Decision =
  | { kind: 'reject' | 'defer'; reason: ReasonCode; next: ObservationRecord | null }
  | { kind: 'unchanged'; reason: 'NOTHING_NEW'; next: ObservationRecord | null }
  | {
      kind: 'qualify';
      session: HermesSession;
      window: HermesMessage[];
      /** Message ref of the watermark the window continues from (null for the first window). */
      after: string | null;
      fingerprint: string;
      /** State to persist once publication succeeded. */
      next: ObservationRecord;
    };

/** Screens a listing entry before anything is fetched: non-allowlisted sessions are never read. */
export function screenSummary(
  s: SessionSummary,
  config: QualifyConfig,
): { kind: 'reject' | 'defer'; reason: ReasonCode; next: null } | null {
  const reason = policyReason(s.source, s.owner, s.id, config);
  return reason ? { kind: rejectOrDefer(reason), reason, next: null } : null;
}

export interface QualifyInput {
  raw: unknown;
  summary: SessionSummary;
  prior: ObservationRecord | null;
  now: Date;
  config: QualifyConfig;
  pseudo: Pseudonymizer;
  detectSecret: SecretDetector;
}

export function qualify(input: QualifyInput): Decision {
  const { raw, summary, prior, now, config, pseudo } = input;
  const nowIso = now.toISOString();
  const stop = (reason: ReasonCode): Decision => ({
    kind: rejectOrDefer(reason),
    reason,
    next: reason === 'NOT_ALLOWLISTED' || reason === 'WEBUI_NOT_SELECTED' ? null : resetRecord(prior, nowIso),
  });

  const first = screenSummary(summary, config);
  if (first) return first;

  const parsed = SessionSchema.safeParse(raw);
  if (!parsed.success) return stop('MALFORMED');
  const session = parsed.data;
  // The listing and the session must agree on what the allowlist was checked against.
  if (session.id !== summary.id || session.source !== summary.source || session.owner !== summary.owner)
    return stop('SUMMARY_MISMATCH');
  const policy = policyReason(session.source, session.owner, session.id, config);
  if (policy) return stop(policy);
  if (!wellFormed(session)) return stop('MALFORMED');

  const fingerprint = pseudo.ref('fingerprint', canonicalJson(raw));
  const msgRef = (m: HermesMessage): string => pseudo.ref('message', session.source, session.id, m.id);

  const after = prior?.watermark?.messageRef ?? null;
  const window = windowAfter(session.messages, after, msgRef);
  if (!window) return stop('WATERMARK_NOT_FOUND');
  if (window.length === 0 || (prior?.publishedFingerprint === fingerprint && after !== null))
    return {
      kind: 'unchanged',
      reason: 'NOTHING_NEW',
      next: prior ? { ...prior, lastObservedAt: nowIso } : null,
    };

  const problem = windowProblem(session, window, input.detectSecret);
  if (problem) return stop(problem);
  if (!(quietFor(session, now) >= config.quietPeriodMs)) return stop('NOT_QUIET');

  const cand = prior?.candidate ?? null;
  if (!cand || cand.fingerprint !== fingerprint) {
    return {
      kind: 'defer',
      reason: cand ? 'REVISION_CHANGED' : 'FIRST_OBSERVATION',
      next: { ...resetRecord(prior, nowIso), candidate: { fingerprint, count: 1, firstObservedAt: nowIso } },
    };
  }
  const lastMsg = window[window.length - 1]!;
  return {
    kind: 'qualify',
    session,
    window,
    after,
    fingerprint,
    next: {
      candidate: null,
      watermark: { messageRef: msgRef(lastMsg), at: new Date(lastMsg.created_at).toISOString() },
      publishedFingerprint: fingerprint,
      lastObservedAt: nowIso,
    },
  };
}

/** The state after an observation that leaves nothing pending: no candidate, the watermark kept. */
export function resetRecord(prior: ObservationRecord | null, nowIso: string): ObservationRecord {
  return {
    candidate: null,
    watermark: prior?.watermark ?? null,
    publishedFingerprint: prior?.publishedFingerprint ?? null,
    lastObservedAt: nowIso,
  };
}

/** The messages after the watermark (all without one); null when the watermark is not in the session. */
function windowAfter(
  messages: readonly HermesMessage[],
  after: string | null,
  ref: (m: HermesMessage) => string,
): HermesMessage[] | null {
  if (after === null) return messages.slice(0);
  const i = messages.findIndex((m) => ref(m) === after);
  return i < 0 ? null : messages.slice(i + 1);
}

/** Why the window is not a complete, settled exchange safe to export, or null when it is. */
function windowProblem(
  session: HermesSession,
  window: readonly HermesMessage[],
  detectSecret: SecretDetector,
): ReasonCode | null {
  if (
    session.messages.some((m) =>
      (m.tool_calls ?? []).some((t) => t.status === 'pending' || t.status === 'awaiting_approval'),
    )
  )
    return 'PENDING_TOOL_CALL';
  if (!window.some((m) => m.role === 'user')) return 'NO_USER_MESSAGE';
  if (!window.some(isFinalAssistant)) return 'NO_FINAL_ASSISTANT';
  const last = session.messages[session.messages.length - 1];
  if (!last || !isFinalAssistant(last)) return 'INCOMPLETE_TURN';
  if (retainedTexts(window).some((t) => detectSecret(t))) return 'SECRET_DETECTED';
  return null;
}

/** Milliseconds since the session's last activity (its update or its latest message). */
function quietFor(session: HermesSession, now: Date): number {
  const lastActivity = Math.max(
    Date.parse(session.updated_at),
    ...session.messages.map((m) => Date.parse(m.created_at)),
  );
  return now.getTime() - lastActivity;
}

/** The only text a window object retains: user text and final-assistant text. */
export function retainedMessages(window: readonly HermesMessage[]): HermesMessage[] {
  return window.filter((m) => (m.role === 'user' && (m.content ?? '').length > 0) || isFinalAssistant(m));
}
const retainedTexts = (w: readonly HermesMessage[]): string[] =>
  retainedMessages(w).map((m) => m.content ?? '');

function rejectOrDefer(r: ReasonCode): 'reject' | 'defer' {
  return r === 'NOT_ALLOWLISTED' || r === 'WEBUI_NOT_SELECTED' || r === 'SECRET_DETECTED'
    ? 'reject'
    : 'defer';
}

function policyReason(
  source: string,
  owner: string | undefined,
  id: string,
  config: QualifyConfig,
): ReasonCode | null {
  if (!(KNOWN_SOURCES as readonly string[]).includes(source)) return 'UNKNOWN_SOURCE';
  if (WEBUI_CLASS_SOURCES.includes(source) && !config.selectedWebUiSessions.includes(id))
    return 'WEBUI_NOT_SELECTED';
  if (owner === undefined || owner.length === 0) return 'MISSING_OWNER';
  if (!config.allowlist.some((a) => a.source === source && a.owner === owner)) return 'NOT_ALLOWLISTED';
  return null;
}

/** Structural ambiguity the schema cannot express: duplicate ids, time going backwards, empty user turns. */
function wellFormed(s: HermesSession): boolean {
  const ids = new Set<string>();
  let prev = -Infinity;
  for (const m of s.messages) {
    if (ids.has(m.id)) return false;
    ids.add(m.id);
    const t = Date.parse(m.created_at);
    if (!Number.isFinite(t) || t < prev) return false;
    prev = t;
    if (m.role === 'user' && (m.content === null || m.content.trim().length === 0)) return false;
    if (m.role === 'assistant' && m.final === true && (m.tool_calls ?? []).length > 0) return false;
  }
  return Number.isFinite(Date.parse(s.updated_at));
}
