import type { ErasureTarget } from '../domain/events.ts';

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

/** The graph reads erasure needs (tenant-wide, every status: only an admin erases). */
export interface ErasureLookups {
  /** The items the selector names; empty when it names nothing known. */
  plan(tenant: string, selector: ErasureSelector): Promise<ErasureItem[]>;
  /** Ids among `items` whose personal data the graph still holds (empty = all removed). */
  remaining(tenant: string, items: readonly ErasureItem[]): Promise<string[]>;
}
