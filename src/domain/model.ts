import { z } from 'zod';

/** Vocabulary shared by events, the graph and the API. */
export const RecordClasses = [
  'FACT',
  'PREFERENCE',
  'DECISION',
  'CONSTRAINT',
  'PROCEDURE',
  'EVENT',
  'OBSERVATION',
  'NORMATIVE',
] as const;
export type RecordClass = (typeof RecordClasses)[number];

export const RecordStatuses = [
  'CANDIDATE',
  'ACTIVE',
  'CONTESTED',
  'SUPERSEDED',
  'RETRACTED',
  'REJECTED',
  'ARCHIVED',
  'ERASED',
  /** Undone by a rollback (its creating event was reverted); kept, with its history, for as-of reads. */
  'REVERTED',
] as const;
export type RecordStatus = (typeof RecordStatuses)[number];

export const Sensitivities = ['PUBLIC', 'INTERNAL', 'CONFIDENTIAL', 'RESTRICTED'] as const;
export type Sensitivity = (typeof Sensitivities)[number];

export const RelationTypes = [
  'ABOUT',
  'SUPPORTS',
  'CONTRADICTS',
  'SUPERSEDES',
  'EXTENDS',
  'DERIVED_FROM',
  'PART_OF',
  'CAUSED_BY',
  'APPLIES_TO',
  'REFERENCES',
  'DUPLICATE_OF',
  'SAME_AS',
] as const;
export type RelationType = (typeof RelationTypes)[number];

export const TimeSources = ['STATED', 'INFERRED', 'DEFAULTED'] as const;
export type TimeSource = (typeof TimeSources)[number];

export const Outcomes = [
  'ADMITTED',
  'QUEUED',
  'DUPLICATE',
  'REINFORCED',
  'SUPERSEDED',
  'CONTESTED',
  'REVISED',
  'RETRACTED',
  'REJECTED',
  'CONFLICT',
  'PENDING',
  'ERASED',
  'ARCHIVED',
  'ROLLED_BACK',
] as const;
export type Outcome = (typeof Outcomes)[number];

/**
 * Tenants and namespaces are case-insensitive: both schemas accept any case and fold to lower case, so
 * `ACME/ENG` and `acme/eng` name one namespace. Every way in parses through them (the token verifier for
 * tenants; commands, recall, read filters, config and the ledger envelope for namespaces), so nothing
 * downstream ever compares two spellings. Replaying an event written before folding folds it too.
 */
export const foldCase = (s: string): string => s.toLowerCase();

/** Tenants are short slugs; they are part of every key in the graph and the ledger's partition key. */
export const TenantId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/i, 'tenant must be a short slug')
  .transform(foldCase);

/** A namespace is a path of 1–12 segments: "acme/platform/payments-api/agent:reviewer". */
export const NamespacePath = z
  .string()
  .max(512)
  .regex(
    /^[a-z0-9][a-z0-9._:-]{0,62}(\/[a-z0-9][a-z0-9._:-]{0,62}){0,11}$/i,
    'namespace must be a path of slugs separated by "/"',
  )
  .transform(foldCase);

/** All instants are UTC ISO-8601 with milliseconds, so that string order is time order. */
export const Instant = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s).toISOString())
  .refine((s) => s >= '0001-01-01T00:00:00.000Z' && s <= '9999-12-31T23:59:59.999Z', 'out of range');
export const toInstant = (d: Date | number): string => new Date(d).toISOString();

export const Statement = z.object({
  subject: z.string().min(1).max(1000),
  predicate: z.string().min(1).max(200),
  object: z.string().min(1).max(4000),
  text: z.string().min(1).max(20_000),
});
export type Statement = z.infer<typeof Statement>;

export const SourceSpan = z.object({
  episodeId: z.string().min(1).max(200),
  start: z.number().int().min(0),
  end: z.number().int().min(0),
  label: z.string().max(200).nullable().default(null),
});
export type SourceSpan = z.infer<typeof SourceSpan>;

/** Namespace `a/b/c` lies within `a/b` and `a/b/c` itself. */
export const withinNamespace = (ns: string, root: string): boolean =>
  ns === root || ns.startsWith(`${root}/`);

/** The ancestors of a namespace, nearest first, including itself: a/b/c → [a/b/c, a/b, a]. */
export function namespaceChain(ns: string): string[] {
  const parts = ns.split('/');
  const out: string[] = [];
  for (let i = parts.length; i > 0; i--) out.push(parts.slice(0, i).join('/'));
  return out;
}

/**
 * Whether a JSON-like value nests deeper than `max` levels (`{}` and `[]` are 1, `{"a":{}}` 2). Iterative,
 * so that a hostile value is measured without the recursion it would break.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
