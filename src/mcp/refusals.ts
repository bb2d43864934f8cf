import { setTimeout as pause } from 'node:timers/promises';
import type { GraphQLFailure, GraphQLOutcome } from '../client/graphql.ts';
import type { RunOperation } from './server.ts';
import type { ToolDef } from './tools.ts';

/**
 * A tool call the API refused with RATE_LIMITED is run again after the `retryAfterMs` the refusal names,
 * within a budget, before the agent sees it. Why: an agent reads a tool error as a failure to report or to
 * work around, not as "come back in 200 ms"; and a refusal is the API's answer to a burst (the overload
 * guard, the subject gate's bound, a write budget), which a short wait usually outlasts. Safe for writes:
 * a refused call appended nothing (the refusal comes before the append), and a write tool's idempotency
 * key, where given, still holds. Only RATE_LIMITED is retried: UNAVAILABLE may come after an append.
 * Past the budget the agent gets the refusal, with its `retryAfterMs`.
 */
export interface RetryOptions {
  /** The most the bridge waits for one call, over all its retries. */
  readonly budgetMs: number;
  /** The most times one call is run again. */
  readonly maxRetries: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export const REFUSAL_RETRIES: RetryOptions = { budgetMs: 5_000, maxRetries: 4 };
/** A refusal without its own `retryAfterMs` is run again after this long. */
const DEFAULT_WAIT_MS = 250;

/**
 * `run`, with each RATE_LIMITED answer run again after its retryAfterMs while the budget allows; with how
 * many times it was run again and how long it waited (the bridge's log line says both).
 */
export async function runRetrying(
  run: RunOperation,
  tool: ToolDef,
  variables: Record<string, unknown>,
  o: RetryOptions = REFUSAL_RETRIES,
): Promise<{ outcome: GraphQLOutcome; retries: number; waitedMs: number }> {
  const sleep = o.sleep ?? ((ms: number) => pause(ms));
  let waitedMs = 0;
  for (let retries = 0; ; retries++) {
    const outcome = await run(tool, variables);
    const wait = refusalWait(outcome);
    if (wait === null || retries >= o.maxRetries || waitedMs + wait > o.budgetMs)
      return { outcome, retries, waitedMs };
    await sleep(wait);
    waitedMs += wait;
  }
}

/** How long the refusal asks to wait, or null when the outcome is not a refusal (every error RATE_LIMITED). */
export function refusalWait(outcome: GraphQLOutcome): number | null {
  if (outcome.ok || outcome.errors.length === 0) return null;
  if (!outcome.errors.every((e) => e.code === 'RATE_LIMITED')) return null;
  return Math.max(...outcome.errors.map(retryAfter));
}

function retryAfter(e: GraphQLFailure): number {
  const ms = e.details?.['retryAfterMs'];
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? Math.ceil(ms) : DEFAULT_WAIT_MS;
}
