import { badInput } from '../domain/errors.ts';
import type { Principal } from '../domain/principal.ts';
import { parseLocomo, type LocomoEpisode, type LocomoQuestion, type LocomoSet } from '../ingest/locomo.ts';
import type { WriteService } from '../ingest/write-service.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { RecallService } from '../recall/service.ts';
import { cosine } from '../ports/embedder.ts';
import { rankLexical, terms } from '../recall/lexical.ts';
import type { RecallResult } from '../recall/service.ts';
import type { SignalBreakdown } from '../recall/fuse.ts';

/**
 * LoCoMo-format evaluation, one implementation for `npm run eval:locomo` (the development split, through
 * GraphQL) and `muninn eval --locomo FILE` (a user's own conversations, in process): ingest each session
 * as an episode, recall every answerable question inside its conversation's namespace with each recipe,
 * and score the turns the returned records cite against the question's evidence — recall_any@k,
 * recall_all@k and MRR per category — next to the issue #10 baseline over the same turns (BM25 and the
 * local embedder over one "speaker: text" document per turn, fused by RRF k = 60).
 */

/** One returned item: the turn labels (dia_ids) its record cites, and, for the weight search, its why. */
export interface LocomoItem {
  readonly labels: readonly string[];
  /** Arms that found it, with 1-based ranks (after same-span collapse). */
  readonly arms?: ReadonlyArray<{ readonly arm: string; readonly rank: number }>;
  /** The blend's contributions other than fused relevance (policy signals), summed. */
  readonly policy?: number;
  /** The `subject` signal's value (1 when the question names the record's subject): the weight search varies its weight. */
  readonly subject?: number;
}

export interface LocomoPorts {
  /** Ingest one session into `namespace` (idempotent: a repeat is a no-op). */
  ingest(episode: LocomoEpisode, namespace: string): Promise<void>;
  recall(
    question: LocomoQuestion,
    namespace: string,
    recipe: string,
    limit: number,
  ): Promise<{ readonly tokens: number; readonly items: readonly LocomoItem[] }>;
  /** The local embedder, for the baseline; absent = no baseline. */
  embed?(texts: readonly string[]): Promise<readonly Float32Array[]>;
  progress?(line: string): void;
}

export interface LocomoOptions {
  readonly recipes: readonly string[];
  readonly k: number;
  /** Conversation `sampleId` → namespace. */
  readonly namespaceOf: (sampleId: string) => string;
  /** Ask for this many items per recall (≥ k), to keep the candidates for the weight search. */
  readonly fetch?: number;
}

export interface Row {
  any: number;
  all: number;
  rr: number;
  n: number;
}

export interface LocomoQuestionResult {
  readonly question: LocomoQuestion;
  readonly recipe: string;
  readonly items: readonly LocomoItem[];
  readonly ms: number;
  readonly tokens: number;
}

export interface LocomoReport {
  readonly questions: number;
  readonly k: number;
  /** recipe → category → totals; recipe "baseline" is the issue #10 baseline. */
  readonly rows: Readonly<Record<string, Readonly<Record<string, Row>>>>;
  readonly latencies: Readonly<Record<string, readonly number[]>>;
  readonly tokens: Readonly<Record<string, readonly number[]>>;
  readonly perQuestion: readonly LocomoQuestionResult[];
  readonly ingestSeconds: number;
}

/** The policy signals' part of a blended score (everything but fused relevance). */
export function policyPart(signals: SignalBreakdown): number {
  return Object.entries(signals).reduce((s, [name, x]) => (name === 'rrf' ? s : s + x.contribution), 0);
}

/** The turn labels a record's sources cite (`sourcesJson` as stored). */
export function citedLabels(sourcesJson: string): string[] {
  try {
    const v: unknown = JSON.parse(sourcesJson);
    if (!Array.isArray(v)) return [];
    return v
      .map((x: unknown) => (x && typeof x === 'object' && 'label' in x ? x.label : null))
      .filter((l): l is string => typeof l === 'string' && l.length > 0);
  } catch {
    return [];
  }
}

