/**
 * Secret detectors that recognise a credential by its own shape: provider formats (a table of rules),
 * private key blocks and high-entropy tokens. They push candidates found in the skeleton; screen.ts merges
 * them.
 */
import type { SecretKind } from './screen-kinds.ts';
import { spanOf, type SecretCandidate } from './screen-spans.ts';

/** Token boundaries for provider prefixes (a token char on either side means we're inside something else). */
const TB = '(?<![A-Za-z0-9_-])';
const TE = '(?![A-Za-z0-9_-])';

const re = (source: string, flags = ''): RegExp => new RegExp(source, `gd${flags}`);

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

export function runPatternRules(text: string, out: SecretCandidate[]): void {
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

export function detectPrivateKeys(text: string, out: SecretCandidate[]): void {
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

export function detectHighEntropy(text: string, out: SecretCandidate[]): void {
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
