/**
 * Screen — stage 1 of the ingest pipeline. Runs before anything is stored, logged or sent to a model.
 *
 * A pure function: no I/O, no clock, no randomness (SHA-256 via node:crypto is deterministic).
 *
 *  0. Detectors never read the raw text but its skeleton (src/ingest/skeleton.ts): NFKD, invisible and
 *     control characters dropped, combining marks dropped, Latin look-alikes folded. Every span they find is
 *     mapped back to the original, so the stored text keeps its own characters.
 *  1. Secrets are detected on the skeleton of the ORIGINAL text, overlapping detections are merged (the
 *     union span is redacted; the kind is the most specific detector that fired, ties broken by the longest
 *     span), and each merged span is replaced by a `SecretRef` placeholder `[secret:<kind>:<8 hex>]`.
 *     The raw secret never appears in any returned field.
 *  2. PII and instruction-shaped text are detected on the skeleton of the REDACTED text, so every offset in
 *     the result refers to `result.text`.
 *
 * Decisions (documented so callers and reviewers can hold us to them):
 *  - Plain hex strings (git SHAs, SHA-256 digests, anything matching [0-9a-f-]+) and UUIDs are NOT
 *    secrets for the high-entropy detector. Hex-only API keys are therefore caught only by context
 *    (`password=…`, `token=…`, URL query values, provider prefixes).
 *  - The high-entropy detector needs ≥ 32 chars of [A-Za-z0-9+/_-] (optional `=` padding), upper AND
 *    lower case AND a digit, Shannon entropy ≥ 4.0 bits/char, and must not look like a camelCase
 *    identifier, an SRI hash (`sha512-…`) or a file/URL path.
 *  - For URLs with credentials only the credential is redacted (the userinfo `user:pass`, or the value of a
 *    sensitive query/fragment parameter) so the host stays readable.
 *  - Label floor: any gov_id/card_number/iban → RESTRICTED; any other PII → CONFIDENTIAL; a redacted secret
 *    (content that talked about a credential) → INTERNAL; otherwise PUBLIC.
 *    Base64 payloads of `data:…;base64,` URIs are content, not secrets.
 *  - Spans are applied in one left-to-right pass that tracks offsets; this is equivalent to replacing
 *    right-to-left and yields offsets into the redacted text directly.
 *  - Fingerprints of low-entropy secrets (passwords) are dictionary-reversible when plain SHA-256 is used:
 *    every caller that persists a ref passes `fingerprintKey` (HMAC; MUNINN_FINGERPRINT_KEY). A fingerprint
 *    is taken over the secret's skeleton, so a fullwidth or zero-width-split copy of a secret gets the
 *    same ref as the plain one.
 *  - Every regex of the detectors (screen-*.ts) is either a single character class run, bounded, or has
 *    disjoint alternatives, so matching stays linear-ish on adversarial input (no nested ambiguous
 *    quantifiers), and overlap resolution is sort-and-sweep (no pairwise scans).
 */
import { createHash, createHmac } from 'node:crypto';
import { skeleton, toOriginal, type Skeleton } from './skeleton.ts';
import type { InjectionFinding, PiiFinding, PiiKind, SecretKind } from './screen-kinds.ts';
import { withoutOverlaps, type SecretCandidate, type Span } from './screen-spans.ts';
import { detectHighEntropy, detectPrivateKeys, runPatternRules } from './screen-secrets.ts';
import { detectAssignments, detectKvConnectionStrings, detectUrls } from './screen-credentials.ts';
import { detectPii } from './screen-pii.ts';
import { detectInjection } from './screen-injection.ts';

// ---------------------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------------------

export type LabelFloor = 'PUBLIC' | 'INTERNAL' | 'CONFIDENTIAL' | 'RESTRICTED';

export interface SecretRef {
  /** The placeholder inserted into the content, e.g. `[secret:github_token:ab12cd34]`. */
  ref: string;
  kind: SecretKind;
  /** First 16 hex chars of SHA-256 (or HMAC-SHA-256 when a fingerprint key is given) of the raw secret. */
  fingerprint: string;
}

/** A SecretRef plus where its placeholder sits in the redacted text. */
export interface ScreenedSecret extends SecretRef {
  start: number;
  end: number;
}