/** An in-process recall's items as LoCoMo items. */
export function locomoItems(r: RecallResult): LocomoItem[] {
  return r.pack.items.map((i) => ({
    labels: citedLabels(r.records.get(i.id)?.sourcesJson ?? '[]'),
    arms: i.why.arms,
    policy: policyPart(i.why.signals),
    subject: i.why.signals.subject.value,
  }));
}

/** Does a ranked list of cited-label sets hit the evidence: first hit's rank (0 = none) and full cover. */
export function scoreRanked(
  evidence: readonly string[],
  ranked: ReadonlyArray<readonly string[]>,
  k: number,
): { firstHit: number; all: boolean } {
  const ev = new Set(evidence);
  const top = ranked.slice(0, k);
  const firstHit = top.findIndex((ls) => ls.some((l) => ev.has(l))) + 1;
  const covered = new Set(top.flatMap((ls) => ls.filter((l) => ev.has(l))));
  return { firstHit, all: ev.size > 0 && covered.size === ev.size };
}

export function addScore(row: Row, s: { firstHit: number; all: boolean }): void {
  row.n++;
  if (s.firstHit > 0) {
    row.any++;
    row.rr += 1 / s.firstHit;
  }
  if (s.all) row.all++;
}

/** Ingest, baseline, recall with each recipe, score. Questions without evidence are skipped. */
export async function runLocomo(set: LocomoSet, ports: LocomoPorts, o: LocomoOptions): Promise<LocomoReport> {
  const t0 = performance.now();
  for (const ep of set.episodes) {
    await ports.ingest(ep, o.namespaceOf(ep.sampleId));
    ports.progress?.(`ingested ${ep.sampleId} session ${ep.session}`);
  }
  const ingestSeconds = (performance.now() - t0) / 1000;
  const questions = set.questions.filter((q) => q.evidence.length > 0);
  const rows: Record<string, Record<string, Row>> = {};
  const row = (recipe: string, cat: number) =>
    ((rows[recipe] ??= {})[String(cat)] ??= { any: 0, all: 0, rr: 0, n: 0 });
  if (ports.embed) {
    for (const [q, ranked] of await baseline(set, questions, ports.embed, o.k))
      addScore(row('baseline', q.category), scoreRanked(q.evidence, ranked, o.k));
  }
  const latencies: Record<string, number[]> = {};
  const tokens: Record<string, number[]> = {};
  const perQuestion: LocomoQuestionResult[] = [];
  for (const recipe of o.recipes) {
    for (const [i, q] of questions.entries()) {
      const t = performance.now();
      const r = await ports.recall(q, o.namespaceOf(q.sampleId), recipe, Math.max(o.k, o.fetch ?? o.k));
      const ms = performance.now() - t;
      (latencies[recipe] ??= []).push(ms);
      (tokens[recipe] ??= []).push(r.tokens);
      perQuestion.push({ question: q, recipe, items: r.items, ms, tokens: r.tokens });
      const ranked = r.items.map((it) => it.labels);
      addScore(row(recipe, q.category), scoreRanked(q.evidence, ranked, o.k));
      if (i % 50 === 0) ports.progress?.(`${recipe}: ${i}/${questions.length}`);
    }
  }
  return { questions: questions.length, k: o.k, rows, latencies, tokens, perQuestion, ingestSeconds };
}

/**
 * The issue #10 baseline over the same turns: per conversation, BM25 and the embedder over one
 * "speaker: text" document per turn, fused by RRF k = 60; each document cites its own turn.
 */
export async function baseline(
  set: LocomoSet,
  questions: readonly LocomoQuestion[],
  embed: (texts: readonly string[]) => Promise<readonly Float32Array[]>,
  k: number,
): Promise<Array<[LocomoQuestion, string[][]]>> {
  const out: Array<[LocomoQuestion, string[][]]> = [];
  for (const sampleId of [...new Set(questions.map((q) => q.sampleId))]) {
    const turns = set.episodes.filter((e) => e.sampleId === sampleId).flatMap((e) => e.turns);
    const docs = turns.map((t) => ({ id: t.label, text: `${t.speaker}: ${t.text}` }));
    const vectors = await embed(docs.map((d) => d.text));
    for (const q of questions.filter((x) => x.sampleId === sampleId)) {
      const [qv] = await embed([q.question]);
      const dense = docs
        .map((d, i) => ({ id: d.id, s: cosine(qv!, vectors[i]!) }))
        .sort((a, b) => b.s - a.s)
        .map((d) => d.id);
      const fused = new Map<string, number>();
      for (const ids of [rankLexical(q.question, docs, docs.length, { analyze: terms }), dense])
        ids.forEach((id, r) => fused.set(id, (fused.get(id) ?? 0) + 1 / (60 + r + 1)));
      const top = [...fused].sort((a, b) => b[1] - a[1]).slice(0, k);
      out.push([q, top.map(([id]) => [id])]);
    }
  }
  return out;
}

