import type { ErasureTarget } from '../domain/events.ts';
import type { HoldState } from '../domain/fold.ts';
import type { RetentionCandidate } from '../domain/retention.ts';

/** What an erase request names: a data subject (an entity), one record, or a namespace subtree. */
export type ErasureSelector =
  | {
      readonly kind: 'SUBJECT';
      readonly subject: { readonly id?: string; readonly alias?: string; readonly externalId?: string };
    }
  | { readonly kind: 'RECORD'; readonly recordId: string }
  | { readonly kind: 'NAMESPACE'; readonly namespace: string };

/** One item an erasure removes: its tombstone goes to `namespace` (an entity's: a record's about it). */
export interface ErasureItem {
  readonly target: ErasureTarget;
  readonly id: string;
  readonly namespace: string;
}

/** A legal hold as erasure sees it. */
export type HoldView = Omit<HoldState, 'tenant' | 'releasedBy' | 'releaseReason'>;

/** The graph reads erasure needs (tenant-wide, every status: only an admin erases). */
export interface ErasureLookups {
  /** The items the selector names; empty when it names nothing known. */
  plan(tenant: string, selector: ErasureSelector): Promise<ErasureItem[]>;
  /** Ids among `items` whose personal data the graph still holds (empty = all removed). */
  remaining(tenant: string, items: readonly ErasureItem[]): Promise<string[]>;
  /** The tenant's legal holds, standing ones only unless `all`. */
  holds(tenant: string, all: boolean): Promise<HoldView[]>;
}

/** The graph read retention needs: the records of a namespace subtree recorded at or before `cutoff`. */
export interface RetentionLookups {
  candidates(
    tenant: string,
    namespace: string,
    cutoff: string,
  ): Promise<Array<RetentionCandidate & { readonly version: number }>>;
}
