/** The subject and object of a matched sentence: first person resolved to the speaker, clauses cut off. */
import { findTimeExpression } from './normalize.ts';
import type { About } from './extract-names.ts';
import { trimEndOf, WS } from './extract-wording.ts';

export interface Speaker {
  /** Subject for first-person statements: the speaker name, or the role. */
  name: string;
  /** The speaker as an entity mention, when there is a name. */
  entity: About | null;
}

/** A resolved subject; `firstPerson` when it came from "I", "we", "my" or "our". */
export interface Subject {
  subject: string;
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

export function resolveSubject(raw: string, speaker: Speaker): Subject | null {
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

export function cleanObject(raw: string): string | null {
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

export function isProgressive(obj: string): boolean {
  const first = (obj.split(/\s+/)[0] ?? '').toLowerCase();
  if (first === 'like' || first === 'gonna' || first === 'about') return true;
  return /^[a-z]+ing$/.test(first) && !NOUN_ING.has(first);
}
