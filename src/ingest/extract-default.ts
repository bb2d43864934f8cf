/**
 * The default extractor — stage 3 of the ingest pipeline without a model: deterministic, offline and pure
 * (no clock, no randomness, no I/O), so the same episode always yields the same statements.
 *
 * What it produces, per conversational turn:
 *  - exactly one OBSERVATION "<speaker> said <text>" citing the whole turn (confidence 0.6). This is what makes
 *    long-term conversational recall work: every turn becomes a cited record;
 *  - per sentence, at most one typed statement from a small set of subject–predicate–object patterns, citing
 *    exactly that sentence (`episodeText.slice(span.start, span.end)` is the sentence, punctuation included):
 *      FACT        "X is/are/was Y" (→ 'is' / 'is not'), "X uses / runs on / depends on / is built on Y",
 *                  changes that later supersede older facts: "X moved to Y" (→ 'is in'), "X switched/migrated
 *                  to Y" (→ 'uses'), "X changed to Y" / "X became Y" / "X is now Y" (→ 'is'),
 *                  "X is no longer Y" (→ 'is not'), "X no longer uses Y" (→ 'no longer uses')
 *      PREFERENCE  "I/we prefer/like/love/enjoy/hate Y", "I'd rather Y", "X prefers Y"; negated likes
 *                  ("I don't like Y") → 'dislikes'
 *      DECISION    "we decided/agreed/chose/opted to X because/since/as Y" (also "Because Y, we decided to X"),
 *                  rationale Y. A decision without a stated reason is not emitted (a Decision needs a
 *                  rationale), and the sentence yields no other typed statement either
 *      CONSTRAINT  imperative rules "Never/Always/Do not/Don't/Must (not) X" (subject 'you', the implied
 *                  subject of an imperative) and "X must (not)/shall (not)/must never/should not Y";
 *                  predicates normalised to 'must', 'must not', 'never', 'always', 'should not'. "We always
 *                  go camping" is a habit, not a rule: never/always only make a CONSTRAINT as imperatives
 *      PROCEDURE   "To X, first Y, then Z" (subject X) and a numbered list ("1. …", "2. …") introduced by a line
 *                  ending in ':' (subject = that line); the span covers the heading and the steps.
 *
 * Decisions:
 *  - Only conversational turns count: roles system, developer, tool, function (and tool_* / ipython) are
 *    skipped; 'user', 'assistant', 'human', 'agent' and any other role or speaker name count. Turns whose
 *    canonical text is empty are skipped. Turns whose offsets disagree with their text are rejected
 *    (BAD_USER_INPUT): a citation that does not point at the text it claims is worse than none.
 *  - First person maps to the speaker (the role when there is no speaker name): "I"/"we" → speaker,
 *    "my X"/"our X" → "<speaker>'s X". Subjects that are other pronouns ("it", "she", "that", "you" in
 *    statements) are not resolved (no coreference here), so those sentences yield only the OBSERVATION.
 *  - Questions, conditionals ("If …") and progressive forms ("I'm going …") yield no typed statement.
 *  - Leading interjections ("Yeah,", "Oh", "btw") and a leading time phrase are skipped when matching; hedges
 *    ("I think that …") lower confidence by 0.1. Confidence otherwise ranges 0.5 ("X was Y") to 0.75
 *    (decisions, "X is now Y").
 *  - Canonical wording: whitespace collapsed, quotes/dashes folded (see canonicalText), trailing filler
 *    ("lol", "haha", emoticons, emoji) stripped, first letter upper-cased, a final '.' added when the sentence
 *    has no terminal punctuation; predicates are lower-case. Nothing is paraphrased beyond that. The
 *    OBSERVATION keeps the turn's canonical text as is (filler included: it is what was said).
 *  - Objects stop at the next clause (", and they …", "; ", " - ") and lose a trailing time phrase
 *    ("moved to Kubernetes last May" → object "Kubernetes", timeExpression "last May"); the statement text
 *    keeps the whole sentence. Sentences over 1,000 chars (pasted logs, JSON) get no typed statement.
 *  - Secret refs (`[secret:kind:hex]`) are ordinary tokens: kept verbatim, never treated as names.
 *  - `about` lists name-like mentions of the subject and object (capitalised words, identifiers such as
 *    payments-api, code-ish tokens); type is 'person'/'agent' for the speaker (by role) and 'person' after a
 *    title (Dr., Mrs., …), null otherwise. `timeExpression` is the first time phrase in the sentence (for the
 *    OBSERVATION: in the turn).
 *  - Objects longer than 4,000 chars and texts longer than 20,000 are clipped (with '…') to the record limits,
 *    never inside a secret ref.
 */
import { badInput } from '../domain/errors.ts';
import { isConversationalRole } from '../ports/extractor.ts';
import type {
  CitedSpan,
  EpisodeTurn,
  ExtractedStatement,
  ExtractionInput,
  Extractor,
} from '../ports/extractor.ts';
import { canonicalText, findTimeExpression } from './normalize.ts';

export const DEFAULT_EXTRACTOR_ID = 'default-extractor@1';

/** Re-exported: the role rule belongs to the Extractor port, shared by every extractor. */
export { isConversationalRole } from '../ports/extractor.ts';

// ---------------------------------------------------------------------------------------------------------
// Sentences
// ---------------------------------------------------------------------------------------------------------

export interface SentenceSpan {
  /** Offsets into the text passed to splitSentences. */
  start: number;
  end: number;
  text: string;
}

