import { z } from 'zod';
import { Instant, NamespacePath, Sensitivities } from './model.ts';
import { IdempotencyKey, Purpose } from './command-envelope.ts';

export const TurnInput = z.object({
  role: z.string().min(1).max(50),
  speaker: z.string().min(1).max(200).optional(),
  text: z.string().max(100_000),
  label: z.string().min(1).max(200).optional(),
});

export const EpisodeCommand = z.object({
  namespace: NamespacePath,
  source: z.string().min(1).max(200),
  occurredAt: Instant,
  turns: z.array(TurnInput).min(1).max(5000),
  purpose: Purpose,
  idempotencyKey: IdempotencyKey,
  changesetId: z.string().min(1).max(200).optional(),
  sensitivity: z.enum(Sensitivities).default('INTERNAL'),
  /** Every extracted statement waits for a reviewer (CANDIDATE drafts), whatever the admission policy says. */
  review: z.boolean().default(false),
});
export type EpisodeCommand = z.infer<typeof EpisodeCommand>;