export interface ScreenResult {
  /** The redacted text. */
  text: string;
  /** Offsets are in the redacted text. */
  secrets: ScreenedSecret[];
  /** Offsets are in the redacted text. */
  pii: PiiFinding[];
  /** Offsets are in the redacted text. */
  injection: InjectionFinding[];
  labelFloor: LabelFloor;
  /** False when any instruction-shaped text was found. */
  canAutoAdmit: boolean;
  /** Machine-readable codes: `secret:<kind>`, `pii:<kind>`, `injection:<kind>`; unique, first-seen order. */
  reasons: string[];
}

export interface ScreenOptions {
  /**
   * When set, fingerprints are HMAC-SHA-256(key, secret) instead of plain SHA-256, so a stored fingerprint of
   * a low-entropy password cannot be reversed with a dictionary. Must be stable per deployment/tenant for
   * "same secret → same ref" to hold.
   */
  fingerprintKey?: string;
}

// ---------------------------------------------------------------------------------------------------------
// Secrets (the detectors live in screen-secrets.ts and screen-credentials.ts)
// ---------------------------------------------------------------------------------------------------------

/** Higher wins when detections overlap. Provider formats beat structure, structure beats context. */
const PRIORITY: Record<SecretKind, number> = {
  private_key: 100,
  aws_access_key_id: 90,
  github_token: 90,
  gitlab_token: 90,
  slack_token: 90,
  slack_webhook: 90,
  stripe_key: 90,
  openai_key: 90,
  anthropic_key: 90,
  huggingface_token: 90,
  google_api_key: 90,
  gcp_service_account: 90,
  azure_storage_key: 90,
  azure_sas_signature: 90,
  twilio_api_key: 90,
  sendgrid_api_key: 90,
  npm_token: 90,
  pypi_token: 90,
  aws_secret_access_key: 85,
  jwt: 80,
  connection_string: 70,
  credential_url: 65,
  basic_credential: 60,
  bearer_credential: 60,
  password_assignment: 50,
  high_entropy_token: 10,
};

const PLACEHOLDER_RE = /\[secret:[a-z0-9_]{1,40}:[0-9a-f]{8}\]/g;

function detectSecretCandidates(text: string): SecretCandidate[] {
  const found: SecretCandidate[] = [];
  detectPrivateKeys(text, found);
  runPatternRules(text, found);
  detectAssignments(text, found);
  detectKvConnectionStrings(text, found);
  detectUrls(text, found);
  detectHighEntropy(text, found);
  // Placeholders already in the text (re-screening redacted content) are never secrets.
  const placeholders = [...text.matchAll(PLACEHOLDER_RE)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
  }));
  if (placeholders.length === 0) return found;
  return withoutOverlaps(found, placeholders);
}

/** A merged secret in the original text, with the skeleton text its detectors read (what is fingerprinted). */
interface FoundSecret extends SecretCandidate {
  seen: string;
}

/**
 * The secrets of `text`: detected on its skeleton, mapped back to the original and merged into one span per
 * overlapping group (the union) labelled with the most specific kind. The mapping is monotonic, so spans
 * that overlap in the skeleton overlap in the original too and one merge (in original offsets) suffices.
 */
function findSecrets(text: string): FoundSecret[] {
  const sk = skeleton(text);
  const cands = detectSecretCandidates(sk.text).map((c) => ({
    kind: c.kind,
    ...toOriginal(sk, c.start, c.end),
    seen: { start: c.start, end: c.end },
  }));
  const sorted = cands.sort((a, b) => a.start - b.start || b.end - a.end);
  type Group = { span: Span; seen: Span; best: (typeof cands)[number] };
  const merged: FoundSecret[] = [];
  const flush = (g: Group): void => {
    merged.push({ kind: g.best.kind, ...g.span, seen: sk.text.slice(g.seen.start, g.seen.end) });
  };
  const better = (a: SecretCandidate, b: SecretCandidate): boolean =>
    PRIORITY[a.kind] !== PRIORITY[b.kind]
      ? PRIORITY[a.kind] > PRIORITY[b.kind]
      : a.end - a.start > b.end - b.start;
  let cur: Group | undefined;
  for (const c of sorted) {
    if (cur && c.start < cur.span.end) {
      cur.span.end = Math.max(cur.span.end, c.end);
      cur.seen = { start: Math.min(cur.seen.start, c.seen.start), end: Math.max(cur.seen.end, c.seen.end) };
      if (better(c, cur.best)) cur.best = c;
      continue;
    }
    if (cur) flush(cur);
    cur = { span: { start: c.start, end: c.end }, seen: { ...c.seen }, best: c };
  }
  if (cur) flush(cur);
  return merged;
}

