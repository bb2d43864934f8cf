/**
 * Validation of the chat extractor's replies (openai-chat.ts): the completion envelope, the statements
 * object, and each statement, kept only when it is well formed and grounded in the turns that were sent.
 */
import { z } from 'zod';
import { RecordClasses } from '../../domain/model.ts';
import type { CitedSpan, EpisodeTurn, ExtractedStatement } from '../../ports/extractor.ts';

export const ChatResponse = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          refusal: z.string().nullish(),
        }),
      }),
    )
    .min(1),
});

export const Reply = z.object({ statements: z.array(z.unknown()).max(2000) });

const StatementReply = z.object({
  class: z.enum(RecordClasses),
  subject: z.string(),
  predicate: z.string(),
  object: z.string(),
  text: z.string(),
  spans: z.array(z.object({ start: z.number().int(), end: z.number().int(), label: z.string().nullish() })),
  confidence: z.number().min(0).max(1),
  rationale: z.string().nullish(),
  about: z
    .array(z.object({ name: z.string(), type: z.string().nullish() }))
    .nullish()
    .transform((a) => a ?? []),
  timeExpression: z.string().nullish(),
});

const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();
const blankOrNull = (s: string | null | undefined): string | null => {
  const t = s === null || s === undefined ? '' : squash(s);
  return t === '' ? null : t;
};

/**
 * Checks every span against the turns that were sent; null when any span is invalid or there is none.
 * A span must lie within the sent turns' extent and overlap at least one of them; its ends are then trimmed to
 * the turns it overlaps (separators between turns are not content), and its label is the first such turn's.
 */
function groundSpans(
  spans: ReadonlyArray<{ start: number; end: number }>,
  turns: readonly EpisodeTurn[],
): CitedSpan[] | null {
  if (spans.length === 0 || turns.length === 0) return null;
  const lo = Math.min(...turns.map((t) => t.start));
  const hi = Math.max(...turns.map((t) => t.end));
  const out: CitedSpan[] = [];
  for (const sp of spans) {
    if (sp.start < lo || sp.end > hi || sp.end <= sp.start) return null;
    const overlapping = turns
      .filter((t) => t.start < sp.end && sp.start < t.end)
      .sort((a, b) => a.start - b.start);
    const first = overlapping[0];
    const last = overlapping[overlapping.length - 1];
    if (!first || !last) return null;
    const cited = overlapping
      .map((t) => t.text.slice(Math.max(0, sp.start - t.start), Math.min(t.text.length, sp.end - t.start)))
      .join('');
    if (cited.trim() === '') return null;
    out.push({ start: Math.max(sp.start, first.start), end: Math.min(sp.end, last.end), label: first.label });
  }
  return out;
}

export function toStatements(items: readonly unknown[], turns: readonly EpisodeTurn[]): ExtractedStatement[] {
  const out: ExtractedStatement[] = [];
  for (const item of items) {
    const parsed = StatementReply.safeParse(item);
    if (!parsed.success) continue;
    const s = parsed.data;
    const subject = squash(s.subject);
    const predicate = squash(s.predicate);
    const object = squash(s.object);
    const text = squash(s.text);
    const rationale = blankOrNull(s.rationale);
    if (!subject || !predicate || !object || !text) continue;
    if (s.class === 'DECISION' && rationale === null) continue;
    const spans = groundSpans(s.spans, turns);
    if (!spans) continue;
    out.push({
      class: s.class,
      subject,
      predicate,
      object,
      text,
      spans,
      confidence: s.confidence,
      rationale,
      about: s.about
        .map((a) => ({ name: squash(a.name), type: blankOrNull(a.type) }))
        .filter((a) => a.name !== ''),
      timeExpression: blankOrNull(s.timeExpression),
    });
  }
  return out;
}
