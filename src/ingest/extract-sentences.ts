/** Sentence splitting for the default extractor: where a turn's sentences start and end. */

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