function fingerprintOf(raw: string, key: string | undefined): string {
  const h = key === undefined ? createHash('sha256') : createHmac('sha256', key);
  return h.update(raw, 'utf8').digest('hex').slice(0, 16);
}

/** True when `text` contains anything the screen would redact. For the outbox's secondary detector. */
export function containsSecret(text: string): boolean {
  return detectSecretCandidates(skeleton(text).text).length > 0;
}

/**
 * `text` with every secret replaced by `[secret:<kind>]` — no fingerprint, so nothing about the secret is
 * left. For text that leaves the service outside the write path: error messages and their details.
 */
export function redactSecrets(text: string): string {
  const spans = findSecrets(text);
  if (spans.length === 0) return text;
  let out = '';
  let pos = 0;
  for (const s of spans) {
    out += `${text.slice(pos, s.start)}[secret:${s.kind}]`;
    pos = s.end;
  }
  return out + text.slice(pos);
}

// ---------------------------------------------------------------------------------------------------------
// The stage
// ---------------------------------------------------------------------------------------------------------

/** An injection finding of the skeleton, in the offsets (and with an excerpt) of the text it came from. */
function inOriginal(sk: Skeleton, text: string, f: InjectionFinding): InjectionFinding {
  const { start, end } = toOriginal(sk, f.start, f.end);
  return { kind: f.kind, start, end, excerpt: text.slice(start, Math.min(end, start + 120)) };
}

const RESTRICTED_PII: ReadonlySet<PiiKind> = new Set<PiiKind>(['gov_id', 'card_number', 'iban']);

/** `text` with each secret replaced by its ref, and the secrets with their refs' offsets in the result. */
function redact(
  text: string,
  fingerprintKey: string | undefined,
): { redacted: string; secrets: ScreenedSecret[] } {
  let redacted = '';
  let pos = 0;
  const secrets: ScreenedSecret[] = [];
  for (const s of findSecrets(text)) {
    const fingerprint = fingerprintOf(s.seen, fingerprintKey);
    const ref = `[secret:${s.kind}:${fingerprint.slice(0, 8)}]`;
    redacted += text.slice(pos, s.start);
    secrets.push({
      ref,
      kind: s.kind,
      fingerprint,
      start: redacted.length,
      end: redacted.length + ref.length,
    });
    redacted += ref;
    pos = s.end;
  }
  redacted += text.slice(pos);
  return { redacted, secrets };
}

function labelFloorOf(secrets: readonly ScreenedSecret[], pii: readonly PiiFinding[]): LabelFloor {
  let labelFloor: LabelFloor = 'PUBLIC';
  if (secrets.length > 0) labelFloor = 'INTERNAL';
  if (pii.length > 0) labelFloor = 'CONFIDENTIAL';
  if (pii.some((p) => RESTRICTED_PII.has(p.kind))) labelFloor = 'RESTRICTED';
  return labelFloor;
}

export function screen(text: string, options: ScreenOptions = {}): ScreenResult {
  const { redacted, secrets } = redact(text, options.fingerprintKey);

  // PII and instruction-shaped text: found on the skeleton of the redacted text, reported in its offsets.
  const sk = skeleton(redacted);
  const pii = withoutOverlaps(
    detectPii(sk.text).map((p) => ({ kind: p.kind, ...toOriginal(sk, p.start, p.end) })),
    secrets,
  );
  const injection = detectInjection(sk.text).map((f) => inOriginal(sk, redacted, f));

  const reasons = [
    ...new Set([
      ...secrets.map((s) => `secret:${s.kind}`),
      ...pii.map((p) => `pii:${p.kind}`),
      ...injection.map((i) => `injection:${i.kind}`),
    ]),
  ];

  return {
    text: redacted,
    secrets,
    pii,
    injection,
    labelFloor: labelFloorOf(secrets, pii),
    canAutoAdmit: injection.length === 0,
    reasons,
  };
}
