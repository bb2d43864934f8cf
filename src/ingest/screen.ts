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
 *  - Every regex here is either a single character class run, bounded, or has disjoint alternatives, so
 *    matching stays linear-ish on adversarial input (no nested ambiguous quantifiers), and overlap
 *    resolution is sort-and-sweep (no pairwise scans).
 */
import { createHash, createHmac } from 'node:crypto';
import { skeleton, toOriginal, type Skeleton } from './skeleton.ts';

// ---------------------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------------------

export const SECRET_KINDS = [
  'private_key',
  'aws_access_key_id',
  'aws_secret_access_key',
  'github_token',
  'gitlab_token',
  'slack_token',
  'slack_webhook',
  'stripe_key',
  'openai_key',
  'anthropic_key',
  'huggingface_token',
  'google_api_key',
  'gcp_service_account',
  'azure_storage_key',
  'azure_sas_signature',
  'twilio_api_key',
  'sendgrid_api_key',
  'npm_token',
  'pypi_token',
  'jwt',
  'bearer_credential',
  'basic_credential',
  'credential_url',
  'connection_string',
  'password_assignment',
  'high_entropy_token',
] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

export const PII_KINDS = ['email', 'phone', 'postal_address', 'card_number', 'iban', 'gov_id'] as const;
export type PiiKind = (typeof PII_KINDS)[number];

export const INJECTION_KINDS = [
  'role_marker',
  'override_instruction',
  'tool_call_syntax',
  'system_prompt_probe',
] as const;
export type InjectionKind = (typeof INJECTION_KINDS)[number];

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

export interface PiiFinding {
  kind: PiiKind;
  start: number;
  end: number;
}