const pct = (xs: readonly number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((p / 100) * (xs.length - 1))] ?? NaN;
const f3 = (x: number) => x.toFixed(3);

/** The per-recipe, per-category table (Markdown), the latency and tokens lines. */
export function formatLocomo(r: LocomoReport, title: string): string {
  const lines = [
    title,
    `| recipe | category | n | recall_any@${r.k} | recall_all@${r.k} | MRR |`,
    '|---|---|---|---|---|---|',
  ];
  for (const [recipe, cats] of Object.entries(r.rows)) {
    const tot: Row = { any: 0, all: 0, rr: 0, n: 0 };
    for (const [cat, x] of Object.entries(cats).sort()) {
      lines.push(
        `| ${recipe} | ${cat} | ${x.n} | ${f3(x.any / x.n)} | ${f3(x.all / x.n)} | ${f3(x.rr / x.n)} |`,
      );
      tot.any += x.any;
      tot.all += x.all;
      tot.rr += x.rr;
      tot.n += x.n;
    }
    lines.push(
      `| ${recipe} | all | ${tot.n} | ${f3(tot.any / tot.n)} | ${f3(tot.all / tot.n)} | ${f3(tot.rr / tot.n)} |`,
    );
  }
  for (const [recipe, l] of Object.entries(r.latencies))
    lines.push(
      `recall latency (${recipe}, sequential): p50 ${pct(l, 50).toFixed(1)} ms, p95 ${pct(l, 95).toFixed(1)} ms; tokens returned p50 ${pct(r.tokens[recipe] ?? [], 50)}`,
    );
  lines.push(`ingest ${r.ingestSeconds.toFixed(0)} s`);
  return lines.join('\n');
}

/** A user's LoCoMo-format file, parsed; anything unreadable is the caller's mistake: BAD_USER_INPUT. */
export function parseLocomoFile(text: string): LocomoSet {
  try {
    return parseLocomo(JSON.parse(text));
  } catch (e) {
    const message = e instanceof Error ? e.message.slice(0, 500) : String(e);
    throw badInput(`not a LoCoMo-format file: ${message}`);
  }
}

/**
 * Ports over the in-process services (`muninn eval --locomo`): each session an episode written by
 * `principal` (waiting for its projection), each question a recall under the same principal.
 */
export function serviceLocomoPorts(
  services: { readonly writes: WriteService; readonly recall: RecallService },
  principal: Principal,
  embedder?: Embedder,
  purpose = 'eval',
): LocomoPorts {
  return {
    async ingest(ep, namespace) {
      const receipts = await services.writes.ingestEpisode(
        principal,
        {
          namespace,
          source: 'import:locomo',
          occurredAt: ep.occurredAt,
          turns: ep.turns,
          purpose,
          idempotencyKey: `locomo:${namespace}:${ep.sampleId}-${ep.session}`,
        },
        true,
      );
      // Scoring before the projection caught up would score an empty namespace.
      if (receipts.some((r) => r.outcome === 'PENDING'))
        throw new Error(
          `${ep.sampleId} session ${ep.session} is not projected yet: is \`muninn serve\` running?`,
        );
    },
    async recall(q, namespace, recipe, limit) {
      const r = await services.recall.recall(principal, {
        query: q.question,
        namespace,
        purpose,
        recipe,
        limit,
        tokenBudget: 100_000,
      });
      return { tokens: r.pack.tokens, items: locomoItems(r) };
    },
    ...(embedder ? { embed: (texts: readonly string[]) => embedder.embed([...texts]) } : {}),
  };
}
