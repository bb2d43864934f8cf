import type { z } from 'zod';
import { badInput } from './errors.ts';
import { nestedDeeperThan } from './model.ts';

/**
 * Commands are imperative and validated once; `decide*` turns a valid command into past-tense events.
 * Decisions are pure: time and ids are inputs.
 */

export { commandHash, envelope, Purpose, receiptKey, type DecideContext } from './command-envelope.ts';
export {
  decidePropose,
  EntityRef,
  entityIdFor,
  privateEntityIdFor,
  ProposeCommand,
  type PipelineDecisions,
  type ResolvedEntity,
} from './propose-command.ts';
export { decideRetract, decideRevise, RetractCommand, ReviseCommand } from './record-command.ts';
export { ApproveCommand, decideApprove, decideReject, RejectCommand } from './review-command.ts';
export { EpisodeCommand, TurnInput } from './episode-command.ts';
export { decideGrant, decideRevoke, GrantAccessCommand, RevokeAccessCommand } from './grant-command.ts';
export { decideFeedback, FeedbackCommand, FeedbackVerdicts } from './feedback-command.ts';

/** Deepest command input accepted; JSON extensions are limited further where they enter (the API scalar). */
export const MAX_INPUT_DEPTH = 64;

/** Validates `input` against `schema`; every problem becomes one BAD_USER_INPUT listing all of them. */
export function parseCommand<S extends z.ZodType>(
  schema: S,
  input: unknown,
  maxTextChars?: number,
): z.infer<S> {
  // Before anything recurses into it (the text scan below, zod, canonical JSON).
  if (nestedDeeperThan(input, MAX_INPUT_DEPTH))
    throw badInput(`input is nested deeper than ${MAX_INPUT_DEPTH} levels`);
  if (maxTextChars !== undefined) {
    const long = findLongString(input, maxTextChars);
    if (long) throw badInput(`${long} is longer than ${maxTextChars} characters`, { field: long });
  }
  const r = schema.safeParse(input);
  if (!r.success) {
    const problems = r.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`);
    throw badInput(`invalid input: ${problems.join('; ')}`, { problems });
  }
  return r.data;
}

function findLongString(v: unknown, max: number, path = 'input'): string | undefined {
  if (typeof v === 'string') return v.length > max ? path : undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = findLongString(v[i], max, `${path}.${i}`);
      if (p) return p;
    }
  } else if (v && typeof v === 'object') {
    for (const [key, x] of Object.entries(v)) {
      const p = findLongString(x, max, path === 'input' ? key : `${path}.${key}`);
      if (p) return p;
    }
  }
  return undefined;
}