/** Abbreviations that never end a sentence. */
const NEVER_FINAL: ReadonlySet<string> = new Set([
  'dr',
  'mr',
  'mrs',
  'ms',
  'mx',
  'prof',
  'st',
  'mt',
  'jr',
  'sr',
  'capt',
  'gen',
  'sen',
  'rep',
  'gov',
  'lt',
  'col',
  'sgt',
  'rev',
  'hon',
  'e.g',
  'i.e',
  'eg',
  'ie',
  'cf',
  'viz',
  'vs',
  'dept',
]);
/** Abbreviations that are only abbreviations before a number ("No. 5", "Fig. 2"): "I said no. Then …" splits. */
const NUMERIC_ABBREVIATIONS: ReadonlySet<string> = new Set([
  'no',
  'nos',
  'vol',
  'fig',
  'ca',
  'ft',
  'p',
  'pp',
  'ch',
  'sec',
]);
/** Abbreviations that end a sentence when a capitalised word follows ("… at 5 p.m. Then …"). */
const MAYBE_FINAL: ReadonlySet<string> = new Set(['etc', 'approx', 'a.m', 'p.m']);
/**
 * Abbreviations that often precede a name: they end a sentence only when the next word is a common sentence
 * opener ("… in the U.S. It was …"), not before a name ("the U.S. Army", "Acme Inc. Board").
 */
const NAME_PREFIX_FINAL: ReadonlySet<string> = new Set(['inc', 'ltd', 'co', 'corp']);
const SENTENCE_OPENERS: ReadonlySet<string> = new Set(
  (
    'a an the this that these those there here it i we you he she they my our your his her their what when ' +
    'where why how who which if so but and or then also now today yesterday tomorrow yes no yeah ok okay oh ' +
    "please thanks let we're i'm it's that's there's anyway btw after before later next last since"
  ).split(' '),
);

const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v';
const isTerminal = (c: string): boolean => c === '.' || c === '!' || c === '?' || c === '…';
const isCloser = (c: string): boolean =>
  c === '"' || c === "'" || c === ')' || c === ']' || c === '”' || c === '’';

/**
 * Drops trailing characters in `chars` with a loop: an unanchored `/[…]+$/` is quadratic on long runs that
 * do not reach the end, and sentence text is attacker-controlled.
 */
function trimEndOf(s: string, chars: string): string {
  let e = s.length;
  while (e > 0 && chars.includes(s.charAt(e - 1))) e--;
  return s.slice(0, e);
}
const WS = ' \t\n\r\f\v\u00a0';

