/**
 * The sentence patterns of the default extractor as data: each rule is a regex and what to make of its match,
 * tried in order until one decides. See extract-default.ts for the statements they produce.
 */
import type { ExtractedStatement } from '../ports/extractor.ts';
import { cleanObject, isProgressive, resolveSubject, type Speaker, type Subject } from './extract-terms.ts';

export interface Typed {
  class: ExtractedStatement['class'];
  subject: string;
  predicate: string;
  object: string;
  confidence: number;
  rationale: string | null;
  /** The subject came from first person ("I", "we", "my"). */
  firstPerson: boolean;
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

/** What a rule makes of a sentence its regex matched: a statement, none ('stop', null), or 'next' rule. */
type Outcome = Typed | null | 'stop' | 'next';

type Read = (m: RegExpExecArray, body: string, speaker: Speaker) => Outcome;

interface SentenceRule {
  re: RegExp;
  read: Read;
}

const typed = (
  cls: Typed['class'],
  s: Subject,
  predicate: string,
  object: string,
  confidence: number,
  rationale: string | null = null,
): Typed => ({
  class: cls,
  subject: s.subject,
  predicate,
  object,
  confidence,
  rationale,
  firstPerson: s.firstPerson,
});

function decision(speaker: Speaker, rawSubject: string, rawWhat: string, rawWhy: string): Outcome {
  const s = resolveSubject(rawSubject, speaker);
  const what = cleanObject(rawWhat);
  const why = cleanObject(rawWhy);
  return s && what && why ? typed('DECISION', s, 'decided', what, 0.75, why) : 'next';
}

const imperativeConstraint: Read = (m, body) => {
  const rest = m[2] ?? '';
  const obj = cleanObject(rest);
  if (!obj || NOT_IMPERATIVE_OBJECT_RE.test(rest) || obj.split(/\s+/).length < 2) return null;
  const predicate = normalizeModal(m[1] ?? '');
  const confidence = DO_NOT_START_RE.test(body)
    ? 0.6
    : predicate === 'must' || predicate === 'must not'
      ? 0.7
      : 0.6;
  return typed('CONSTRAINT', { subject: 'you', firstPerson: false }, predicate, obj, confidence);
};

const modalConstraint: Read = (m, _body, speaker) => {
  const rawSubject = (m[1] ?? '').trim();
  const modal = (m[2] ?? '').toLowerCase();
  const habitual = modal === 'never' || modal === 'always';
  const lower = rawSubject.toLowerCase();
  // "X never/always Y" with a subject is a habit ("we always go camping"), not a rule: imperatives only.
  const allowed = !habitual && lower !== 'i' && lower !== 'you';
  const s = allowed ? resolveSubject(rawSubject, speaker) : null;
  const obj = cleanObject(m[3] ?? '');
  if (!s || !obj || /^(?:be\s+(?:tired|kidding|joking|happy|proud|excited)|have\s+been)\b/i.test(obj))
    return 'next';
  const predicate = normalizeModal(modal);
  return typed('CONSTRAINT', s, predicate, obj, predicate === 'should not' ? 0.55 : 0.7);
};

const changeFact: Read = (m, _body, speaker) => {
  const verb = (m[2] ?? '').toLowerCase();
  const hasTo = m[3] !== undefined;
  const s = resolveSubject(m[1] ?? '', speaker);
  const obj = cleanObject(m[4] ?? '');
  const needsTo = verb !== 'became' && verb !== 'become';
  if (!s || !obj || hasTo !== needsTo) return 'next';
  const predicate =
    verb === 'moved' || verb === 'relocated' ? 'is in' : verb === 'changed' || !needsTo ? 'is' : 'uses';
  return typed('FACT', s, predicate, obj, 0.7);
};

const noLongerFact: Read = (m, _body, speaker) => {
  const s = resolveSubject(m[1] ?? '', speaker);
  const verb = (m[2] ?? '').toLowerCase().replace(/\s+/g, ' ');
  const obj = cleanObject(m[3] ?? '');
  if (!s || !obj || /^(?:is|are|was|were|am)$/.test(verb)) return 'next';
  return typed('FACT', s, `no longer ${verb}`, obj, 0.7);
};

/** The first person speaking: the speaker. */
const speaking = (speaker: Speaker): Subject => ({ subject: speaker.name, firstPerson: true });

const firstPersonPreference: Read = (m, _body, speaker) => {
  const negated = m[2] !== undefined;
  const verb = m[3] ?? '';
  const obj = cleanObject(m[4] ?? '');
  if (!obj) return null;
  const predicate = normalizePreference(verb, negated);
  return typed('PREFERENCE', speaking(speaker), predicate, obj, predicate === 'prefers' ? 0.7 : 0.65);
};

const usesFact: Read = (m, _body, speaker) => {
  const s = resolveSubject(m[1] ?? '', speaker);
  const obj = cleanObject(m[4] ?? '');
  if (!s || !obj) return 'next';
  const now = (m[2] ?? '').toLowerCase() === 'now';
  return typed('FACT', s, normalizeUses(m[3] ?? ''), obj, now ? 0.75 : 0.7);
};

function copulaFact(
  speaker: Speaker,
  rawSubject: string,
  verb: string,
  rawAdverb: string | undefined,
  rawObject: string,
): Typed | null {
  const adverb = (rawAdverb ?? '').toLowerCase().replace(/\s+/g, ' ');
  const s = resolveSubject(rawSubject, speaker);
  const obj = cleanObject(rawObject);
  if (!s || !obj || isProgressive(obj)) return null;
  const negated = adverb === 'not' || adverb === 'no longer' || verb.endsWith("n't");
  const past = /^(?:was|were)/.test(verb);
  const confidence = adverb === 'now' || adverb === 'no longer' ? 0.75 : past ? 0.5 : 0.6;
  return typed('FACT', s, negated ? 'is not' : 'is', obj, confidence);
}

/** Tried in order; the first rule that does not answer 'next' decides the sentence. */
const SENTENCE_RULES: readonly SentenceRule[] = [
  {
    re: PROCEDURE_RE,
    read: (m) => {
      const goal = cleanObject(m[1] ?? '');
      const steps = cleanObject(m[2] ?? '');
      if (!goal || !steps) return 'next';
      return typed('PROCEDURE', { subject: goal, firstPerson: false }, 'steps', steps, 0.65);
    },
  },

  { re: DECISION_REASON_FIRST_RE, read: (m, _body, sp) => decision(sp, m[2] ?? '', m[3] ?? '', m[1] ?? '') },
  { re: DECISION_RE, read: (m, _body, sp) => decision(sp, m[1] ?? '', m[2] ?? '', m[3] ?? '') },
  { re: DECISION_NO_REASON_RE, read: () => 'stop' }, // a Decision needs a rationale

  { re: IMPERATIVE_RE, read: imperativeConstraint },
  { re: MODAL_RE, read: modalConstraint },

  { re: CHANGE_RE, read: changeFact },
  { re: NO_LONGER_RE, read: noLongerFact },

  {
    re: PREFERENCE_RATHER_RE,
    read: (m, _body, sp) => {
      const obj = cleanObject(m[2] ?? '');
      return obj ? typed('PREFERENCE', speaking(sp), 'prefers', obj, 0.7) : 'next';
    },
  },
  { re: PREFERENCE_FIRST_RE, read: firstPersonPreference },
  {
    re: PREFERENCE_THIRD_RE,
    read: (m, _body, sp) => {
      const s = resolveSubject(m[1] ?? '', sp);
      const obj = cleanObject(m[3] ?? '');
      return s && obj ? typed('PREFERENCE', s, normalizePreference(m[2] ?? '', false), obj, 0.6) : 'next';
    },
  },

  { re: USES_RE, read: usesFact },

  // A contraction ("I'm …", "we're …") decides the sentence, fact or not: COPULA_RE is not tried after it.
  {
    re: COPULA_CONTRACTION_RE,
    read: (m, _body, sp) => copulaFact(sp, (m[1] ?? '').replace(/'.*$/, ''), 'is', m[2], m[3] ?? ''),
  },
  {
    re: COPULA_RE,
    read: (m, _body, sp) => copulaFact(sp, m[1] ?? '', (m[2] ?? '').toLowerCase(), m[3], m[4] ?? ''),
  },
];

/** The one typed statement of a sentence, if any. `body` is canonical, filler- and punctuation-stripped. */
export function matchPatterns(body: string, speaker: Speaker): Typed | null | 'stop' {
  for (const rule of SENTENCE_RULES) {
    const m = rule.re.exec(body);
    if (!m) continue;
    const outcome = rule.read(m, body, speaker);
    if (outcome !== 'next') return outcome;
  }
  return null;
}
