/**
 * Secret detectors that recognise a credential by its context: `key = value` assignments, ADO.NET/ODBC
 * connection strings, and URLs carrying userinfo or sensitive query/fragment parameters.
 */
import { spanOf, type SecretCandidate } from './screen-spans.ts';

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

export function detectAssignments(text: string, out: SecretCandidate[]): void {
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

export function detectKvConnectionStrings(text: string, out: SecretCandidate[]): void {
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

export function detectUrls(text: string, out: SecretCandidate[]): void {
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
    detectUrlParams(rest, base, authEnd, out);
  }
}

/** Sensitive parameters of the query and the fragment after `authEnd` in `rest` (which starts at `base`). */
function detectUrlParams(rest: string, base: number, authEnd: number, out: SecretCandidate[]): void {
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
