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
 *
 * The parts live beside this file: extract-sentences (splitting), extract-patterns (the sentence patterns, a
 * table), extract-terms (subjects and objects), extract-names (`about`), extract-wording (canonical text).
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
import { addAbout, findNames, type About } from './extract-names.ts';
import { matchPatterns, type Typed } from './extract-patterns.ts';
import { splitSentences, type SentenceSpan } from './extract-sentences.ts';
import type { Speaker } from './extract-terms.ts';
import { clip, OBJECT_MAX, sentenceBody, statementText, TEXT_MAX } from './extract-wording.ts';

export const DEFAULT_EXTRACTOR_ID = 'default-extractor@1';

/** Re-exported: the role rule belongs to the Extractor port, shared by every extractor. */
export { isConversationalRole } from '../ports/extractor.ts';

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

/** The turn's OBSERVATION: "<speaker> said <text>", citing the whole turn. */
function observation(
  turn: EpisodeTurn,
  said: string,
  speaker: Speaker,
  sentences: SentenceSpan[],
): ExtractedStatement {
  const observationAbout: About[] = [];
  if (speaker.entity) addAbout(observationAbout, [speaker.entity]);
  for (const s of sentences) addAbout(observationAbout, findNames(s.text, true));
  const turnTime = findTimeExpression(turn.text);
  return {
    class: 'OBSERVATION',
    subject: speaker.name,
    predicate: 'said',
    object: clip(said, OBJECT_MAX),
    text: clip(said, TEXT_MAX),
    spans: [{ start: turn.start, end: turn.end, label: turn.label }],
    confidence: 0.6,
    rationale: null,
    about: observationAbout,
    timeExpression: turnTime ? canonicalText(turnTime.text) : null,
  };
}

/** The turn's typed statements, in the order they appear in it. */
function typedStatements(
  turn: EpisodeTurn,
  speaker: Speaker,
  sentences: SentenceSpan[],
): ExtractedStatement[] {
  const label = turn.label;
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
  return typed.map((t) => t.statement);
}

function extractTurn(turn: EpisodeTurn): ExtractedStatement[] {
  if (!isConversationalRole(turn.role)) return [];
  checkTurn(turn);
  const said = canonicalText(turn.text);
  if (said === '' || turn.end <= turn.start) return [];
  const speaker = speakerOf(turn);
  const sentences = splitSentences(turn.text);
  const out = [observation(turn, said, speaker, sentences), ...typedStatements(turn, speaker, sentences)];
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