/** Whether the period at `i` (the last char of a terminal run of length 1) belongs to an abbreviation. */
function isAbbreviation(text: string, i: number, nextWord: string): boolean {
  const next = nextWord.charAt(0);
  let k = i;
  while (k > 0 && /[A-Za-z.]/.test(text.charAt(k - 1))) k--;
  const token = text.slice(k, i).toLowerCase();
  if (token === '') {
    // A list marker ("1." at the start of a line) is not a sentence end.
    let d = i;
    while (d > 0 && /[0-9]/.test(text.charAt(d - 1))) d--;
    if (d === i) return false;
    let b = d;
    while (b > 0 && isSpace(text.charAt(b - 1))) b--;
    return b === 0 || text.charAt(b - 1) === '\n';
  }
  if (/[0-9]/.test(text.charAt(k - 1))) return false;
  if (NEVER_FINAL.has(token)) return true;
  if (NUMERIC_ABBREVIATIONS.has(token)) return /[0-9]/.test(next);
  if (/^[a-z]$/.test(token) && /[A-Z]/.test(text.charAt(i - 1))) return true; // initials: "J. R. R. Tolkien"
  if (MAYBE_FINAL.has(token)) return !/[A-Z]/.test(next);
  if (NAME_PREFIX_FINAL.has(token) || /^(?:[a-z]\.)+[a-z]$/.test(token)) {
    return !/[A-Z]/.test(next) || !SENTENCE_OPENERS.has(nextWord.toLowerCase().replace(/[^a-z']+$/, ''));
  }
  return false;
}

/**
 * Sentences with offsets. A sentence ends at a run of . ! ? … (plus closing quotes/brackets) followed by
 * whitespace, or at a newline. Decimals ("3.5"), URLs and secret refs never have whitespace after an inner
 * dot, so they stay whole; abbreviations and list markers are recognised. Spans are trimmed of whitespace.
 */
export function splitSentences(text: string): SentenceSpan[] {
  const out: SentenceSpan[] = [];
  const push = (from: number, to: number): void => {
    let s = from;
    let e = to;
    while (s < e && /\s/.test(text.charAt(s))) s++;
    while (e > s && /\s/.test(text.charAt(e - 1))) e--;
    if (e > s) out.push({ start: s, end: e, text: text.slice(s, e) });
  };
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === '\n') {
      push(start, i);
      start = i + 1;
      i++;
      continue;
    }
    if (!isTerminal(c)) {
      i++;
      continue;
    }
    let j = i;
    while (j < text.length && isTerminal(text.charAt(j))) j++;
    const runEnd = j;
    while (j < text.length && isCloser(text.charAt(j))) j++;
    if (j < text.length && !/\s/.test(text.charAt(j))) {
      i = j;
      continue;
    }
    let k = j;
    while (k < text.length && isSpace(text.charAt(k))) k++;
    const next = text.charAt(k);
    const nextWord = /^[^\s]*/.exec(text.slice(k, k + 40))?.[0] ?? '';
    if (runEnd - i === 1 && c === '.' && next !== '' && next !== '\n' && isAbbreviation(text, i, nextWord)) {
      i = j;
      continue;
    }
    push(start, j);
    start = j;
    i = j;
  }
  push(start, text.length);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Wording
// ---------------------------------------------------------------------------------------------------------

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

function statementText(sentence: string): string {
  let t = stripTrailingFiller(canonicalText(sentence));
  t = t.replace(LEADING_INTERJECTION_RE, '');
  t = sentenceCase(t.replace(/^[\s,;:-]+/, ''));
  if (t !== '' && !/[.!?…"')\]]$/.test(t)) t += '.';
  return t;
}

const OBJECT_MAX = 4000;
const TEXT_MAX = 20_000;
const SECRET_REF_RE = /\[secret:[a-z0-9_]{1,40}:[0-9a-f]{8}\]/g;

/** Clips to `max` chars with a trailing '…', never cutting a secret ref in half. */
function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  let cut = max - 1;
  for (const m of s.matchAll(SECRET_REF_RE)) {
    if (m.index < cut && m.index + m[0].length > cut) cut = m.index;
  }
  return `${s.slice(0, cut).trimEnd()}…`;
}

// ---------------------------------------------------------------------------------------------------------
// Names (for `about`)
// ---------------------------------------------------------------------------------------------------------

type About = { name: string; type: string | null };

const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the this that these those there here it its it's i i'm i've i'll i'd me my mine we we're we've " +
    "we'll our ours us you you're your yours he he's him his she she's her hers they they're them their " +
    'what when where why how who whom which whose whatever if unless because since as so but and or nor yet ' +
    'then also just still now today tonight yesterday tomorrow yes no yeah yep nope ok okay oh ah hey hi hello ' +
    'wow well thanks thank please sorry sure great good nice cool awesome amazing alright right haha lol btw ' +
    "fyi is are was were be been am do does did don't doesn't didn't can can't could would should will " +
    "won't have has had let let's maybe perhaps never always must everything something nothing everyone " +
    'someone anyone all both each every some any many much more most other another such same one two three ' +
    'first last next after before during in on at by for from of to with without about into over under ' +
    'speaking talking glad happy hope honestly actually anyway anyways absolutely definitely totally ' +
    'monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays ' +
    'saturdays sundays weekend weekends january february march april may june july ' +
    'august september october november december'
  ).split(' '),
);
const TECH_PARTS: ReadonlySet<string> = new Set(
  (
    'api apis svc service services db database server worker workers app apps ui web bot cli sdk lib core ' +
    'gateway proxy queue cache prod staging dev test tests repo infra service ops job jobs cron k8s etl auth ' +
    'frontend backend fe be v1 v2 v3 mcp llm'
  ).split(' '),
);
const TITLES_RE = /^(?:Dr|Mr|Mrs|Ms|Mx|Prof|Sir|Dame|Capt|Gen|Sen|Rep|Gov|Lt|Col|Sgt|Rev)\.?$/;

const CAPS_SEQ_RE =
  /(?<![\w'.-])(?:(?:[A-Z]\.){2,}|[A-Z][A-Za-z0-9'-]*\.?)(?:\s+(?:of\s+|the\s+|de\s+|van\s+|von\s+)?[A-Z][A-Za-z0-9'-]*)*/g;
const IDENT_RE = /(?<![\w./-])[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+(?![\w-]|\.[A-Za-z0-9])/g;
const CAMEL_RE = /(?<![\w-])[a-z]+[A-Z][A-Za-z0-9]*(?![\w-])/g;
const BACKTICK_RE = /`([^`\n]{1,80})`/g;
const URL_RE = /(?<![\w+.-])[a-z][a-z0-9+.-]*:\/\/\S+/gi;

/** True when only whitespace separates `at` from the text start or a sentence-ending mark. */
function atSentenceStart(text: string, at: number): boolean {
  let k = at;
  while (k > 0 && /\s/.test(text.charAt(k - 1))) k--;
  return k === 0 || /[.!?]/.test(text.charAt(k - 1));
}

function looksLikeIdentifier(tok: string): boolean {
  if (/^(?:e\.g|i\.e|a\.m|p\.m|u\.s|u\.k|etc)$/i.test(tok)) return false;
  if (/[0-9_]/.test(tok)) return true;
  if (tok.includes('.')) return /\.[a-z]{2,}$/i.test(tok) && !/^[A-Z]\./.test(tok); // node.js, example.com
  return tok
    .toLowerCase()
    .split('-')
    .some((p) => TECH_PARTS.has(p));
}

/**
 * Name-like mentions in `s`, in order. With `strictInitial`, a single capitalised word at the start of a
 * sentence (where every word is capitalised) only counts when it is not a common word AND is followed by
 * another capitalised word or written with inner capitals ("GraphQL"); used for whole turns.
 */
function findNames(s: string, strictInitial: boolean): About[] {
  const found: Array<About & { at: number }> = [];
  const text = s
    .replace(SECRET_REF_RE, (r) => ' '.repeat(r.length))
    .replace(URL_RE, (r) => ' '.repeat(r.length));
  for (const m of text.matchAll(BACKTICK_RE))
    found.push({ name: (m[1] ?? '').trim(), type: null, at: m.index });
  for (const m of text.matchAll(IDENT_RE)) {
    if (looksLikeIdentifier(m[0])) found.push({ name: m[0], type: null, at: m.index });
  }
  for (const m of text.matchAll(CAMEL_RE)) found.push({ name: m[0], type: null, at: m.index });
  for (const m of text.matchAll(CAPS_SEQ_RE)) {
    const words = m[0].split(/\s+/);
    let at = m.index;
    let type: string | null = null;
    while (words.length > 0) {
      const w = words[0] ?? '';
      if (TITLES_RE.test(w)) {
        type = 'person'; // kept: the name as written is "Dr. Smith"
        break;
      }
      if (!STOP_WORDS.has(w.toLowerCase().replace(/[.']+$/, ''))) break;
      at += w.length + 1;
      words.shift();
    }
    if (type !== null && words.length < 2) continue;
    while (words.length > 0 && /^(?:of|the|de|van|von)$/.test(words[words.length - 1] ?? '')) words.pop();
    const name = trimEndOf(words.join(' ').replace(/'s$/, ''), ".'");
    if (name === '' || /^[A-Z]$/.test(name)) continue;
    if (words.length === 1 && STOP_WORDS.has(name.toLowerCase())) continue;
    if (strictInitial && words.length === 1 && type === null && atSentenceStart(text, at)) {
      if (!/[A-Z].*[A-Z]|[0-9]/.test(name)) continue;
    }
    found.push({ name: name.trim(), type, at });
  }
  found.sort((a, b) => a.at - b.at);
  return found.map(({ name, type }) => ({ name, type }));
}

function addAbout(list: About[], items: readonly About[]): void {
  for (const it of items) {
    if (it.name === '' || list.length >= 10) continue;
    const existing = list.find((x) => x.name === it.name);
    if (!existing) list.push({ name: it.name, type: it.type });
    else if (existing.type === null && it.type !== null) existing.type = it.type;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Sentence patterns
// ---------------------------------------------------------------------------------------------------------

interface Speaker {
  /** Subject for first-person statements: the speaker name, or the role. */
  name: string;
  /** The speaker as an entity mention, when there is a name. */
  entity: About | null;
}

interface Typed {
  class: ExtractedStatement['class'];
  subject: string;
  predicate: string;
  object: string;
  confidence: number;
  rationale: string | null;
  /** The subject came from first person ("I", "we", "my"). */
  firstPerson: boolean;
}

const UNRESOLVED_SUBJECTS: ReadonlySet<string> = new Set(
  (
    'he she they it this that these those there here what who which you everything something nothing ' +
    "everyone someone anyone everybody somebody anybody one all both none it's that's there's he's she's " +
    "you're they're someone else"
  ).split(' '),
);
const INTRO_WORDS_RE =
  /^(?:after|before|in|on|at|during|since|when|while|once|by|for|as|honestly|actually|basically|anyway|today|now|lately|recently|so|well|also|plus|meanwhile|otherwise|however|luckily|unfortunately|finally|eventually)\b/i;
const NOUN_ING: ReadonlySet<string> = new Set(
  (
    'thing something nothing anything everything king ring spring string morning evening building wedding ' +
    'meeting painting ceiling sibling pudding wing swing sting darling evening feeling beginning ending ' +
    'setting offering clothing housing funding training planning pricing logging caching routing testing ' +
    'hiking camping writing reading cooking painting dancing singing swimming running'
  ).split(' '),
);

function resolveSubject(raw: string, speaker: Speaker): { subject: string; firstPerson: boolean } | null {
  let s = trimEndOf(raw.trim(), ',;:');
  const comma = s.lastIndexOf(',');
  if (comma >= 0) {
    const prefix = s.slice(0, comma).trim();
    const t = findTimeExpression(prefix);
    const isIntro =
      (t !== null && t.start === 0 && t.end >= prefix.length - 1) || INTRO_WORDS_RE.test(prefix);
    if (!isIntro) return null;
    s = s.slice(comma + 1).trim();
  }
  if (s === '') return null;
  const lower = s.toLowerCase();
  if (lower === 'i' || lower === 'we' || lower === 'me' || lower === 'us') {
    return { subject: speaker.name, firstPerson: true };
  }
  const possessive = /^(?:my|our)\s+(.+)$/i.exec(s);
  if (possessive) return { subject: `${speaker.name}'s ${possessive[1] ?? ''}`, firstPerson: true };
  if (UNRESOLVED_SUBJECTS.has(lower)) return null;
  const words = s.split(/\s+/);
  if (words.length > 6) return null;
  if (/^(?:i|we|you|he|she|they|it)$/i.test(words[0] ?? '')) return null; // "I heard Redis", "we all"
  if (/\b(?:that|which|who|and|or|but)$/i.test(s)) return null;
  const t = findTimeExpression(s);
  if (t !== null && t.start === 0 && t.end === s.length) return null;
  if (!/^[\p{L}\p{N}`"'[]/u.test(s)) return null;
  return { subject: s, firstPerson: false };
}

const BARE_PRONOUN_OBJECTS: ReadonlySet<string> = new Set(
  'it that this them him her you me us so too one those these you guys you all everything'.split(' '),
);

const CLAUSE_BREAK_RE =
  /,\s(?:and|but|so|yet|or|because|although|though|while|which|who|whereas)\s|;\s|\s-\s/i;

function cleanObject(raw: string): string | null {
  let o = raw.trim();
  // The object ends at the next clause: "5 and 7, and they love the beach" → "5 and 7".
  const clause = CLAUSE_BREAK_RE.exec(o);
  if (clause && clause.index > 0) o = o.slice(0, clause.index);
  o = trimEndOf(o, `${WS},;:-`);
  const quoted = /^"([^"]+)"$/.exec(o) ?? /^'([^']+)'$/.exec(o);
  if (quoted) o = quoted[1] ?? o;
  o = o.trim();
  // A trailing time phrase is when, not what: "moved to Kubernetes last May" → "Kubernetes".
  const t = findTimeExpression(o);
  if (t !== null && t.start > 0 && o.slice(t.end).trim() === '') {
    const head = trimEndOf(o.slice(0, t.start), `${WS},`)
      .replace(/\s+(?:on|at|in|during|since|by|from|of|around)$/i, '')
      .trim();
    if (head !== '') o = head;
  }
  if (o === '' || BARE_PRONOUN_OBJECTS.has(o.toLowerCase())) return null;
  return o;
}

function isProgressive(obj: string): boolean {
  const first = (obj.split(/\s+/)[0] ?? '').toLowerCase();
  if (first === 'like' || first === 'gonna' || first === 'about') return true;
  return /^[a-z]+ing$/.test(first) && !NOUN_ING.has(first);
}

const REASON = `(?:because|since|as(?!\\s+(?:soon|well|long|much|far|part|of|if|though|usual|always)\\b)|due\\s+to|given\\s+that)`;
const DECISION_VERB = '(?:decided|agreed|chose|opted|resolved)';
const DECISION_RE = new RegExp(
  `^(.+?)\\s+(?:(?:have|had|finally|just|all|eventually|unanimously)\\s+)*${DECISION_VERB}\\s+(?:to|on|that)\\s+(.+?)\\s*,?\\s+${REASON}\\s+(.+)$`,
  'i',
);
const DECISION_REASON_FIRST_RE = new RegExp(
  `^${REASON}\\s+(.+?),\\s*(.+?)\\s+(?:(?:have|had|finally|just|all|eventually|unanimously)\\s+)*${DECISION_VERB}\\s+(?:to|on|that)\\s+(.+)$`,
  'i',
);
const DECISION_NO_REASON_RE = new RegExp(
  `^(.+?)\\s+(?:(?:have|had|finally|just|all)\\s+)*${DECISION_VERB}\\s+(?:to|on|that)\\s+`,
  'i',
);

const IMPERATIVE_RE =
  /^(?:please\s+)?(never|always|do\s+not|don't|dont|must\s+not|mustn't|must\s+never|must\s+always|must)\s+(.+)$/i;
const NOT_IMPERATIVE_OBJECT_RE =
  /^(?:mind|worry|worries|hesitate|apologi[sz]e|be\s+sorry|a|an|the|so|such|happy|glad|good|great|nice|fun|welcome|here|there|been|had|thought|knew|know|forget\s+to\s+smile)\b/i;
const MODAL_RE =
  /^(.+?)\s+(must\s+not|mustn't|must\s+never|must\s+always|must|shall\s+not|shan't|shall|should\s+never|should\s+always|should\s+not|shouldn't|is\s+not\s+allowed\s+to|are\s+not\s+allowed\s+to|is\s+required\s+to|are\s+required\s+to|never|always)\s+(.+)$/i;

const CHANGE_RE =
  /^(.+?)\s+(?:(?:has|have|had|just|recently|finally|now|officially|eventually)\s+)*(moved|relocated|switched|migrated|transitioned|changed|became|become)\s+(?:(?:over|back|all)\s+)?(?:from\s+.+?\s+)?(to\s+)?(.+)$/i;
const NO_LONGER_RE =
  /^(.+?)\s+no\s+longer\s+((?:runs|depends|relies|is\s+built|is\s+hosted)\s+on|[a-z]+)\s+(.+)$/i;

const PREFERENCE_FIRST_RE =
  /^(i|we)\s+(?:(?:really|also|just|absolutely|totally|truly|still|definitely|generally|usually|much|kinda|kind\s+of|sort\s+of|mostly|do)\s+)*(?:(do\s+not|don't|dont|never|did\s+not|didn't)\s+)?(prefer|like|love|enjoy|adore|hate|dislike|detest)\s+(.+)$/i;
const PREFERENCE_RATHER_RE = /^(i|we)(?:'d|\s+would)\s+(?:(?:much|really)\s+)?(?:prefer|rather)\s+(.+)$/i;
const PREFERENCE_THIRD_RE =
  /^(.+?)\s+(?:(?:really|also|just|absolutely|totally|still|definitely|generally|usually|much)\s+)*(prefers|likes|loves|enjoys|adores|hates|dislikes)\s+(.+)$/i;

const USES_RE =
  /^(.+?)\s+(?:(now|still|also|currently|mostly|mainly|primarily|only|already)\s+)?(uses|use|(?:is|are|am)\s+using|'s\s+using|'re\s+using|'m\s+using|runs\s+on|run\s+on|depends\s+on|depend\s+on|relies\s+on|rely\s+on|(?:is|are)\s+built\s+(?:on|with)|(?:is|are)\s+written\s+in|(?:is|are)\s+hosted\s+(?:on|in))\s+(.+)$/i;
const COPULA_RE =
  /^(.+?)\s+(is|are|was|were|am|isn't|aren't|wasn't|weren't)\s+(?:(not|no\s+longer|now|still)\s+)?(.+)$/i;
const COPULA_CONTRACTION_RE = /^(i'm|we're)\s+(?:(not|no\s+longer|now|still)\s+)?(.+)$/i;

const PROCEDURE_RE =
  /^to\s+(.+?),\s*((?:(?:you|we)\s+)?(?:first|start\s+by|begin\s+by)\s+.+?(?:,\s*|\s+)(?:and\s+)?then\s+.+)$/i;

const SKIP_START_RE =
  /^(?:if|unless|whether|what|why|how|who|where|which|maybe|perhaps|would|could|can|do(?!\s+not\b)|does|did)\b/i;
const DO_NOT_START_RE = /^(?:do\s+not|don't)\b/i;

function normalizePreference(verb: string, negated: boolean): string {
  const v = verb.toLowerCase();
  if (negated)
    return v === 'prefer'
      ? 'does not prefer'
      : v === 'hate' || v === 'dislike' || v === 'detest'
        ? 'likes'
        : 'dislikes';
  if (v === 'prefer' || v === 'prefers') return 'prefers';
  if (v === 'like' || v === 'likes') return 'likes';
  if (v === 'love' || v === 'loves' || v === 'adore' || v === 'adores') return 'loves';
  if (v === 'enjoy' || v === 'enjoys') return 'enjoys';
  if (v === 'hate' || v === 'hates' || v === 'detest') return 'hates';
  return 'dislikes';
}

function normalizeUses(verb: string): string {
  const v = verb.toLowerCase().replace(/\s+/g, ' ');
  if (/^(?:uses|use|.*using)$/.test(v)) return 'uses';
  if (/^runs? on$/.test(v)) return 'runs on';
  if (/^(?:depends?|relies|rely) on$/.test(v)) return 'depends on';
  if (/built/.test(v)) return v.endsWith('with') ? 'is built with' : 'is built on';
  if (/written/.test(v)) return 'is written in';
  return v.endsWith(' in') ? 'is hosted in' : 'is hosted on';
}

function normalizeModal(modal: string): string {
  const m = modal.toLowerCase().replace(/\s+/g, ' ');
  if (/never/.test(m)) return 'never';
  if (/always/.test(m)) return 'always';
  if (/should not|shouldn't/.test(m)) return 'should not';
  if (/not|n't/.test(m)) return 'must not';
  return 'must';
}

/** The one typed statement of a sentence, if any. `body` is canonical, filler- and punctuation-stripped. */
function matchPatterns(body: string, speaker: Speaker): Typed | null | 'stop' {
  const subj = (raw: string) => resolveSubject(raw, speaker);
  let m: RegExpExecArray | null;

  if ((m = PROCEDURE_RE.exec(body))) {
    const goal = cleanObject(m[1] ?? '');
    const steps = cleanObject(m[2] ?? '');
    if (goal && steps) {
      return {
        class: 'PROCEDURE',
        subject: goal,
        predicate: 'steps',
        object: steps,
        confidence: 0.65,
        rationale: null,
        firstPerson: false,
      };
    }
  }

  if ((m = DECISION_REASON_FIRST_RE.exec(body))) {
    const s = subj(m[2] ?? '');
    const what = cleanObject(m[3] ?? '');
    const why = cleanObject(m[1] ?? '');
    if (s && what && why) {
      return {
        class: 'DECISION',
        subject: s.subject,
        predicate: 'decided',
        object: what,
        confidence: 0.75,
        rationale: why,
        firstPerson: s.firstPerson,
      };
    }
  }
  if ((m = DECISION_RE.exec(body))) {
    const s = subj(m[1] ?? '');
    const what = cleanObject(m[2] ?? '');
    const why = cleanObject(m[3] ?? '');
    if (s && what && why) {
      return {
        class: 'DECISION',
        subject: s.subject,
        predicate: 'decided',
        object: what,
        confidence: 0.75,
        rationale: why,
        firstPerson: s.firstPerson,
      };
    }
  }
  if (DECISION_NO_REASON_RE.test(body)) return 'stop'; // a Decision needs a rationale

  if ((m = IMPERATIVE_RE.exec(body))) {
    const rest = m[2] ?? '';
    const obj = cleanObject(rest);
    if (obj && !NOT_IMPERATIVE_OBJECT_RE.test(rest) && obj.split(/\s+/).length >= 2) {
      const predicate = normalizeModal(m[1] ?? '');
      const confidence = DO_NOT_START_RE.test(body)
        ? 0.6
        : predicate === 'must' || predicate === 'must not'
          ? 0.7
          : 0.6;
      return {
        class: 'CONSTRAINT',
        subject: 'you',
        predicate,
        object: obj,
        confidence,
        rationale: null,
        firstPerson: false,
      };
    }
    return null;
  }
  if ((m = MODAL_RE.exec(body))) {
    const rawSubject = (m[1] ?? '').trim();
    const modal = (m[2] ?? '').toLowerCase();
    const habitual = modal === 'never' || modal === 'always';
    const lower = rawSubject.toLowerCase();
    // "X never/always Y" with a subject is a habit ("we always go camping"), not a rule: imperatives only.
    const allowed = !habitual && lower !== 'i' && lower !== 'you';
    const s = allowed ? subj(rawSubject) : null;
    const obj = cleanObject(m[3] ?? '');
    if (s && obj && !/^(?:be\s+(?:tired|kidding|joking|happy|proud|excited)|have\s+been)\b/i.test(obj)) {
      const predicate = normalizeModal(modal);
      const confidence = predicate === 'should not' ? 0.55 : 0.7;
      return {
        class: 'CONSTRAINT',
        subject: s.subject,
        predicate,
        object: obj,
        confidence,
        rationale: null,
        firstPerson: s.firstPerson,
      };
    }
  }

  if ((m = CHANGE_RE.exec(body))) {
    const verb = (m[2] ?? '').toLowerCase();
    const hasTo = m[3] !== undefined;
    const s = subj(m[1] ?? '');
    const obj = cleanObject(m[4] ?? '');
    const needsTo = verb !== 'became' && verb !== 'become';
    if (s && obj && hasTo === needsTo) {
      const predicate =
        verb === 'moved' || verb === 'relocated' ? 'is in' : verb === 'changed' || !needsTo ? 'is' : 'uses';
      return {
        class: 'FACT',
        subject: s.subject,
        predicate,
        object: obj,
        confidence: 0.7,
        rationale: null,
        firstPerson: s.firstPerson,
      };
    }
  }
  if ((m = NO_LONGER_RE.exec(body))) {
    const s = subj(m[1] ?? '');
    const verb = (m[2] ?? '').toLowerCase().replace(/\s+/g, ' ');
    const obj = cleanObject(m[3] ?? '');
    if (s && obj && !/^(?:is|are|was|were|am)$/.test(verb)) {
      return {
        class: 'FACT',
        subject: s.subject,
        predicate: `no longer ${verb}`,
        object: obj,
        confidence: 0.7,
        rationale: null,
        firstPerson: s.firstPerson,
      };
    }
  }

  if ((m = PREFERENCE_RATHER_RE.exec(body))) {
    const obj = cleanObject(m[2] ?? '');
    if (obj) {
      return {
        class: 'PREFERENCE',
        subject: speaker.name,
        predicate: 'prefers',
        object: obj,
        confidence: 0.7,
        rationale: null,
        firstPerson: true,
      };
    }
  }
  if ((m = PREFERENCE_FIRST_RE.exec(body))) {
    const negated = m[2] !== undefined;
    const verb = m[3] ?? '';
    const obj = cleanObject(m[4] ?? '');
    if (obj) {
      const predicate = normalizePreference(verb, negated);
      return {
        class: 'PREFERENCE',
        subject: speaker.name,
        predicate,
        object: obj,
        confidence: predicate === 'prefers' ? 0.7 : 0.65,
        rationale: null,
        firstPerson: true,
      };
    }
    return null;
  }
  if ((m = PREFERENCE_THIRD_RE.exec(body))) {
    const s = subj(m[1] ?? '');
    const obj = cleanObject(m[3] ?? '');
    if (s && obj) {
      return {
        class: 'PREFERENCE',
        subject: s.subject,
        predicate: normalizePreference(m[2] ?? '', false),
        object: obj,
        confidence: 0.6,
        rationale: null,
        firstPerson: s.firstPerson,
      };
    }
  }

  if ((m = USES_RE.exec(body))) {
    const s = subj(m[1] ?? '');
    const obj = cleanObject(m[4] ?? '');
    if (s && obj) {
      const now = (m[2] ?? '').toLowerCase() === 'now';
      return {
        class: 'FACT',
        subject: s.subject,
        predicate: normalizeUses(m[3] ?? ''),
        object: obj,
        confidence: now ? 0.75 : 0.7,
        rationale: null,
        firstPerson: s.firstPerson,
      };
    }
  }

  const contraction = COPULA_CONTRACTION_RE.exec(body);
  const copula = contraction ? null : COPULA_RE.exec(body);
  if (contraction || copula) {
    const rawSubject = contraction ? (contraction[1] ?? '').replace(/'.*$/, '') : (copula?.[1] ?? '');
    const verb = contraction ? 'is' : (copula?.[2] ?? '').toLowerCase();
    const adverb = ((contraction ? contraction[2] : copula?.[3]) ?? '').toLowerCase().replace(/\s+/g, ' ');
    const rawObject = (contraction ? contraction[3] : copula?.[4]) ?? '';
    const s = subj(rawSubject);
    const obj = cleanObject(rawObject);
    if (s && obj && !isProgressive(obj)) {
      const negated = adverb === 'not' || adverb === 'no longer' || verb.endsWith("n't");
      const past = /^(?:was|were)/.test(verb);
      const confidence = adverb === 'now' || adverb === 'no longer' ? 0.75 : past ? 0.5 : 0.6;
      return {
        class: 'FACT',
        subject: s.subject,
        predicate: negated ? 'is not' : 'is',
        object: obj,
        confidence,
        rationale: null,
        firstPerson: s.firstPerson,
      };
    }
  }
  return null;
}

/** Longer "sentences" (pasted logs, minified JSON) are not simple statements: OBSERVATION only. */
const MAX_PATTERN_SENTENCE = 1000;

/** Canonical, filler- and punctuation-stripped sentence body used for matching; null for non-statements. */
function sentenceBody(sentence: string): { body: string; hedged: boolean } | null {
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

// ---------------------------------------------------------------------------------------------------------
// Numbered procedures (turn level)
// ---------------------------------------------------------------------------------------------------------

interface Line {
  start: number;
  end: number;
  text: string;
}

function linesOf(text: string): Line[] {
  const out: Line[] = [];
  let pos = 0;
  for (const raw of text.split('\n')) {
    out.push({ start: pos, end: pos + raw.length, text: raw });
    pos += raw.length + 1;
  }
  return out;
}

const STEP_RE = /^\s*(\d{1,2})[.)]\s+\S/;

/** "Heading:\n1. a\n2. b" blocks: subject = heading, object = the steps, span = heading..last step. */
function numberedProcedures(
  text: string,
): Array<{ start: number; end: number; subject: string; object: string }> {
  const lines = linesOf(text);
  const out: Array<{ start: number; end: number; subject: string; object: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    const heading = lines[i];
    if (!heading || !heading.text.trimEnd().endsWith(':') || heading.text.trim() === ':') continue;
    const steps: Line[] = [];
    let expected = 1;
    for (let j = i + 1; j < lines.length; j++) {
      const line = lines[j];
      if (!line) break;
      const m = STEP_RE.exec(line.text);
      if (!m || Number(m[1]) !== expected) break;
      steps.push(line);
      expected++;
    }
    const last = steps[steps.length - 1];
    if (steps.length < 2 || !last) continue;
    const subject = canonicalText(heading.text).replace(/:$/, '').trim();
    if (subject === '') continue;
    out.push({
      start: heading.start + (heading.text.length - heading.text.trimStart().length),
      end: last.start + last.text.trimEnd().length,
      subject,
      object: steps.map((l) => canonicalText(l.text)).join(' '),
    });
    i += steps.length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The extractor
// ---------------------------------------------------------------------------------------------------------

function speakerOf(turn: EpisodeTurn): Speaker {
  const named = turn.speaker?.trim();
  if (named) {
    const role = turn.role.trim().toLowerCase();
    const type = role === 'assistant' || role === 'agent' ? 'agent' : 'person';
    return { name: named, entity: { name: named, type } };
  }
  return { name: turn.role.trim() || 'speaker', entity: null };
}

function checkTurn(turn: EpisodeTurn): void {
  const ok =
    Number.isInteger(turn.start) &&
    Number.isInteger(turn.end) &&
    turn.start >= 0 &&
    turn.end >= turn.start &&
    turn.end - turn.start === turn.text.length;
  if (!ok) {
    throw badInput('turn offsets do not match its text', {
      turn: turn.index,
      start: turn.start,
      end: turn.end,
    });
  }
}

function typedStatement(
  typed: Typed,
  sentence: string,
  hedged: boolean,
  span: CitedSpan,
  speaker: Speaker,
): ExtractedStatement | null {
  const text = statementText(sentence);
  if (text === '') return null;
  const about: About[] = [];
  if (typed.firstPerson && speaker.entity) addAbout(about, [speaker.entity]);
  // Numbered steps start every line with a capital: judge their words like sentence starts.
  const strict = typed.class === 'PROCEDURE';
  addAbout(about, findNames(typed.subject, strict));
  addAbout(about, findNames(typed.object, strict));
  const time = findTimeExpression(sentence);
  return {
    class: typed.class,
    subject: typed.subject,
    predicate: typed.predicate,
    object: clip(typed.object, OBJECT_MAX),
    text: clip(text, TEXT_MAX),
    spans: [span],
    confidence: Math.round((typed.confidence - (hedged ? 0.1 : 0)) * 100) / 100,
    rationale: typed.rationale,
    about,
    timeExpression: time ? canonicalText(time.text) : null,
  };
}

function extractTurn(turn: EpisodeTurn): ExtractedStatement[] {
  if (!isConversationalRole(turn.role)) return [];
  checkTurn(turn);
  const said = canonicalText(turn.text);
  if (said === '' || turn.end <= turn.start) return [];
  const speaker = speakerOf(turn);
  const label = turn.label;
  const sentences = splitSentences(turn.text);

  const observationAbout: About[] = [];
  if (speaker.entity) addAbout(observationAbout, [speaker.entity]);
  for (const s of sentences) addAbout(observationAbout, findNames(s.text, true));
  const turnTime = findTimeExpression(turn.text);
  const out: ExtractedStatement[] = [
    {
      class: 'OBSERVATION',
      subject: speaker.name,
      predicate: 'said',
      object: clip(said, OBJECT_MAX),
      text: clip(said, TEXT_MAX),
      spans: [{ start: turn.start, end: turn.end, label }],
      confidence: 0.6,
      rationale: null,
      about: observationAbout,
      timeExpression: turnTime ? canonicalText(turnTime.text) : null,
    },
  ];

  const typed: Array<{ at: number; statement: ExtractedStatement }> = [];
  for (const p of numberedProcedures(turn.text)) {
    const span = { start: turn.start + p.start, end: turn.start + p.end, label };
    const block = turn.text.slice(p.start, p.end);
    const statement = typedStatement(
      {
        class: 'PROCEDURE',
        subject: p.subject,
        predicate: 'steps',
        object: p.object,
        confidence: 0.6,
        rationale: null,
        firstPerson: false,
      },
      block.replace(/\n/g, ' '),
      false,
      span,
      speaker,
    );
    if (statement) typed.push({ at: p.start, statement });
  }
  for (const s of sentences) {
    const parsed = sentenceBody(s.text);
    if (!parsed) continue;
    const match = matchPatterns(parsed.body, speaker);
    if (match === null || match === 'stop') continue;
    const span = { start: turn.start + s.start, end: turn.start + s.end, label };
    const statement = typedStatement(match, s.text, parsed.hedged, span, speaker);
    if (statement) typed.push({ at: s.start, statement });
  }
  typed.sort((a, b) => a.at - b.at);
  for (const t of typed) out.push(t.statement);
  return out.filter((st) => st.spans.length > 0 && st.spans.every((sp) => sp.end > sp.start));
}

/** Synchronous core of the default extractor (exported for tests and batch tools). */
export function extractStatements(input: ExtractionInput): ExtractedStatement[] {
  const out: ExtractedStatement[] = [];
  for (const turn of input.turns) out.push(...extractTurn(turn));
  return out;
}

export const defaultExtractor: Extractor = {
  id: DEFAULT_EXTRACTOR_ID,
  extract: async (input) => extractStatements(input),
};
