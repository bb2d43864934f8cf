/** Name-like mentions for a statement's `about`: capitalised words, identifiers, code-ish tokens. */
import { SECRET_REF_RE, trimEndOf } from './extract-wording.ts';

export type About = { name: string; type: string | null };

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
export function findNames(s: string, strictInitial: boolean): About[] {
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

export function addAbout(list: About[], items: readonly About[]): void {
  for (const it of items) {
    if (it.name === '' || list.length >= 10) continue;
    const existing = list.find((x) => x.name === it.name);
    if (!existing) list.push({ name: it.name, type: it.type });
    else if (existing.type === null && it.type !== null) existing.type = it.type;
  }
}
