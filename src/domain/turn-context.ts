import { Sensitivities, type Sensitivity } from './model.ts';

/**
 * The context of one conversational turn: its neighbours, as "speaker: text" lines. A turn is often
 * understandable only with the one before or after it ("Yes, last Friday!"), so recall indexes this
 * context with the turn's record (the record's `ext['recall:context']`). A neighbour is included only
 * when its label is no higher than the record's own and the screen flagged nothing in it: the context must
 * never make a record findable by words its reader may not see, nor carry text that waits for review. Pure.
 */
export const TURN_CONTEXT_EXT = 'recall:context';

/** Characters kept of each neighbour. */
const NEIGHBOUR_MAX = 600;

export interface ContextTurn {
  readonly speaker: string | null;
  readonly role: string;
  readonly text: string;
  readonly label: Sensitivity;
  /** Only conversational turns are context (not system prompts or tool output). */
  readonly conversational: boolean;
  /** Screened as instruction-shaped or otherwise flagged: never context (its own record may wait for review). */
  readonly flagged: boolean;
}

export function turnContext(
  turns: readonly ContextTurn[],
  index: number,
  ceiling: Sensitivity,
  width = 1,
): string {
  const max = Sensitivities.indexOf(ceiling);
  const lines: string[] = [];
  for (let j = index - width; j <= index + width; j++) {
    const t = turns[j];
    if (j === index || !t || !t.conversational || t.flagged || Sensitivities.indexOf(t.label) > max) continue;
    const text = t.text.replace(/\s+/g, ' ').trim().slice(0, NEIGHBOUR_MAX);
    if (text) lines.push(`${t.speaker ?? t.role}: ${text}`);
  }
  return lines.join('\n');
}
