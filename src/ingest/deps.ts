import type { AdmissionPolicy } from '../domain/admission.ts';
import type { Policy } from '../domain/policy.ts';
import type { Clock, IdSource } from '../ports/clock.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Extractor } from '../ports/extractor.ts';
import type { IngestLookups } from '../ports/ingest-lookups.ts';
import type { Ledger, ProjectionAwait } from '../ports/ledger.ts';
import type { Logger } from '../ports/logger.ts';
import type { Telemetry } from '../ports/telemetry.ts';
import type { WriteBudget } from './budget.ts';
import type { OverloadGuard } from './overload.ts';
import type { SubjectGate } from './subject-gate.ts';
import type { ApproverRules } from '../domain/review.ts';

/** Every port and setting the write side uses; each command takes only its part (see CommandDeps). */
export interface WriteDeps {
  readonly ledger: Ledger;
  readonly store: IngestLookups;
  readonly policy: Policy;
  readonly admission: AdmissionPolicy;
  readonly budget: WriteBudget;
  readonly embedder: Embedder;
  /** Key of the recall handles' MAC (the recall service signs with the same key). */
  readonly handleKey: string;
  /** Separation of duties: per class, approvers other than the proposer (config MUNINN_REVIEW_APPROVERS). */
  readonly approvers: ApproverRules;
  /** HMAC key of secret fingerprints (MUNINN_FINGERPRINT_KEY): the same secret gets the same ref. */
  readonly fingerprintKey: string;
  readonly extractor: Extractor;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly projection: ProjectionAwait;
  readonly logger: Logger;
  readonly maxTextChars: number;
  readonly awaitTimeoutMs: number;
  /** Backpressure: refuses a write at once when this process is overloaded (overload.ts). */
  readonly overload: OverloadGuard;
  /** One decision at a time per subject, each on a graph that holds the one before (subject-gate.ts). */
  readonly subjects: SubjectGate;
  /** Where each write's stage times go (muninn_write_stage_duration_seconds). */
  readonly telemetry: Pick<Telemetry, 'write'>;
}

/** What every command uses: screening, the policy check, its receipts, and the commit (append + await). */
export type CommandDeps = Pick<
  WriteDeps,
  | 'ledger'
  | 'store'
  | 'projection'
  | 'clock'
  | 'logger'
  | 'awaitTimeoutMs'
  | 'ids'
  | 'fingerprintKey'
  | 'policy'
>;
