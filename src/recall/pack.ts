import { handleFor } from '../domain/handles.ts';

export { handleFor, recordOfHandle } from '../domain/handles.ts';
import {
  envelopeFrame,
  isInstruction,
  renderEnvelope,
  renderItem,
  type EnvelopeItem,
  type EnvelopeOptions,
  type Level,
} from './envelope.ts';
import { cmp, type RecallItem, type Why } from './fuse.ts';

export type { Level } from './envelope.ts';

/**
 * Near-duplicate removal and packing to a token budget with progressive disclosure. Pure.
 */

/**
 * A conservative token estimate that needs no tokenizer. Each character has a cost in quarter tokens:
 *  - ASCII letters and the space: ¼ (the usual "4 characters per token" of English prose);
 *  - every other ASCII character (digits, punctuation, newline, tab): 1 — tokenizers often split
 *    these one by one (several split every digit);
 *  - other characters by UTF-8 length, since byte-level tokenizers fall back to bytes: 2 bytes (accented
 *    Latin, Greek, Cyrillic…) 1, 3 bytes (CJK, most symbols) 2, 4 bytes (emoji) 3.
 * The estimate is ceil(Σ cost). Prose comes out 10–40% above real BPE counts, digit- and punctuation-
 * heavy text more. Because the cost is a sum over characters, estimateTokens(a + b) ≤ estimateTokens(a) +
 * estimateTokens(b): the parts of a text never under-count the whole, which is what `pack` relies on.
 */
export function estimateTokens(text: string): number {
  if (typeof text !== 'string') return 0;
  let quarters = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) quarters += 1;
    else if (c < 0x80) quarters += 4;
    else if (c < 0x800) quarters += 4;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        quarters += 12;
        i++;
      } else quarters += 8;
    } else quarters += 8;
  }
  return Math.ceil(quarters / 4);
}

/**
 * Drop near-duplicates, keeping the higher-scored item: items are visited by score (descending, then id)
 * and one is kept unless `cosineOf` with an already kept item is ≥ `threshold`. `cosineOf` returns null
 * when it cannot tell (no vectors): never a duplicate. Output is in that rank order.
 */
export function dropNearDuplicates<T extends { readonly id: string; readonly score: number }>(
  items: readonly T[],
  cosineOf: (a: T, b: T) => number | null,
  threshold: number,
): T[] {
  const kept: T[] = [];
  for (const item of [...items].sort((a, b) => b.score - a.score || cmp(a.id, b.id))) {
    const dup = kept.some((k) => {
      if (k.id === item.id) return true;
      const c = cosineOf(k, item);
      return c !== null && Number.isFinite(c) && c >= threshold;
    });
    if (!dup) kept.push(item);
  }
  return kept;
}

export const HEADLINE_MAX = 100;
export const SUMMARY_MAX = 300;

const collapse = (s: string): string => (typeof s === 'string' ? s.replace(/\s+/g, ' ').trim() : '');

/** Cut to at most `max` UTF-16 units, at a word boundary when one is near, ending with "…". */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  let cut = max - 1;
  const c = s.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--;
  const space = s.lastIndexOf(' ', cut);
  if (space >= Math.floor(max * 0.6)) cut = space;
  return `${s.slice(0, cut).trimEnd()}…`;
}

const firstSentence = (s: string): string => /^.*?[.!?](?=\s|$)/.exec(s)?.[0] ?? s;

/** "subject — predicate — object" when all three are present, else the text's first sentence; ≤ 100. */
export function headlineOf(item: Pick<RecallItem, 'subject' | 'predicate' | 'object' | 'text'>): string {
  const spo = [item.subject, item.predicate, item.object].map(collapse);
  const h = spo.every((x) => x.length > 0) ? spo.join(' — ') : firstSentence(collapse(item.text));
  return truncate(h, HEADLINE_MAX);
}

/** The leading sentences of the text that fit in 300 characters (or the first one, cut); one line. */
export function summaryOf(text: string): string {
  const t = collapse(text);
  if (t.length <= SUMMARY_MAX) return t;
  let out = '';
  for (const sentence of t.split(/(?<=[.!?])\s+/)) {
    const next = out ? `${out} ${sentence}` : sentence;
    if (next.length > SUMMARY_MAX) break;
    out = next;
  }
  return out || truncate(t, SUMMARY_MAX);
}

