import { readableWherever } from '../domain/access.ts';
import { admit, type AdmissionPolicy } from '../domain/admission.ts';
import {
  decidePropose,
  envelope,
  privateEntityIdFor,
  receiptKey,
  type DecideContext,
  type EntityRef,
  type ProposeCommand,
} from '../domain/commands.ts';
import type { LedgerEvent } from '../domain/events.ts';
import {
  Statement,
  type RecordClass,
  type Sensitivity,
  type SourceSpan,
  type TimeSource,
} from '../domain/model.ts';
import { thresholdsFor, type CosineThresholds } from '../domain/similarity.ts';
import { dot } from '../ports/embedder.ts';
import type { EntityFacts, RelatedCandidate } from '../ports/ingest-lookups.ts';
import { scoreConfidence, sourceTrust } from './assess.ts';
import { embeddingCache, refName, resolveAbout, type Resolution } from './plan-entities.ts';
import { classify, type RelateCandidate } from './relate.ts';
import { subjectKeyOf } from '../domain/subject-key.ts';

/**
 * The write path's decide step: given a request's drafts and the facts gathered for them (embeddings,
 * relate candidates, entity facts), the ledger events it appends. Pure and synchronous — no port, no
 * clock but the context's — so every decision (duplicate, supersede, contest, merge an entity, open a
 * SAME_AS for review, admit or queue) is tested Given/When/Then without a database
 * (test/unit/plan.test.ts). Drafts are decided in order: a later draft sees the records and entities
 * an earlier one of the same request creates.
 */

/** One statement on its way in, from a proposal or extracted from an episode. */
export interface Draft {
  readonly index: number;
  readonly class: RecordClass;
  readonly statement: Statement;
  readonly about: readonly EntityRef[];
  readonly sources: readonly SourceSpan[];
  readonly validFrom: string;
  readonly validTo: string | null;
  readonly timeSource: TimeSource;
  readonly sensitivity: Sensitivity;
  readonly flags: readonly string[];
  readonly extractionConfidence: number;
  readonly rationale: string | null;
  readonly ext: Readonly<Record<string, unknown>>;
  readonly source: string | null;
}

/** The command fields every draft of a request shares. */
export interface PlanCommand {
  readonly namespace: string;
  readonly purpose: string;
  readonly idempotencyKey: string;
  readonly changesetId?: string | undefined;
  readonly review?: boolean | undefined;
  /** propose's `derivedFrom` (already checked visible). */
  readonly derivedFrom?: readonly string[] | undefined;
}

export interface PlanInput {
  readonly ctx: DecideContext;
  readonly cmd: PlanCommand;
  readonly hash: string;
  readonly drafts: readonly Draft[];
  readonly episodeId: string | null;
  /** Per-statement receipt keys: `<key><suffixPrefix><index>` (empty: the command's own key). */
  readonly suffixPrefix: string;
  readonly admission: AdmissionPolicy;
  readonly modelId: string;
}

/** What the gather step found, aligned with `PlanInput.drafts`. */
export interface PlanFacts {
  readonly vectors: ReadonlyArray<Float32Array | undefined>;
  readonly nameVectors: ReadonlyMap<string, Float32Array | undefined>;
  /** Stored relate candidates per draft (empty for observations, which never relate). */
  readonly related: ReadonlyArray<readonly RelatedCandidate[]>;
  /** Entity facts by `refKey`. */
  readonly entities: ReadonlyMap<string, EntityFacts>;
}

export const OBSERVATION: RecordClass = 'OBSERVATION';
/** How many stored candidates relate compares a statement with. */
export const RELATE_K = 8;

/** An observation is embedded as "speaker: text": questions name who said it. */
export const embedText = (dr: Draft): string =>
  dr.class === OBSERVATION ? `${dr.statement.subject}: ${dr.statement.text}` : dr.statement.text;

/** The quality gate and the statement's shape: which drafts go on, and why the others were refused. */
export function gate(
  drafts: readonly Draft[],
  gates: { maxTextChars: number; minTextChars: number },
): { kept: Draft[]; refused: string[] } {
  const refused: string[] = [];
  const kept = drafts.filter((dr) => {
    const n = dr.statement.text.length;
    if (n > gates.maxTextChars || n < gates.minTextChars) {
      const why =
        n > gates.maxTextChars ? `longer than ${gates.maxTextChars}` : `shorter than ${gates.minTextChars}`;
      refused.push(`statement ${dr.index}: ${why} characters (quality gate)`);
      return false;
    }
    // The statement must be what the ledger accepts (non-empty parts within their limits).
    const shape = Statement.safeParse(dr.statement);
    if (!shape.success) {
      const problems = shape.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      refused.push(`statement ${dr.index}: malformed (${problems})`);
      return false;
    }
    return true;
  });
  return { kept, refused };
}

/** A record this request already proposed, as a relate candidate for the drafts after it. */
type Fresh = RelateCandidate & {
  vector: Float32Array | undefined;
  subjectKey: string;
  sensitivity: Sensitivity;
};

