import type { RecordClass } from '../domain/model.ts';

/** One turn of an episode as the extractor sees it: already screened (secrets replaced by SecretRefs). */
export interface EpisodeTurn {
  readonly index: number;
  readonly role: string;
  readonly speaker: string | null;
  readonly text: string;
  /** Offsets of this turn inside the episode's full (screened) text. */
  readonly start: number;
  readonly end: number;
  /** Caller-supplied label of the turn, e.g. LoCoMo's dia_id "D1:3". */
  readonly label: string | null;
}

export interface ExtractionInput {
  readonly episodeId: string;
  readonly source: string;
  /** When the episode happened: the anchor for relative time expressions. */
  readonly occurredAt: string;
  readonly turns: readonly EpisodeTurn[];
}

/** A span inside the episode text; every extracted statement must cite at least one. */
export interface CitedSpan {
  readonly start: number;
  readonly end: number;
  readonly label: string | null;
}

export interface ExtractedStatement {
  readonly class: RecordClass;
  readonly subject: string;
  readonly predicate: string;
  readonly object: string;
  /** The natural-language sentence, in canonical wording. */
  readonly text: string;
  readonly spans: readonly CitedSpan[];
  /** 0..1: how sure the extractor is that the statement is what the source says. */
  readonly confidence: number;
  readonly rationale: string | null;
  /** Entity mentions (names as written) the statement is about. */
  readonly about: ReadonlyArray<{ readonly name: string; readonly type: string | null }>;
  /** The raw time expression found in the source for this statement, if any ("yesterday", "last May"). */
  readonly timeExpression: string | null;
}

export interface Extractor {
  /** Identifies the extractor and model, recorded with what it produced. */
  readonly id: string;
  extract(input: ExtractionInput): Promise<ExtractedStatement[]>;
}

/** Roles whose turns are system or tool traffic, never conversation: no extractor reads them. */
const NON_CONVERSATIONAL_ROLES: ReadonlySet<string> = new Set([
  'system',
  'developer',
  'tool',
  'tools',
  'function',
  'tool_call',
  'tool_calls',
  'tool_use',
  'tool_result',
  'function_call',
  'function_result',
  'ipython',
]);

/** True for turns whose text is conversation (people or agents talking), false for system/tool traffic. */
export const isConversationalRole = (role: string): boolean =>
  !NON_CONVERSATIONAL_ROLES.has(role.trim().toLowerCase());