/** The body an item shows at a disclosure level (what `expand(handle, level)` returns too). */
export function bodyAt(
  item: Pick<RecallItem, 'subject' | 'predicate' | 'object' | 'text'>,
  level: Level,
): string {
  const headline = headlineOf(item);
  if (level === 'headline') return headline;
  if (level === 'summary') return summaryOf(item.text) || headline;
  return typeof item.text === 'string' && item.text.trim().length > 0 ? item.text : headline;
}

export interface PackedItem extends EnvelopeItem {
  readonly id: string;
  readonly score: number;
  readonly why: Why;
  /** Tokens of this item's rendered block (header and body). */
  readonly tokens: number;
}

export interface Pack {
  /** In rank order; render them with `renderEnvelope(items, { recallId })`. */
  readonly items: PackedItem[];
  /** estimateTokens of the rendered envelope: never above the budget. */
  readonly tokens: number;
  readonly budget: number;
  /** Ids of ranked items that did not fit, best first. */
  readonly omitted: string[];
}

const LEVELS: readonly Level[] = ['full', 'summary', 'headline'];

/**
 * Pack to `tokenBudget`. Items go in by score (descending, then id; a repeated id once): each at full
 * text if it fits, else its summary, else its headline; the first item that does not fit even as a
 * headline ends the pack, and it and everything after it are `omitted`. What is counted is the rendered
 * envelope — item headers, escaped and prefixed bodies, and the section tags (the memory section's when
 * the first item goes in, the instructions section's when the first instruction does) — so
 * estimateTokens(renderEnvelope(pack.items, opts)) ≤ tokenBudget always; an envelope with no items
 * renders as nothing. A budget that is not a finite number ≥ 0 counts as 0.
 */
export function pack(
  items: readonly RecallItem[],
  tokenBudget: number,
  /** `caller` (`iss|sub`) is bound into every handle: feedback with it from anyone else is refused. */
  opts: EnvelopeOptions & { readonly handleKey?: string; readonly caller?: string },
): Pack {
  const budget = Number.isFinite(tokenBudget) && tokenBudget > 0 ? Math.floor(tokenBudget) : 0;
  const seen = new Set<string>();
  const ranked = [...items]
    .sort((a, b) => b.score - a.score || cmp(a.id, b.id))
    .filter((i) => (seen.has(i.id) ? false : (seen.add(i.id), true)));

  const frame = envelopeFrame(opts);
  const memoryFrame = estimateTokens(frame.memoryOpen) + estimateTokens(frame.memoryClose);
  const instructionsFrame = estimateTokens(frame.instructionsOpen) + estimateTokens(frame.instructionsClose);

  const out: PackedItem[] = [];
  let used = 0;
  let instructions = false;
  for (const item of ranked) {
    const base = {
      id: item.id,
      score: item.score,
      why: item.why,
      handle: handleFor(opts.recallId, item.id, opts.handleKey, opts.caller),
      class: item.class,
      status: item.status,
      confidence: item.confidence,
      validFrom: item.validFrom,
      validTo: item.validTo,
      source: item.source,
      approved: item.approved,
      contested: item.contested,
    };
    const instruction = isInstruction(base);
    const overhead =
      (out.length === 0 ? memoryFrame : 0) + (instruction && !instructions ? instructionsFrame : 0);
    let chosen: PackedItem | undefined;
    let previous: string | undefined;
    for (const level of LEVELS) {
      const body = bodyAt(item, level);
      if (body === previous) continue;
      previous = body;
      const candidate = { ...base, level, body };
      const tokens = estimateTokens(renderItem(candidate, out.length + 1));
      if (used + overhead + tokens <= budget) {
        chosen = { ...candidate, tokens };
        break;
      }
    }
    if (!chosen) break;
    out.push(chosen);
    used += overhead + chosen.tokens;
    instructions ||= instruction;
  }
  return {
    items: out,
    tokens: estimateTokens(renderEnvelope(out, opts)),
    budget,
    omitted: ranked.slice(out.length).map((i) => i.id),
  };
}
