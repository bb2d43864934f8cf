import { z } from 'zod';
import { parseSessionDate } from './session-date.ts';

/**
 * The LoCoMo benchmark's conversations (Maharana et al., ACL 2024; CC BY-NC 4.0) as Muninn episodes:
 * one episode per session (world time = the session's date), one turn per utterance labelled with its
 * dia_id, so every extracted record cites the turn it came from. The data file is read from
 * ../shared/eval/locomo/ and never copied into the repository.
 */
const Turn = z.object({
  speaker: z.string(),
  dia_id: z.string(),
  text: z.string(),
  blip_caption: z.string().optional(),
  img_url: z.unknown().optional(),
});
const Qa = z.object({
  question: z.string(),
  answer: z.unknown().optional(),
  adversarial_answer: z.unknown().optional(),
  category: z.number().int(),
  evidence: z.array(z.string()).default([]),
});
const Conversation = z.object({
  sample_id: z.string(),
  conversation: z.record(z.string(), z.unknown()),
  qa: z.array(Qa),
});
export const LocomoFile = z.array(Conversation);

export interface LocomoEpisode {
  readonly sampleId: string;
  readonly session: number;
  readonly occurredAt: string;
  readonly turns: ReadonlyArray<{ role: string; speaker: string; text: string; label: string }>;
}

export interface LocomoQuestion {
  readonly sampleId: string;
  readonly question: string;
  readonly category: number;
  /** Evidence dia_ids (malformed ones split on ';' and dropped when they still do not parse). */
  readonly evidence: readonly string[];
}

export interface LocomoSet {
  readonly episodes: readonly LocomoEpisode[];
  /** Every question that has an `answer` (category 5 adversarial questions have none). */
  readonly questions: readonly LocomoQuestion[];
}

const DIA = /^D\d+:\d+$/;

export function parseLocomo(json: unknown): LocomoSet {
  const file = LocomoFile.parse(json);
  const episodes: LocomoEpisode[] = [];
  const questions: LocomoQuestion[] = [];
  for (const c of file) {
    const conv = c.conversation;
    const sessions = Object.keys(conv)
      .map((k) => /^session_(\d+)$/.exec(k))
      .filter((m): m is RegExpExecArray => m !== null && Array.isArray(conv[m[0]]))
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    for (const n of sessions) {
      const turns = z.array(Turn).parse(conv[`session_${n}`]);
      const when = parseSessionDate(String(conv[`session_${n}_date_time`] ?? ''));
      if (!when) throw new Error(`${c.sample_id} session ${n}: unreadable date`);
      episodes.push({
        sampleId: c.sample_id,
        session: n,
        occurredAt: when,
        turns: turns
          .filter((t) => t.text.trim().length > 0 || t.blip_caption)
          .map((t) => ({
            role: 'user',
            speaker: t.speaker,
            // A shared photo is part of what was said: keep its caption with the text.
            text: t.blip_caption ? `${t.text} [shares a photo: ${t.blip_caption}]`.trim() : t.text,
            label: t.dia_id,
          })),
      });
    }
    for (const q of c.qa) {
      if (q.answer === undefined) continue;
      const evidence = q.evidence
        .flatMap((e) => e.split(';'))
        .map((e) => e.trim())
        .filter((e) => DIA.test(e));
      questions.push({ sampleId: c.sample_id, question: q.question, category: q.category, evidence });
    }
  }
  return { episodes, questions };
}

/** The namespace a conversation is ingested into. */
export const locomoNamespace = (sampleId: string): string => `locomo/${sampleId}`;
