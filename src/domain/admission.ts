import { z } from 'zod';
import { foldCase, RecordClasses, Sensitivities, type RecordClass, type Sensitivity } from './model.ts';

/**
 * The admission policy is data: which proposals become ACTIVE at once and which wait for a reviewer,
 * write budgets and quality gates. Loaded from MUNINN_POLICY_FILE (JSON) or this default.
 */
// Folded like NamespacePath, so a rule written `ACME/**` still matches the namespaces it meant.
const Glob = z.string().min(1).max(512).transform(foldCase);

export const AdmissionRule = z.object({
  /** Namespace globs: `acme/**` (the subtree), `acme/*` (direct children), `acme` (exactly). */
  namespaces: z.array(Glob).min(1).default(['**']),
  classes: z.array(z.enum(RecordClasses)).default([...RecordClasses]),
  /** Who may auto-admit: people (no `act` chain), agents (acting for someone), or both. */
  writers: z.enum(['any', 'humans', 'agents']).default('any'),
  maxSensitivity: z.enum(Sensitivities).default('CONFIDENTIAL'),
  minConfidence: z.number().min(0).max(1).default(0),
});
export type AdmissionRule = z.infer<typeof AdmissionRule>;

const Bucket = z.object({ perMinute: z.number().positive(), burst: z.number().int().positive() });

export const AdmissionPolicy = z.object({
  version: z.string().default('default-1'),
  /** A proposal auto-admits when ANY rule matches and nothing in `review` applies. */
  autoAdmit: z.array(AdmissionRule).default([
    {
      namespaces: ['**'],
      classes: [...RecordClasses.filter((c) => c !== 'NORMATIVE')],
      writers: 'any',
      maxSensitivity: 'CONFIDENTIAL',
      minConfidence: 0.2,
    },
  ]),
  review: z
    .object({
      /** Classes that always wait for a reviewer. */
      classes: z.array(z.enum(RecordClasses)).default(['NORMATIVE']),
      /** Screening flags (prefix match, e.g. `injection:`) that always wait for a reviewer. */
      flags: z.array(z.string()).default(['injection:']),
    })
    .default({ classes: ['NORMATIVE'], flags: ['injection:'] }),
  budgets: z
    .object({
      perWriterPerNamespace: Bucket.default({ perMinute: 600, burst: 200 }),
      perNamespace: Bucket.default({ perMinute: 6000, burst: 2000 }),
    })
    .default({
      perWriterPerNamespace: { perMinute: 600, burst: 200 },
      perNamespace: { perMinute: 6000, burst: 2000 },
    }),
  gates: z
    .object({
      maxTextChars: z.number().int().positive().default(4000),
      minTextChars: z.number().int().nonnegative().default(2),
    })
    .default({ maxTextChars: 4000, minTextChars: 2 }),
});
export type AdmissionPolicy = z.infer<typeof AdmissionPolicy>;

export const defaultAdmissionPolicy: AdmissionPolicy = AdmissionPolicy.parse({});

export function namespaceMatches(glob: string, ns: string): boolean {
  if (glob === '**') return true;
  if (glob.endsWith('/**')) {
    const root = glob.slice(0, -3);
    return ns === root || ns.startsWith(`${root}/`);
  }
  if (glob.endsWith('/*')) {
    const root = glob.slice(0, -2);
    return ns.startsWith(`${root}/`) && !ns.slice(root.length + 1).includes('/');
  }
  return glob === ns;
}

export interface AdmissionInput {
  readonly namespace: string;
  readonly class: RecordClass;
  readonly sensitivity: Sensitivity;
  readonly confidence: number;
  readonly flags: readonly string[];
  readonly writerIsAgent: boolean;
}

/** ACTIVE, or CANDIDATE with the reasons a reviewer will see. Pure. */
export function admit(
  policy: AdmissionPolicy,
  p: AdmissionInput,
): { status: 'ACTIVE' | 'CANDIDATE'; reasons: string[] } {
  const reasons: string[] = [];
  if (policy.review.classes.includes(p.class))
    reasons.push(`review:class — ${p.class} records need a reviewer`);
  for (const f of p.flags) {
    if (policy.review.flags.some((prefix) => f.startsWith(prefix)))
      reasons.push(`review:${f} — flagged by screening`);
  }
  const rank = (s: Sensitivity) => Sensitivities.indexOf(s);
  const matching = policy.autoAdmit.filter(
    (r) =>
      r.namespaces.some((g) => namespaceMatches(g, p.namespace)) &&
      r.classes.includes(p.class) &&
      (r.writers === 'any' || (r.writers === 'agents') === p.writerIsAgent),
  );
  // One rule must admit the proposal on every count; the checks apart only choose the reason shown.
  const admitting = matching.some(
    (r) => rank(p.sensitivity) <= rank(r.maxSensitivity) && p.confidence >= r.minConfidence,
  );
  if (matching.length === 0) {
    reasons.push(`review:scope — no auto-admit rule covers ${p.class} in ${p.namespace} for this writer`);
  } else if (!admitting) {
    if (!matching.some((r) => rank(p.sensitivity) <= rank(r.maxSensitivity))) {
      reasons.push(`review:sensitivity — ${p.sensitivity} needs a reviewer`);
    } else if (!matching.some((r) => p.confidence >= r.minConfidence)) {
      reasons.push(`review:confidence — ${p.confidence.toFixed(2)} is below the auto-admit threshold`);
    } else {
      reasons.push(
        `review:policy — no single auto-admit rule allows ${p.sensitivity} at confidence ${p.confidence.toFixed(2)}`,
      );
    }
  }
  return reasons.length ? { status: 'CANDIDATE', reasons } : { status: 'ACTIVE', reasons: [] };
}
