import type { ProjectionWrite, StateKeys } from '../ports/graph.ts';

/**
 * The keys a replay into an emptied graph has written so far (rebuild.ts). Only those can exist in the
 * graph, so the others need no load: most of a rebuild's events create their record and receipt, and
 * looking each one up first was a fifth of the rebuild's transaction time. Past `max` keys it stops
 * remembering and lets every key through, so a ledger of any size costs bounded memory and only loses
 * the saving, never correctness (a key let through is loaded as before).
 */
export class WrittenKeys {
  private readonly seen = new Set<string>();
  private full = false;

  constructor(private readonly max = 2_000_000) {}

  /** The keys that may exist: those written before (all of them once the set is full). */
  mayExist(keys: StateKeys): StateKeys {
    if (this.full) return keys;
    const keep = <T extends { tenant: string }>(
      kind: string,
      xs: readonly T[] | undefined,
      id: (x: T) => string,
    ) => (xs ?? []).filter((x) => this.seen.has(key(kind, x.tenant, id(x))));
    const byId = (x: { id: string }) => x.id;
    return {
      records: keep('r', keys.records, byId),
      entities: keep('e', keys.entities, byId),
      receipts: keep('c', keys.receipts, (x) => x.idempotencyKey),
      episodes: keep('p', keys.episodes, byId),
      grants: keep('g', keys.grants, byId),
      holds: keep('h', keys.holds, byId),
      findings: keep('f', keys.findings, byId),
    };
  }

  /** Remembers what a write puts in the graph (before its commit: a key remembered in vain is only loaded). */
  note(w: ProjectionWrite): void {
    if (this.full) return;
    const add = (kind: string, tenant: string, id: string) => this.seen.add(key(kind, tenant, id));
    for (const x of w.records) add('r', x.tenant, x.id);
    for (const x of w.entities) add('e', x.tenant, x.id);
    for (const x of w.receipts) add('c', x.tenant, x.idempotencyKey);
    for (const x of w.episodes) add('p', x.tenant, x.id);
    for (const x of w.grants) add('g', x.tenant, x.id);
    for (const x of w.holds ?? []) add('h', x.tenant, x.id);
    for (const x of w.findings ?? []) add('f', x.tenant, x.id);
    if (this.seen.size > this.max) {
      this.full = true;
      this.seen.clear();
    }
  }
}

const key = (kind: string, tenant: string, id: string): string => `${kind}\u0000${tenant}\u0000${id}`;
