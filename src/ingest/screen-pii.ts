/** PII detectors, run on the skeleton of the redacted text. */
import type { PiiFinding, PiiKind } from './screen-kinds.ts';
import { overlaps } from './screen-spans.ts';

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

type Push = (kind: PiiKind, start: number, end: number) => void;

function detectEmails(text: string, push: Push): void {
  for (const m of text.matchAll(EMAIL_RE)) {
    const end = m.index + m[0].length;
    if (/^git@/i.test(m[0]) && text.charAt(end) === ':') continue; // git@github.com:org/repo
    push('email', m.index, end);
  }
}

function detectPhones(text: string, push: Push): void {
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
}

function detectCards(text: string, push: Push): void {
  for (const m of text.matchAll(CARD_RE)) {
    const s = m[0];
    const digits = s.replace(/\D/g, '');
    if (digits.length < 13 || digits.length > 19) continue;
    const seps = new Set(s.replace(/\d/g, ''));
    if (seps.size > 1) continue;
    if (!CARD_IIN_RE.test(digits) || !luhnOk(digits)) continue;
    push('card_number', m.index, m.index + s.length);
  }
}

function detectIbans(text: string, push: Push): void {
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
}

function detectGovIds(text: string, push: Push): void {
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
}

function detectPostalAddresses(text: string, push: Push): void {
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
}

/** Run in this order: overlap resolution breaks exact ties by the order findings were pushed. */
const PII_DETECTORS = [
  detectEmails,
  detectPhones,
  detectCards,
  detectIbans,
  detectGovIds,
  detectPostalAddresses,
];

export function detectPii(text: string): PiiFinding[] {
  const found: PiiFinding[] = [];
  const push: Push = (kind, start, end) => {
    found.push({ kind, start, end });
  };
  for (const detect of PII_DETECTORS) detect(text, push);
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