/** The events of a request's drafts (decided in order). */
export function plan(input: PlanInput, facts: PlanFacts): LedgerEvent[] {
  const events: LedgerEvent[] = [];
  const fresh: Fresh[] = [];
  const resolved = new Map<string, Resolution>();
  // Cosines are compared on the scale of the model that embedded this request's drafts.
  const th = thresholdsFor(input.modelId);
  for (const [i, dr] of input.drafts.entries()) {
    const vector = facts.vectors[i];
    const suffix = input.suffixPrefix ? `${input.suffixPrefix}${dr.index}` : '';
    const trust = sourceTrust(input.ctx.principal, dr.source, dr.ext['muninn:verified'] === true);
    const confidence = scoreConfidence(trust, dr.extractionConfidence, 0);
    const decision =
      dr.class === OBSERVATION
        ? ({ kind: 'INDEPENDENT' } as const)
        : relateTo(input.cmd.namespace, dr, vector, facts.related[i] ?? [], fresh, th);
    if (decision.kind === 'DUPLICATE') {
      events.push({
        ...envelope(input.ctx, input.cmd, input.cmd.namespace, input.hash, suffix),
        type: 'RecordReinforced',
        schemaVersion: 1,
        payload: {
          recordId: decision.target,
          sources: [...dr.sources],
          confidence: Math.min(0.99, confidence + 0.05),
          reason: decision.reason,
        },
      });
      continue;
    }
    const produced = propose(input, dr, { vector, confidence, decision, suffix, th }, facts, resolved);
    events.push(...produced);
    const proposed = produced[produced.length - 1];
    if (proposed?.type === 'RecordProposed' && dr.class !== OBSERVATION) {
      fresh.push({
        id: proposed.payload.recordId,
        ...dr.statement,
        status: proposed.payload.status,
        cosine: null,
        vector,
        subjectKey: subjectKeyOf(dr.statement.subject),
        sensitivity: dr.sensitivity,
      });
    }
  }
  return events;
}

/**
 * Relate a draft to the writer's visible records and to what this request already proposed. A duplicate
 * may reinforce only a record whose readers may all read this statement (its sources are attached to it).
 */
function relateTo(
  namespace: string,
  dr: Draft,
  vector: Float32Array | undefined,
  stored: readonly RelatedCandidate[],
  fresh: readonly Fresh[],
  th: CosineThresholds,
): ReturnType<typeof classify> {
  const subjectKey = subjectKeyOf(dr.statement.subject);
  const local = fresh
    .filter((f) => f.subjectKey === subjectKey || (vector && f.vector))
    .map((f) => ({ ...f, cosine: vector && f.vector ? dot(vector, f.vector) : null }));
  const mine = { namespace, sensitivity: dr.sensitivity };
  const candidates = [
    ...stored.filter((c) => c.class !== OBSERVATION),
    ...local.map((f) => ({ ...f, namespace })),
  ].map((c) => ({ ...c, reinforceable: readableWherever(mine, c) }));
  return classify(dr.statement, candidates, th);
}

/** Resolve the draft's entities, label and admit it, and produce its EntityCreated + RecordProposed events. */
function propose(
  input: PlanInput,
  dr: Draft,
  d: {
    vector: Float32Array | undefined;
    confidence: number;
    decision: Exclude<ReturnType<typeof classify>, { kind: 'DUPLICATE' }>;
    suffix: string;
    th: CosineThresholds;
  },
  facts: PlanFacts,
  resolvedSoFar: Map<string, Resolution>,
): LedgerEvent[] {
  const { ctx, cmd } = input;
  const req = { ctx, modelId: input.modelId, ownId: (ref: EntityRef) => ownEntityId(input, ref) };
  const { resolved, sameAs, entityEmbeddings } = resolveAbout(req, dr.about, facts, resolvedSoFar, d.th);
  const status = admission(input, dr, d.confidence);
  return decidePropose(ctx, proposeCommand(cmd, dr), resolved, {
    status: status.status,
    confidence: d.confidence,
    relation:
      d.decision.kind === 'INDEPENDENT'
        ? null
        : {
            kind: d.decision.kind,
            target: d.decision.target,
            confidence: d.decision.confidence,
            reason: d.decision.reason,
          },
    reviewReasons: status.reasons,
    flags: dr.flags,
    embedding: embeddingCache(input.modelId, d.vector),
    entityEmbeddings,
    episodeId: input.episodeId,
    timeSource: dr.timeSource,
    sameAs,
    keySuffix: d.suffix,
    // All events of one request carry its hash (not the per-statement command's): its receipts and ids.
    commandHash: input.hash,
  });
}

/** The admission policy's status for the draft, or CANDIDATE when the writer asked for review. */
function admission(input: PlanInput, dr: Draft, confidence: number): ReturnType<typeof admit> {
  const admitted = admit(input.admission, {
    namespace: input.cmd.namespace,
    class: dr.class,
    sensitivity: dr.sensitivity,
    confidence,
    flags: dr.flags,
    writerIsAgent: input.ctx.principal.actors.length > 0,
  });
  // A writer may ask for every statement to wait for a reviewer (the curator's drafts do).
  return input.cmd.review
    ? {
        status: 'CANDIDATE' as const,
        reasons: [...admitted.reasons, 'review:requested — the writer asked for review (draft)'],
      }
    : admitted;
}

/** The writer's own entity for `ref` in this request, when resolveEntity needs one. */
const ownEntityId = (input: PlanInput, ref: EntityRef): string =>
  privateEntityIdFor(
    input.ctx.principal.tenant,
    `${receiptKey(input.ctx.principal, input.cmd.idempotencyKey)}|${input.hash}`,
    ref.type,
    refName(ref),
  );

function proposeCommand(cmd: PlanCommand, dr: Draft): ProposeCommand {
  return {
    namespace: cmd.namespace,
    class: dr.class,
    statement: dr.statement,
    about: [...dr.about],
    sources: [...dr.sources],
    validFrom: dr.validFrom,
    ...(dr.validTo ? { validTo: dr.validTo } : {}),
    sensitivity: dr.sensitivity,
    ...(dr.rationale ? { rationale: dr.rationale } : {}),
    purpose: cmd.purpose,
    idempotencyKey: cmd.idempotencyKey,
    ...(cmd.changesetId ? { changesetId: cmd.changesetId } : {}),
    ...(cmd.derivedFrom?.length ? { derivedFrom: [...cmd.derivedFrom] } : {}),
    ext: { ...dr.ext },
  };
}