export interface InjectionFinding {
  kind: InjectionKind;
  start: number;
  end: number;
  /** The matched (already redacted) text, clipped to 120 chars. */
  excerpt: string;
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
// Internals shared by all detectors
// ---------------------------------------------------------------------------------------------------------

interface Span {
  start: number;
  end: number;
}
interface SecretCandidate extends Span {
  kind: SecretKind;
}

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

/** Token boundaries for provider prefixes (a token char on either side means we're inside something else). */
const TB = '(?<![A-Za-z0-9_-])';
const TE = '(?![A-Za-z0-9_-])';

const re = (source: string, flags = ''): RegExp => new RegExp(source, `gd${flags}`);

function spanOf(m: RegExpMatchArray, group: number): Span | undefined {
  const idx = m.indices?.[group];
  return idx ? { start: idx[0], end: idx[1] } : undefined;
}

const overlaps = (a: Span, b: Span): boolean => a.start < b.end && b.start < a.end;

/**
 * Items that overlap none of the blockers, sorted by start. O((n + m) log m): blockers are merged into disjoint
 * sorted intervals and each item binary-searches the last interval starting before its end. (A naive
 * `filter(some(...))` is quadratic on adversarial inputs.)
 */
function withoutOverlaps<T extends Span>(items: readonly T[], blockers: readonly Span[]): T[] {
  const sorted = [...items].sort((a, b) => a.start - b.start);
  if (blockers.length === 0) return sorted;
  const merged: Span[] = [];
  for (const b of [...blockers].sort((x, y) => x.start - y.start)) {
    const last = merged[merged.length - 1];
    if (last && b.start <= last.end) last.end = Math.max(last.end, b.end);
    else merged.push({ start: b.start, end: b.end });
  }
  return sorted.filter((it) => {
    let lo = 0;
    let hi = merged.length - 1;
    let idx = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((merged[mid]?.start ?? Infinity) < it.end) {
        idx = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return idx === -1 || (merged[idx]?.end ?? -1) <= it.start;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Secret detectors
// ---------------------------------------------------------------------------------------------------------

interface PatternRule {
  kind: SecretKind;
  re: RegExp;
  /** Capture group holding the secret (0 = whole match). */
  group?: number;
  accept?: (value: string) => boolean;
}

const hasDigit = (s: string): boolean => /[0-9]/.test(s);
const mixedAlnum = (s: string): boolean => /[0-9]/.test(s) && /[A-Z]/.test(s) && /[a-z]/.test(s);

const PATTERN_RULES: readonly PatternRule[] = [
  { kind: 'aws_access_key_id', re: re(`${TB}(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}${TE}`) },
  {
    kind: 'aws_secret_access_key',
    re: re(
      `(?:aws[_-]?secret[_-]?(?:access[_-]?)?key|secret[_-]?access[_-]?key)["']?[ \\t]*(?:=>|:=|=|:)[ \\t]*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`,
      'i',
    ),
    group: 1,
  },
  {
    kind: 'github_token',
    re: re(`${TB}(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})${TE}`),
  },
  { kind: 'gitlab_token', re: re(`${TB}gl(?:pat|dt|rt|ptt|oas)-[A-Za-z0-9_-]{20,255}${TE}`) },
  { kind: 'slack_token', re: re(`${TB}(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,255}${TE}`), accept: hasDigit },
  {
    kind: 'slack_webhook',
    re: re(`https://hooks\\.slack\\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{10,300})`),
    group: 1,
  },
  {
    kind: 'stripe_key',
    re: re(`${TB}(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}|whsec_[A-Za-z0-9]{24,128})${TE}`),
  },
  { kind: 'anthropic_key', re: re(`${TB}sk-ant-[A-Za-z0-9_-]{20,255}${TE}`) },
  { kind: 'openai_key', re: re(`${TB}sk-(?!ant-)[A-Za-z0-9_-]{20,255}${TE}`), accept: mixedAlnum },
  { kind: 'huggingface_token', re: re(`${TB}hf_[A-Za-z0-9]{30,40}${TE}`), accept: mixedAlnum },
  { kind: 'google_api_key', re: re(`${TB}AIza[A-Za-z0-9_-]{35}${TE}`) },
  { kind: 'gcp_service_account', re: re(`"private_key_id"[ \\t]*:[ \\t]*"([a-f0-9]{40})"`), group: 1 },
  {
    kind: 'azure_storage_key',
    re: re(`(?:AccountKey|SharedAccessKey)[ \\t]*=[ \\t]*([A-Za-z0-9+/]{20,100}={0,2})`, 'i'),
    group: 1,
  },
  { kind: 'twilio_api_key', re: re(`${TB}SK[0-9a-f]{32}${TE}`) },
  { kind: 'sendgrid_api_key', re: re(`${TB}SG\\.[A-Za-z0-9_-]{16,32}\\.[A-Za-z0-9_-]{16,64}${TE}`) },
  { kind: 'npm_token', re: re(`${TB}npm_[A-Za-z0-9]{36}${TE}`) },
  { kind: 'pypi_token', re: re(`${TB}pypi-[A-Za-z0-9_-]{50,1000}${TE}`) },
  {
    kind: 'jwt',
    re: re(`${TB}eyJ[A-Za-z0-9_-]{8,8192}\\.[A-Za-z0-9_-]{4,65536}\\.[A-Za-z0-9_-]{0,8192}${TE}`),
  },
  {
    kind: 'bearer_credential',
    re: re(`\\bBearer[ \\t]+([A-Za-z0-9._~+/-]{16,8192}=*)`, 'i'),
    group: 1,
    accept: (v) => hasDigit(v),
  },
  {
    kind: 'basic_credential',
    re: re(`\\bBasic[ \\t]+([A-Za-z0-9+/]{6,2048}={0,2})(?![A-Za-z0-9+/=])`, 'i'),
    group: 1,
    accept: isBasicCredential,
  },
];

/** `Basic <b64>` only counts when the payload decodes to printable `user:pass`. */
function isBasicCredential(b64: string): boolean {
  if (b64.replace(/=+$/, '').length % 4 === 1) return false;
  const decoded = Buffer.from(b64, 'base64').toString('latin1');
  return decoded.length >= 2 && decoded.includes(':') && /^[\x20-\x7e]+$/.test(decoded);
}

function runPatternRules(text: string, out: SecretCandidate[]): void {
  for (const rule of PATTERN_RULES) {
    for (const m of text.matchAll(rule.re)) {
      const span = spanOf(m, rule.group ?? 0);
      if (!span || span.end <= span.start) continue;
      if (rule.accept && !rule.accept(text.slice(span.start, span.end))) continue;
      out.push({ kind: rule.kind, ...span });
    }
  }
}

// --- private keys: the whole BEGIN … END block, found with a linear two-pointer merge -------------------

const PK_BEGIN_RE = /-----BEGIN (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;
const PK_END_RE = /-----END (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;
/** Body of a truncated block: full-length base64 lines separated by real or JSON-escaped newlines. */
const PK_TRUNCATED_BODY_RE = /(?:(?:\s|\\[rn])+[A-Za-z0-9+/=]{16,})*/y;

function detectPrivateKeys(text: string, out: SecretCandidate[]): void {
  const begins = [...text.matchAll(PK_BEGIN_RE)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  if (begins.length === 0) return;
  const ends = [...text.matchAll(PK_END_RE)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  let j = 0;
  for (let i = 0; i < begins.length; i++) {
    const b = begins[i];
    if (!b) continue;
    while (j < ends.length && (ends[j]?.start ?? Infinity) < b.end) j++;
    const e = ends[j];
    const next = begins[i + 1];
    if (e && (!next || next.start > e.start)) {
      out.push({ kind: 'private_key', start: b.start, end: e.end });
    } else {
      PK_TRUNCATED_BODY_RE.lastIndex = b.end;
      const body = PK_TRUNCATED_BODY_RE.exec(text);
      out.push({ kind: 'private_key', start: b.start, end: b.end + (body ? body[0].length : 0) });
    }
  }
}

// --- key = value assignments --------------------------------------------------------------------------

const ASSIGN_RE =
  /(password|passwd|passphrase|(?<![A-Za-z])pass|pwd|client[_-]?secret|api[_-]?secret|(?:secret|private|encryption|signing|master|session)[_-]?key(?:[_-]?base)?|secret|api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|token)["']?[ \t]*(=>|:=|=(?!=)|:(?!:))[ \t]*(?:"([^"\r\n]{1,256})"|'([^'\r\n]{1,256})'|([^\s"'`,;&<>()[\]{}]{1,256}))/dgi;

const NON_VALUES = new Set([
  'null',
  'none',
  'nil',
  'true',
  'false',
  'undefined',
  'required',
  'optional',
  'string',
  'str',
  'bool',
  'boolean',
  'number',
  'int',
  'empty',
  'redacted',
  'hidden',
  'masked',
  'omitted',
  'secret',
  'password',
  'token',
]);

const PLACEHOLDER_VALUE_RE = /^(?:\$\{?|%\(|\{\{|<|\[secret:|your[_-])|^(?:\*+|x+|\.{3}|…)$/i;

function plausibleAssignedValue(
  keyword: string,
  sep: string,
  value: string,
  quoted: boolean,
  nextChar: string,
): boolean {
  const v = value.trim();
  if (v.length === 0) return false;
  if (PLACEHOLDER_VALUE_RE.test(v) || NON_VALUES.has(v.toLowerCase())) return false;
  if (/token/i.test(keyword) && v.length < 8) return false;
  const kw = keyword.toLowerCase();
  if (kw === 'pass' && v.length < 6) return false; // "pass: 3, fail: 0"
  if (kw === 'pwd' && /^[~/.]|\//.test(v)) return false; // PWD=/home/alice in an env dump
  if (quoted) return true;
  // Unquoted: reject things that read as code or prose rather than a literal credential.
  if (nextChar === '(' || nextChar === '[') return false; // getpass(), os.environ["X"]
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(v)) return false; // process.env.X, self.password
  if (/^[A-Za-z_]\w*$/.test(v) && /pass|secret|token|key|pwd/i.test(v)) return false; // = hashed_password
  if (sep === ':' && /^[A-Za-z]+$/.test(v)) return false; // "Password: must be …", "password: string"
  return true;
}

function detectAssignments(text: string, out: SecretCandidate[]): void {
  for (const m of text.matchAll(ASSIGN_RE)) {
    // `scheme://x-access-token:…@host` is URL userinfo; the URL detector owns it (and keeps the host).
    if (/:\/\/[^\s/?#@]*$/.test(text.slice(Math.max(0, m.index - 256), m.index))) continue;
    const keyword = m[1] ?? '';
    const sep = m[2] ?? '';
    const group = m[3] !== undefined ? 3 : m[4] !== undefined ? 4 : 5;
    const span = spanOf(m, group);
    if (!span) continue;
    const value = text.slice(span.start, span.end);
    if (!plausibleAssignedValue(keyword, sep, value, group !== 5, text.charAt(span.end))) continue;
    out.push({ kind: 'password_assignment', ...span });
  }
}

// --- ADO.NET / ODBC style connection strings: Server=…;User Id=…;Password=…; -----------------------------

const KV_PASSWORD_RE = /(?<![A-Za-z0-9_])(?:password|pwd)[ \t]*=[ \t]*([^;\r\n"']{1,256})/dgi;
const KV_CONTEXT_RE =
  /(?:server|data source|host|uid|user id|username|initial catalog|database|address|addr)[ \t]*=/i;

function detectKvConnectionStrings(text: string, out: SecretCandidate[]): void {
  for (const m of text.matchAll(KV_PASSWORD_RE)) {
    const span = spanOf(m, 1);
    if (!span) continue;
    // The surrounding line, bounded to 400 chars either side (unbounded scans would be quadratic).
    const before = text.slice(Math.max(0, m.index - 400), m.index);
    const after = text.slice(m.index, Math.min(text.length, span.end + 400));
    const nlAfter = after.indexOf('\n');
    const line =
      before.slice(before.lastIndexOf('\n') + 1) + (nlAfter === -1 ? after : after.slice(0, nlAfter));
    if (!line.includes(';') || !KV_CONTEXT_RE.test(line)) continue;
    const value = text.slice(span.start, span.end).trimEnd();
    if (!value || PLACEHOLDER_VALUE_RE.test(value)) continue;
    out.push({ kind: 'connection_string', start: span.start, end: span.start + value.length });
  }
}

// --- URLs: userinfo credentials and sensitive query/fragment parameters ---------------------------------

const URL_RE = /\b([A-Za-z][A-Za-z0-9+.-]{1,30}):\/\/([^\s"'<>`]{1,4096})/dg;

const CONNECTION_SCHEMES = new Set([
  'postgres',
  'postgresql',
  'mysql',
  'mariadb',
  'mongodb',
  'mongodb+srv',
  'redis',
  'rediss',
  'amqp',
  'amqps',
  'mssql',
  'sqlserver',
  'oracle',
  'cockroachdb',
  'clickhouse',
  'cassandra',
  'neo4j',
  'neo4j+s',
  'neo4j+ssc',
  'bolt',
  'bolt+s',
  'nats',
  'memcached',
  'couchbase',
  'couchbases',
]);

/** Query/fragment parameter names whose value is a credential; the number is the minimum value length. */
const SENSITIVE_PARAMS = new Map<string, number>([
  ['password', 1],
  ['passwd', 1],
  ['pwd', 1],
  ['pass', 1],
  ['secret', 4],
  ['client_secret', 4],
  ['token', 8],
  ['access_token', 8],
  ['refresh_token', 8],
  ['id_token', 8],
  ['auth_token', 8],
  ['session_token', 8],
  ['api_key', 8],
  ['apikey', 8],
  ['api-key', 8],
  ['key', 8],
  ['auth', 8],
  ['sig', 8],
  ['signature', 8],
  ['x-amz-signature', 8],
  ['x-amz-security-token', 8],
  ['x-goog-signature', 8],
]);

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function detectUrls(text: string, out: SecretCandidate[]): void {
  for (const m of text.matchAll(URL_RE)) {
    const scheme = (m[1] ?? '').toLowerCase();
    const rest = m[2] ?? '';
    const restSpan = spanOf(m, 2);
    if (!restSpan) continue;
    const base = restSpan.start;

    const authEnd = rest.search(/[/?#]/);
    const authority = rest.slice(0, authEnd === -1 ? rest.length : authEnd);
    const at = authority.lastIndexOf('@');
    if (at > 0) {
      const userinfo = authority.slice(0, at);
      const colon = userinfo.indexOf(':');
      if (colon !== -1 && colon < userinfo.length - 1) {
        out.push({
          kind: CONNECTION_SCHEMES.has(scheme) ? 'connection_string' : 'credential_url',
          start: base,
          end: base + at,
        });
      }
    }

    if (authEnd === -1) continue;
    const q = rest.indexOf('?', authEnd);
    const h = rest.indexOf('#', authEnd);
    const sections: Array<[number, number]> = [];
    if (q !== -1 && (h === -1 || q < h)) sections.push([q + 1, h === -1 ? rest.length : h]);
    if (h !== -1) sections.push([h + 1, rest.length]);
    for (const [from, to] of sections) {
      const params: Array<{ name: string; start: number; end: number }> = [];
      let pos = from;
      while (pos <= to) {
        let amp = rest.indexOf('&', pos);
        if (amp === -1 || amp > to) amp = to;
        const eq = rest.indexOf('=', pos);
        if (eq !== -1 && eq < amp) {
          params.push({ name: safeDecode(rest.slice(pos, eq)).toLowerCase(), start: eq + 1, end: amp });
        }
        pos = amp + 1;
      }
      const names = new Set(params.map((p) => p.name));
      for (const p of params) {
        const min = SENSITIVE_PARAMS.get(p.name);
        if (min === undefined) continue;
        let end = p.end;
        while (end > p.start && /[)\]}.,;:!?'"]/.test(rest.charAt(end - 1))) end--;
        const value = rest.slice(p.start, end);
        if (value.length < min || PLACEHOLDER_VALUE_RE.test(safeDecode(value))) continue;
        if (p.name === 'key' && /^[a-z_-]+$/.test(value)) continue; // ?key=value-ish words, not keys
        out.push({
          kind: p.name === 'sig' && names.has('sv') ? 'azure_sas_signature' : 'credential_url',
          start: base + p.start,
          end: base + end,
        });
      }
    }
  }
}

// --- high-entropy tokens -----------------------------------------------------------------------------

const HIGH_ENTROPY_RUN_RE = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/_-])/g;
const PATH_SEGMENT_RE = /^[a-z]+(?:[_-][a-z]+)*$/;

export function shannonEntropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/**
 * Share of characters inside word-like runs ([A-Z]?[a-z]{3,}) — ≥ 0.74 for camelCase identifiers, < 0.58 for
 * 99.9% of random base62/base64 tokens of 32–64 chars (measured), hence the 0.6 cut-off.
 */
function wordishShare(s: string): number {
  let covered = 0;
  for (const m of s.matchAll(/[A-Z]?[a-z]{3,}/g)) covered += m[0].length;
  return covered / s.length;
}

function isHighEntropyToken(token: string): boolean {
  const body = token.replace(/=+$/, '');
  if (body.length < 32) return false;
  if (/^[0-9a-fA-F-]+$/.test(body)) return false; // git SHAs, digests, UUIDs
  if (/^sha(?:1|224|256|384|512)-/i.test(body)) return false; // subresource-integrity hashes
  if (!mixedAlnum(body)) return false;
  if (wordishShare(body) > 0.6) return false; // getUserAccountSettingsForOrganisation2
  return shannonEntropy(body) >= 4.0;
}

function detectHighEntropy(text: string, out: SecretCandidate[]): void {
  for (const m of text.matchAll(HIGH_ENTROPY_RUN_RE)) {
    const run = m[0];
    if (text.slice(Math.max(0, m.index - 8), m.index).endsWith(';base64,')) continue; // data: URIs are content
    const segments = run.includes('/') ? run.split('/') : [run];
    const pathLike = segments.length > 1 && segments.some((s) => s.length >= 4 && PATH_SEGMENT_RE.test(s));
    if (!pathLike) {
      if (isHighEntropyToken(run))
        out.push({ kind: 'high_entropy_token', start: m.index, end: m.index + run.length });
      continue;
    }
    let offset = m.index;
    for (const seg of segments) {
      if (isHighEntropyToken(seg))
        out.push({ kind: 'high_entropy_token', start: offset, end: offset + seg.length });
      offset += seg.length + 1;
    }
  }
}

// --- assembling ----------------------------------------------------------------------------------------

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
// PII (run on redacted text)
// ---------------------------------------------------------------------------------------------------------

const PII_SEVERITY: Record<PiiKind, number> = {
  gov_id: 3,
  card_number: 3,
  iban: 3,
  phone: 2,
  email: 2,
  postal_address: 1,
};

const EMAIL_RE =
  /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;

const PHONE_INTL_RE = /(?<![\w+])\+[1-9][\d .()-]{6,22}\d/g;
const PHONE_NANP_RE =
  /(?<![\w.+/-])(?:1[ .-]?)?(?:\(([2-9]\d{2})\)[ ]?([2-9]\d{2})[ .-]|([2-9]\d{2})([ .-])([2-9]\d{2})\4)\d{4}(?!\w|[.\-/]\d)/g;
const PHONE_TRUNK_RE = /(?<![\w.+/-])0\d{2,4}[ -]\d{3,4}[ -]?\d{3,4}(?!\w|[.\-/]\d)/g;
/** Numbers introduced like this are identifiers, not phone numbers. */
const NOT_PHONE_CUE_RE =
  /\b(?:order|invoice|ref(?:erence)?|ticket|case|po|sku|tracking|isbn|issn|serial|part|account|acct|build|version|ver|v)\s*(?:no\.?|num(?:ber)?|id|#)?\s*[:#]?\s*$/i;

const CARD_RE = /(?<![\w.-])\d(?:[ -]?\d){12,18}(?![\w]|[.-]\d)/g;
const CARD_IIN_RE = /^(?:4|5[1-5]|2[2-7]|3[47]|3[0689]|35|6(?:011|5|4[4-9]|22))/;

const IBAN_RE = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g;
/** IBAN lengths per country (SWIFT IBAN registry, common subset). Unknown countries are not matched. */
// prettier-ignore
const IBAN_LENGTH: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, CH: 21, CR: 22, CY: 28,
  CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23,
  GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20,
  LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30,
  NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, SA: 24, SE: 24, SI: 19, SK: 24,
  SM: 27, TN: 24, TR: 26, UA: 29, VG: 24, XK: 20,
};

const SSN_RE = /(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w]|-\d)/g;
const UK_NINO_RE =
  /\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g;
/** Spanish DNI (8 digits + check letter) and NIE (X/Y/Z + 7 digits + check letter). */
const ES_DNI_RE = /\b([XYZ]?)(\d{7,8})-?([A-Z])\b/g;
const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

const STREET_RE =
  /(?<![\w.,:/-])\d{1,5}[A-Za-z]?[ \t]{1,3}((?:[A-Z][A-Za-z'.-]{0,30}[ \t]{1,3}){1,4}?)(?:Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Boulevard|Blvd|Drive|Dr|Court|Ct|Place|Pl|Terrace|Way|Close|Crescent|Highway|Hwy|Parkway|Pkwy|Square|Sq|Gardens|Row|Mews)\b\.?/g;
// prettier-ignore
const NOT_STREET_WORDS = new Set([
  'google', 'one', 'hard', 'flash', 'thumb', 'usb', 'shared', 'network', 'external', 'solid', 'state',
  'disk', 'test', 'cloud', 'team', 'my', 'c', 'd',
]);
const UK_POSTCODE_RE = /\b(?:[A-Z]{1,2}\d[A-Z\d]?|GIR) \d[ABD-HJLNP-UW-Z]{2}\b/g;
const US_STATE_ZIP_RE =
  /(,[ \t]*)?\b(?:A[KLRZ]|C[AOT]|D[CE]|FL|GA|HI|I[ADLN]|K[SY]|LA|M[ADEINOST]|N[CDEHJMVY]|O[HKR]|PA|RI|S[CD]|T[NX]|UT|V[AT]|W[AIVY])[ \t]+\d{5}(-\d{4})?(?![\w-])/dg;

function luhnOk(digits: string): boolean {
  let sum = 0;
  let dbl = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (dbl) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    dbl = !dbl;
  }
  return sum % 10 === 0;
}

function ibanChecksumOk(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let rem = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const val = code >= 65 ? String(code - 55) : ch;
    for (const d of val) rem = (rem * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return rem === 1;
}

function detectPii(text: string): PiiFinding[] {
  const found: PiiFinding[] = [];
  const push = (kind: PiiKind, start: number, end: number): void => {
    found.push({ kind, start, end });
  };

  for (const m of text.matchAll(EMAIL_RE)) {
    const end = m.index + m[0].length;
    if (/^git@/i.test(m[0]) && text.charAt(end) === ':') continue; // git@github.com:org/repo
    push('email', m.index, end);
  }

  const phoneCandidates = [
    ...[...text.matchAll(PHONE_INTL_RE)].map((m) => ({ m, intl: true })),
    ...[...text.matchAll(PHONE_NANP_RE)].map((m) => ({ m, intl: false })),
    ...[...text.matchAll(PHONE_TRUNK_RE)].map((m) => ({ m, intl: false })),
  ];
  for (const { m, intl } of phoneCandidates) {
    const s = m[0];
    const digits = s.replace(/\D/g, '').length;
    if (intl ? digits < 8 || digits > 15 : digits < 10 || digits > 11) continue;
    if (/[ .()-]{2,}/.test(s.replace(/\) /g, ')').replace(/ \(/g, '('))) continue; // ragged separators
    if ((s.match(/\(/g)?.length ?? 0) !== (s.match(/\)/g)?.length ?? 0)) continue;
    if (intl && /^\+\d{4}-\d{2}-\d{2}/.test(s)) continue; // timezone-ish / date-ish
    if (NOT_PHONE_CUE_RE.test(text.slice(Math.max(0, m.index - 24), m.index))) continue;
    push('phone', m.index, m.index + s.length);
  }

  for (const m of text.matchAll(CARD_RE)) {
    const s = m[0];
    const digits = s.replace(/\D/g, '');
    if (digits.length < 13 || digits.length > 19) continue;
    const seps = new Set(s.replace(/\d/g, ''));
    if (seps.size > 1) continue;
    if (!CARD_IIN_RE.test(digits) || !luhnOk(digits)) continue;
    push('card_number', m.index, m.index + s.length);
  }

  for (const m of text.matchAll(IBAN_RE)) {
    const s = m[0];
    const len = IBAN_LENGTH[s.slice(0, 2)];
    if (len === undefined) continue;
    // Take exactly `len` alphanumerics from the start (the greedy match may have run into a following word).
    let taken = 0;
    let i = 0;
    while (i < s.length && taken < len) {
      if (s.charAt(i) !== ' ') taken++;
      i++;
    }
    if (taken !== len) continue;
    const next = s.charAt(i);
    if (next !== '' && next !== ' ') continue; // must end on a group boundary
    const compact = s.slice(0, i).replace(/ /g, '');
    if (!ibanChecksumOk(compact)) continue;
    push('iban', m.index, m.index + i);
  }

  for (const m of text.matchAll(SSN_RE)) push('gov_id', m.index, m.index + m[0].length);
  for (const m of text.matchAll(UK_NINO_RE)) push('gov_id', m.index, m.index + m[0].length);
  for (const m of text.matchAll(ES_DNI_RE)) {
    const prefix = m[1] ?? '';
    const num = m[2] ?? '';
    if (prefix === '' ? num.length !== 8 : num.length !== 7) continue;
    const n = Number(`${prefix === '' ? '' : 'XYZ'.indexOf(prefix)}${num}`);
    if (DNI_LETTERS.charAt(n % 23) !== m[3]) continue;
    push('gov_id', m.index, m.index + m[0].length);
  }

  for (const m of text.matchAll(STREET_RE)) {
    const words = (m[1] ?? '').trim().split(/[ \t]+/);
    const last = (words[words.length - 1] ?? '').toLowerCase();
    if (/(?:Drive|Dr)\.?$/.test(m[0]) && NOT_STREET_WORDS.has(last)) continue; // "3 Google Drive folders"
    push('postal_address', m.index, m.index + m[0].replace(/[ \t]+$/, '').length);
  }
  for (const m of text.matchAll(UK_POSTCODE_RE)) push('postal_address', m.index, m.index + m[0].length);
  for (const m of text.matchAll(US_STATE_ZIP_RE)) {
    if (m[1] === undefined && m[2] === undefined) continue; // bare "CA 94103" needs a comma or ZIP+4
    push('postal_address', m.index + (m[1]?.length ?? 0), m.index + m[0].length);
  }

  return resolvePiiOverlaps(found);
}

/**
 * Within each cluster of overlapping findings keep the more severe kind, then the longer span, greedily.
 * Clusters are found with one sweep, so only (small) clusters pay the quadratic greedy step.
 */
function resolvePiiOverlaps(found: PiiFinding[]): PiiFinding[] {
  const byStart = [...found].sort((a, b) => a.start - b.start || b.end - a.end);
  const rank = (a: PiiFinding, b: PiiFinding): number =>
    PII_SEVERITY[b.kind] - PII_SEVERITY[a.kind] || b.end - b.start - (a.end - a.start) || a.start - b.start;
  const kept: PiiFinding[] = [];
  let i = 0;
  while (i < byStart.length) {
    const first = byStart[i];
    if (!first) break;
    const cluster: PiiFinding[] = [first];
    let reach = first.end;
    i++;
    for (let next = byStart[i]; next && next.start < reach; next = byStart[++i]) {
      cluster.push(next);
      reach = Math.max(reach, next.end);
    }
    const chosen: PiiFinding[] = [];
    for (const f of cluster.sort(rank)) if (!chosen.some((c) => overlaps(c, f))) chosen.push(f);
    kept.push(...chosen);
  }
  return kept.sort((a, b) => a.start - b.start || a.end - b.end);
}

// ---------------------------------------------------------------------------------------------------------
// Instruction-shaped text (run on redacted text)
// ---------------------------------------------------------------------------------------------------------

const W = '\\s{1,16}'; // bounded whitespace between words

interface InjectionRule {
  kind: InjectionKind;
  re: RegExp;
  /** `firstStrikeOpen` is the index of the first `<s>` in the text (-1 if none), computed once per call. */
  accept?: (m: RegExpExecArray, firstStrikeOpen: number) => boolean;
}

const INJECTION_RULES: readonly InjectionRule[] = [
  // --- role markers ---
  {
    kind: 'role_marker',
    re: /<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|begin_of_text|start_header_id|end_header_id|eot_id|eom_id|ipython)\|>/g,
  },
  { kind: 'role_marker', re: /\[\/?INST\]|<<\/?SYS>>/g },
  {
    kind: 'role_marker',
    re: /^[ \t]*#{1,6}[ \t]*(?:system|instructions?|assistant|user|human|response)[ \t]*:/gim,
  },
  { kind: 'role_marker', re: /^[ \t]*(?:SYSTEM|Human|Assistant)[ \t]*:/gm },
  { kind: 'role_marker', re: /<\/?system(?:[_-][a-z]{1,20})?>/gi },
  // `</s>` is also HTML strikethrough: only a role marker when no `<s>` opens it.
  { kind: 'role_marker', re: /<\/s>/g, accept: (m, open) => open === -1 || open > m.index },

  // --- override instructions ---
  {
    kind: 'override_instruction',
    re: new RegExp(
      `\\b(?:ignore|disregard|forget|override|skip|discard)${W}(?:(?:all|any|each)${W})?(?:of${W})?(?:(?:the|your|my|these|those)${W})?(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system)${W}(?:instructions?|prompts?|directions?|directives?|rules|guidelines|commands?|messages?|context)\\b`,
      'gi',
    ),
  },
  {
    kind: 'override_instruction',
    re: new RegExp(
      `\\b(?:ignore|disregard|forget)${W}(?:(?:all|any)${W})?(?:of${W})?(?:your|all)${W}(?:instructions|rules|guidelines|programming|system${W}prompt)\\b`,
      'gi',
    ),
  },
  { kind: 'override_instruction', re: new RegExp(`\\bforget${W}(?:about${W})?everything\\b`, 'gi') },
  {
    kind: 'override_instruction',
    re: new RegExp(
      `\\byou${W}are${W}now${W}(?:no${W}longer\\b|(?:(?:a|an|the|my)${W})?(?:[\\w-]{1,20}${W}){0,3}?(?:AI|assistant|model|chatbot|bot|persona|character|DAN|jailbroken|unrestricted|unfiltered|uncensored|in${W}(?:developer|god|DAN|jailbreak|admin)${W}mode)\\b)`,
      'gi',
    ),
  },
  {
    kind: 'override_instruction',
    re: new RegExp(`\\bfrom${W}now${W}on,?${W}you${W}(?:are|will|must)\\b`, 'gi'),
  },
  {
    kind: 'override_instruction',
    re: new RegExp(`\\b(?:new|updated|revised|real)${W}(?:system${W})?instructions?[ \\t]*:`, 'gi'),
  },

  // --- tool-call syntax ---
  {
    kind: 'tool_call_syntax',
    re: /<\/?(?:tool_calls?|function_calls?|tool_use|tool_result|function_results?)\b[^<>]{0,200}>/gi,
  },
  {
    kind: 'tool_call_syntax',
    re: /<(?:[a-z]{1,16}:)?invoke\s{1,8}name\s*=|<\|(?:python_tag|tool_call)\|>/gi,
  },
  { kind: 'tool_call_syntax', re: /"(?:function_call|tool_calls)"\s{0,8}:/g },
  {
    kind: 'tool_call_syntax',
    re: /\{\s{0,16}"(?:(?:tool|tool_name|function)"\s{0,8}:\s{0,8}"[^"\r\n]{1,128}"\s{0,8},\s{0,16}"(?:arguments|args|parameters|input|tool_input)|name"\s{0,8}:\s{0,8}"[^"\r\n]{1,128}"\s{0,8},\s{0,16}"arguments)"\s{0,8}:/g,
  },

  // --- system prompt probes ---
  {
    kind: 'system_prompt_probe',
    re: new RegExp(
      `\\b(?:reveal|print|show|output|repeat|display|dump|leak|recite|share|tell${W}me|give${W}me|what${W}(?:is|are|was|were))${W}(?:me${W})?(?:all${W})?your${W}(?:(?:full|entire|exact|original|initial|hidden|secret|complete)${W})?(?:system${W}(?:prompt|message|instructions?)|(?:initial|original|hidden|secret)${W}(?:instructions|prompt))\\b`,
      'gi',
    ),
  },
  {
    kind: 'system_prompt_probe',
    re: new RegExp(
      `\\b(?:reveal|leak|dump|print|output|repeat)${W}the${W}(?:(?:full|entire|hidden|exact)${W})?system${W}prompt\\b`,
      'gi',
    ),
  },
  {
    kind: 'system_prompt_probe',
    re: new RegExp(
      `\\brepeat${W}(?:all${W})?(?:of${W})?(?:the${W})?(?:words|text|everything)${W}(?:above|before)\\b`,
      'gi',
    ),
  },
];

function detectInjection(text: string): InjectionFinding[] {
  const raw: InjectionFinding[] = [];
  const firstStrikeOpen = text.indexOf('<s>');
  for (const rule of INJECTION_RULES) {
    for (const m of text.matchAll(rule.re)) {
      if (rule.accept && !rule.accept(m, firstStrikeOpen)) continue;
      // Line-anchored markers may include leading indentation; report from the first visible char.
      const lead = m[0].length - m[0].trimStart().length;
      const start = m.index + lead;
      const end = m.index + m[0].length;
      raw.push({ kind: rule.kind, start, end, excerpt: text.slice(start, Math.min(end, start + 120)) });
    }
  }
  // Several rules of one kind may hit the same words: keep the first of each overlapping same-kind run.
  raw.sort((a, b) => a.kind.localeCompare(b.kind) || a.start - b.start || b.end - a.end);
  const found: InjectionFinding[] = [];
  let prev: InjectionFinding | undefined;
  for (const f of raw) {
    if (prev && prev.kind === f.kind && f.start < prev.end) continue;
    found.push(f);
    prev = f;
  }
  return found.sort((a, b) => a.start - b.start || a.end - b.end);
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

export function screen(text: string, options: ScreenOptions = {}): ScreenResult {
  const spans = findSecrets(text);

  let redacted = '';
  let pos = 0;
  const secrets: ScreenedSecret[] = [];
  for (const s of spans) {
    const fingerprint = fingerprintOf(s.seen, options.fingerprintKey);
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

  // PII and instruction-shaped text: found on the skeleton of the redacted text, reported in its offsets.
  const sk = skeleton(redacted);
  const pii = withoutOverlaps(
    detectPii(sk.text).map((p) => ({ kind: p.kind, ...toOriginal(sk, p.start, p.end) })),
    secrets,
  );
  const injection = detectInjection(sk.text).map((f) => inOriginal(sk, redacted, f));

  let labelFloor: LabelFloor = 'PUBLIC';
  if (secrets.length > 0) labelFloor = 'INTERNAL';
  if (pii.length > 0) labelFloor = 'CONFIDENTIAL';
  if (pii.some((p) => RESTRICTED_PII.has(p.kind))) labelFloor = 'RESTRICTED';

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
    labelFloor,
    canAutoAdmit: injection.length === 0,
    reasons,
  };
}
