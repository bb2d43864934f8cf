import { createHash } from 'node:crypto';
import { isApprovedInstruction } from '../domain/instructions.ts';
import { namespaceChain } from '../domain/model.ts';
import { escapeText } from '../recall/envelope.ts';
import type { DeliveryProfile } from './profiles.ts';

/**
 * Renders a context pack through a delivery profile into the fenced block Muninn owns in a harness file.
 * Pure and deterministic (no clock, stable order), so the same records give the same bytes: a second sync
 * changes nothing.
 */
export interface PackRecord {
  readonly id: string;
  readonly namespace: string;
  readonly class: string;
  readonly status: string;
  /** Set by a review approval; null when none approved the current text. */
  readonly approvedAt: string | null;
  readonly text: string;
  readonly createdAt: string;
}

export interface ContextPack {
  /** The namespace the harness works in; rules of it and of its ancestors apply. */
  readonly namespace: string;
  readonly records: readonly PackRecord[];
  /** The escaped `<muninn-memory>` envelope of a recall, for profiles that carry memory. */
  readonly envelope?: string;
}

/** The records that may be rendered as instructions: approved NORMATIVE ones governing the namespace. */
export function instructionsOf(pack: ContextPack): PackRecord[] {
  const governing = new Set(namespaceChain(pack.namespace));
  return pack.records
    .filter((r) => isApprovedInstruction(r) && governing.has(r.namespace))
    .sort(
      (a, b) =>
        depth(a.namespace) - depth(b.namespace) ||
        a.createdAt.localeCompare(b.createdAt) ||
        a.id.localeCompare(b.id),
    );
}

const depth = (ns: string) => ns.split('/').length;

/** The whole block, from the begin line to the end line (no trailing newline). */
export function renderBlock(profile: DeliveryProfile, pack: ContextPack): string {
  const body = renderBody(profile, pack);
  const attrs = [
    `profile=${profile.name}`,
    `namespace=${oneWord(pack.namespace)}`,
    // The body's digest: a later sync that finds other bytes inside the fence knows someone edited them.
    `sha256=${digest(body)}`,
  ].join(' ');
  return `${profile.fence.begin.replace('{attrs}', attrs)}\n${body}${profile.fence.end}`;
}

export function renderBody(profile: DeliveryProfile, pack: ContextPack): string {
  const fill = (template: string, r?: PackRecord) =>
    template
      .replaceAll('{namespace}', oneWord(r ? r.namespace : pack.namespace))
      .replaceAll('{id}', r ? oneWord(r.id) : '')
      .replaceAll('{text}', r ? oneLine(r.text) : '');
  const rules = instructionsOf(pack);
  const lines = [profile.heading, '', fill(profile.intro), ''];
  if (rules.length === 0) lines.push(profile.empty);
  else for (const r of rules) lines.push(fill(profile.item, r));
  if (profile.memory && pack.envelope) lines.push('', profile.memoryHeading, '', pack.envelope.trimEnd());
  return `${lines.join('\n')}\n`;
}

export const digest = (body: string): string => createHash('sha256').update(body).digest('hex').slice(0, 16);

/**
 * One line of rule text: escaped like the recall envelope (no tags, fences or role labels survive, so a
 * rule can never write a fence line or a comment) and with every line break folded into a space.
 */
function oneLine(s: string): string {
  return escapeText(s)
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

function oneWord(s: string): string {
  return escapeText(s).replace(/[^A-Za-z0-9._/:-]/g, '_');
}
