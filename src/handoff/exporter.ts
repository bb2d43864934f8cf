/**
 * `muninn outbox export` — one manual exporter run.
 *
 * list sessions → screen against the allowlist (non-allowlisted sessions are never fetched) → fetch →
 * qualify (twice-observed quiescent window) → minimize → secret re-check of the built object → publish the
 * object → append a manifest → persist observation state. The outcome carries counts, reason codes and object
 * ids/sequences only — never transcript text, raw identifiers or key material.
 *
 * Crash safety: state is saved only after the manifest exists. A crash in between makes the next run
 * re-qualify the same content, find the identical object (verified) and the manifest that already names it,
 * so nothing is duplicated.
 */
import type {
  Clock,
  ObservationRecord,
  ObservationState,
  ObservationStore,
  PseudonymKey,
  SecretDetector,
  SessionSource,
  SessionSummary,
} from './ports.ts';
import type { LockOptions, OutboxStore, PublishHooks } from '../ports/outbox.ts';
import { appendManifest, publishObject } from './outbox.ts';
import { minimize, type TranscriptWindow } from './minimize.ts';
import { createPseudonymizer, type Pseudonymizer } from './pseudonym.ts';
import { qualify, resetRecord, screenSummary, type QualifyConfig, type ReasonCode } from './qualify.ts';

export interface ExporterDeps {
  source: SessionSource;
  store: ObservationStore;
  outbox: OutboxStore;
  clock: Clock;
  detectSecret: SecretDetector;
  key: PseudonymKey;
  hooks?: PublishHooks;
  lock?: LockOptions;
}

export type ExportConfig = QualifyConfig;

export type OutcomeReason = ReasonCode | 'PUBLISH_FAILED';

export interface ExportOutcome {
  considered: number;
  published: number;
  deferred: number;
  rejected: number;
  unchanged: number;
  failed: number;
  reasons: Partial<Record<OutcomeReason, number>>;
  manifests: { seq: number; objectId: string; created: boolean }[];
}

/** Built-in fail-closed floor for the secret screen: credential-bearing URLs even if the injected detector misses. */
const USERINFO_URL = /\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@]+@/i;
const CREDENTIAL_PARAM =
  /[?&#;](?:access_?token|token|api_?key|apikey|key|secret|password|passwd|pwd|auth|authorization|sig|signature|client_secret|session|sessionid|code)=[^\s&#]+/i;
export const credentialUrlDetector: SecretDetector = (t) => USERINFO_URL.test(t) || CREDENTIAL_PARAM.test(t);

/** One run's shared state: its deps and config, the pseudonymizer and secret screen, the tallies, the state. */
interface Run {
  readonly deps: ExporterDeps;
  readonly config: ExportConfig;
  readonly pseudo: Pseudonymizer;
  readonly detect: SecretDetector;
  readonly out: ExportOutcome;
  readonly state: ObservationState;
}

const count = (out: ExportOutcome, r: OutcomeReason): void => {
  out.reasons[r] = (out.reasons[r] ?? 0) + 1;
};

export async function exportOnce(deps: ExporterDeps, config: ExportConfig): Promise<ExportOutcome> {
  const pseudo = createPseudonymizer(deps.key);
  const detect: SecretDetector = (t) => deps.detectSecret(t) || credentialUrlDetector(t);
  const out: ExportOutcome = {
    considered: 0,
    published: 0,
    deferred: 0,
    rejected: 0,
    unchanged: 0,
    failed: 0,
    reasons: {},
    manifests: [],
  };

  const loaded = await deps.store.load();
  if (loaded && loaded.keyId !== pseudo.keyId)
    throw new Error('observation state was written under another pseudonym key id; re-index before rotating');
  const state: ObservationState = loaded ?? { version: 1, keyId: pseudo.keyId, sessions: {} };
  const run: Run = { deps, config, pseudo, detect, out, state };

  const summaries = await deps.source.listSessions();
  try {
    for (const summary of summaries) await exportSession(run, summary);
  } finally {
    await deps.store.save(state);
  }
  return out;
}

/** One listed session: screened, fetched, qualified, minimized, re-checked for secrets, published. */
async function exportSession(run: Run, summary: SessionSummary): Promise<void> {
  const { deps, config, pseudo, detect, out, state } = run;
  out.considered++;
  const screened = screenSummary(summary, config);
  if (screened) {
    out[screened.kind === 'reject' ? 'rejected' : 'deferred']++;
    count(out, screened.reason);
    return;
  }
  const skey = pseudo.ref('state', summary.source, summary.id);
  const prior = state.sessions[skey] ?? null;
  const now = deps.clock.now();
  let raw: unknown;
  try {
    raw = await deps.source.getSession(summary.id);
  } catch {
    out.deferred++;
    count(out, 'SOURCE_ERROR');
    if (prior) state.sessions[skey] = { ...prior, candidate: null, lastObservedAt: now.toISOString() };
    return;
  }
  const d = qualify({ raw, summary, prior, now, config, pseudo, detectSecret: detect });
  if (d.kind !== 'qualify') {
    out[d.kind === 'reject' ? 'rejected' : d.kind === 'defer' ? 'deferred' : 'unchanged']++;
    count(out, d.reason);
    if (d.next) state.sessions[skey] = d.next;
    return;
  }
  const obj = minimize(d.session, d.window, d.after, pseudo);
  if (obj.messages.some((m) => detect(m.text))) {
    out.rejected++;
    count(out, 'SECRET_DETECTED');
    state.sessions[skey] = resetRecord(prior, now.toISOString());
    return;
  }
  await publish(run, obj, skey, d.next);
}

/** Publishes the object and appends its manifest; only then is the session's new state recorded. */
async function publish(
  run: Run,
  obj: TranscriptWindow,
  skey: string,
  next: ObservationRecord,
): Promise<void> {
  const { deps, out, state } = run;
  try {
    const { id } = await publishObject(deps.outbox, obj, deps.hooks);
    const m = await appendManifest(deps.outbox, [id], {
      now: () => deps.clock.now(),
      ...(deps.hooks ? { hooks: deps.hooks } : {}),
      ...(deps.lock ? { lock: deps.lock } : {}),
    });
    out.published++;
    out.manifests.push({ seq: m.seq, objectId: id, created: m.created });
    state.sessions[skey] = next;
  } catch {
    // Candidate stays recorded: the next run retries the identical window idempotently.
    out.failed++;
    count(out, 'PUBLISH_FAILED');
  }
}

/** Ops metadata: age of the oldest qualifying content observed but not yet published (null when none). */
export function oldestUnpublishedAge(state: ObservationState | null, nowMs: number): number | null {
  let oldest: number | null = null;
  for (const r of Object.values(state?.sessions ?? {})) {
    if (!r.candidate) continue;
    const t = Date.parse(r.candidate.firstObservedAt);
    if (Number.isFinite(t) && (oldest === null || t < oldest)) oldest = t;
  }
  return oldest === null ? null : Math.max(0, nowMs - oldest);
}
