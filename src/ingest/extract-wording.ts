/**
 * Wording for the default extractor: canonical statement text, filler stripped, clipped to the record limits,
 * and the body a sentence's patterns are matched against.
 */
import { canonicalText, findTimeExpression } from './normalize.ts';

/**
 * Drops trailing characters in `chars` with a loop: an unanchored `/[…]+$/` is quadratic on long runs that
 * do not reach the end, and sentence text is attacker-controlled.
 */
export function trimEndOf(s: string, chars: string): string {
  let e = s.length;
  while (e > 0 && chars.includes(s.charAt(e - 1))) e--;
  return s.slice(0, e);
}
export const WS = ' \t\n\r\f\v\u00a0';

const EMOJI = '[\\p{Extended_Pictographic}\\u{FE0F}\\u{200D}\\u{1F3FB}-\\u{1F3FF}\\u{1F1E6}-\\u{1F1FF}]';
/** A filler token at the very end; matched against a short tail only, so stripping stays linear. */
const FILLER_TAIL_RE = new RegExp(
  `(?:^|[\\s,;:.!-])(?:lol+|lmao|lmfao|rofl|ha(?:ha)+h?|he(?:he)+|jk|xd|[:;]-?[)(DPp]|<3|${EMOJI}+)$`,
  'iu',
);
const EMOJI_ONLY_RE = new RegExp(`^(?:${EMOJI}|\\s)*$`, 'u');
const LEADING_INTERJECTION_RE =
  /^(?:(?:oh|ooh|ah|well|yeah|yea|yes|yep|yup|no|nope|so|ok|okay|btw|fyi|also|and|but|then|hey|hi|hello|wow|haha|lol|actually|honestly|anyway|anyways|plus|alright|right|sure|great|cool|nice|thanks|totally|absolutely|oh\s+yeah|by\s+the\s+way)\b[,!.]*\s+)+/i;
const HEDGE_RE = /^(?:i|we)\s+(?:think|believe|guess|feel|suppose|reckon|heard)\s+(?:that\s+)?/i;

/** Strips trailing "lol", "haha", emoticons and emoji (and the punctuation around them), repeatedly. */
export function stripTrailingFiller(s: string): string {
  let cur = s.trim();
  for (;;) {
    const body = trimEndOf(cur, `${WS}.!,~`);
    const tailStart = Math.max(0, body.length - 32);
    const m = FILLER_TAIL_RE.exec(body.slice(tailStart));
    if (!m) return cur;
    const cut = tailStart + m.index + (/^[\s,;:.!-]/.test(m[0]) ? 1 : 0);
    cur = trimEndOf(body.slice(0, cut), `${WS},;:.!-`);
    if (cur === '') return '';
  }
}

/** Upper-cases the first letter of a plain first word; identifiers (payments-api, iPhone, refs) stay as written. */
const sentenceCase = (s: string): string =>
  /^[a-z]+(?:'[a-z]+)?(?=[\s,.;:!?]|$)/.test(s) ? s.charAt(0).toUpperCase() + s.slice(1) : s;

export function statementText(sentence: string): string {
  let t = stripTrailingFiller(canonicalText(sentence));
  t = t.replace(LEADING_INTERJECTION_RE, '');
  t = sentenceCase(t.replace(/^[\s,;:-]+/, ''));
  if (t !== '' && !/[.!?…"')\]]$/.test(t)) t += '.';
  return t;
}

export const OBJECT_MAX = 4000;
export const TEXT_MAX = 20_000;
export const SECRET_REF_RE = /\[secret:[a-z0-9_]{1,40}:[0-9a-f]{8}\]/g;

/** Clips to `max` chars with a trailing '…', never cutting a secret ref in half. */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  let cut = max - 1;
  for (const m of s.matchAll(SECRET_REF_RE)) {
    if (m.index < cut && m.index + m[0].length > cut) cut = m.index;
  }
  return `${s.slice(0, cut).trimEnd()}…`;
}

const SKIP_START_RE =
  /^(?:if|unless|whether|what|why|how|who|where|which|maybe|perhaps|would|could|can|do(?!\s+not\b)|does|did)\b/i;

/** Longer "sentences" (pasted logs, minified JSON) are not simple statements: OBSERVATION only. */
const MAX_PATTERN_SENTENCE = 1000;

/** Canonical, filler- and punctuation-stripped sentence body used for matching; null for non-statements. */
export function sentenceBody(sentence: string): { body: string; hedged: boolean } | null {
  let body = stripTrailingFiller(canonicalText(sentence));
  if (body === '' || EMOJI_ONLY_RE.test(body)) return null;
  body = trimEndOf(body, `${WS}"')]`);
  if (trimEndOf(body, '.!…').endsWith('?')) return null; // questions assert nothing
  body = trimEndOf(body, '.!…;:,').trim();
  if (body.length > MAX_PATTERN_SENTENCE) return null; // not a simple statement; keeps the regexes cheap
  body = body.replace(LEADING_INTERJECTION_RE, '').replace(/^[\s,;:-]+/, '');
  body = body.replace(/^["'(]+/, '').replace(/^\s+/, '');
  const t = findTimeExpression(body);
  if (t !== null && t.start === 0 && t.end < body.length) body = body.slice(t.end).replace(/^[\s,]+/, '');
  let hedged = false;
  const hedge = HEDGE_RE.exec(body);
  if (hedge && hedge[0].length < body.length) {
    body = body.slice(hedge[0].length);
    hedged = true;
  }
  if (body === '' || SKIP_START_RE.test(body)) return null;
  return { body, hedged };
}
