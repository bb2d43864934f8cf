import type { Executor } from './executor.ts';
import { HeldRows, rowCount, stampValue, type Stamp } from './ranked-memo.ts';
import { namespaceKey } from './scope.ts';
import { StampSettling } from './stamp-settling.ts';

/** A record about an anchor: its id, namespace, hops (0: about the anchor, 1: about a SAME_AS entity), confidence. */
export type AnchorRow = readonly [id: string, namespace: string, hops: number, confidence: number];

/** Whether row a ranks before row b: fewer hops, then higher confidence, then the smaller id. */
const before = (a: AnchorRow, b: AnchorRow): boolean =>
  a[2] !== b[2] ? a[2] < b[2] : a[3] !== b[3] ? a[3] > b[3] : a[0] < b[0];

/*
 * The graph arm's orders, one per anchor entity across its tenant, held in process: the records about the
 * anchor or an entity it is the SAME_AS of, by hops, then confidence, then id — whoever may see them, and
 * in every namespace, so one order serves every request that names the anchor (its namespaces are picked
 * in process, and the one entitlement filter runs on what is picked: ranked-memo.ts, firstVisible).
 *
 * Why: about 3k of 100k records are about a hub entity in bench:recall's tenant; reading the namespace,
 * id and confidence of each and sorting them cost ~5–7 ms of Neo4j per recall.
 *
 * Freshness: an order is held with every stamp of its tenant (scope-vectors.ts; the SAME_AS stamp too,
 * scope.ts), read before it in the same statement, so it has every record committed up to them. A request
 * uses it only if every stamp it read for itself is the one held, and loads it again otherwise (one
 * statement for all its anchors that need it). Records of namespaces outside the request are skipped, so
 * a stamp outside it does not matter to it. Orders read while one of those stamps had not settled
 * (stamp-settling.ts: its transaction may not be applied whole yet) are used but not held.
 */
export class AnchorOrders {
  static readonly DEFAULT_HELD = 200_000;
  private readonly held: HeldRows<{ rows: readonly AnchorRow[]; stamps: ReadonlyMap<string, string> }>;

  constructor(
    private readonly db: Executor,
    /** When a stamp read is trusted whole (shared with the record vectors: scope-vectors.ts). */
    private readonly settling = new StampSettling(),
    maxHeld = AnchorOrders.DEFAULT_HELD,
  ) {
    this.held = new HeldRows(maxHeld, rowCount);
  }

  /** Each anchor's order, current for the namespaces of `stamps` (the request's, as read for it). */
  async of(
    tenant: string,
    anchors: readonly string[],
    stamps: readonly Stamp[],
  ): Promise<Array<readonly AnchorRow[]>> {
    const current = (a: string) => {
      const h = this.held.get(anchorKey(tenant, a));
      return h !== undefined && stamps.every((s) => h.stamps.get(s.key) === stampValue(s));
    };
    const stale = [...new Set(anchors.filter((a) => !current(a)))];
    // What was just loaded is used as loaded, held or not (an order past the budget is not held).
    const loaded = stale.length > 0 ? await this.load(tenant, stale) : new Map<string, AnchorRow[]>();
    return anchors.map((a) => loaded.get(a) ?? this.held.get(anchorKey(tenant, a))?.rows ?? []);
  }

  private async load(tenant: string, anchors: readonly string[]): Promise<Map<string, AnchorRow[]>> {
    // Every stamp of the tenant first (one transaction): the orders hold at least what was committed up to
    // them, so a request in any namespace of the tenant can use them until one of its stamps moves.
    const startedAt = this.settling.now();
    const res = await this.db.read(
      'recall.graphOrder',
      `CALL () {
         MATCH (st:ScopeStamp) WHERE st.tenant = $tenant AND st.namespace IS NOT NULL // the key's index
         RETURN collect([st.namespace, st.epoch, st.seq]) AS stamps
       }
       UNWIND $anchors AS aid
       OPTIONAL MATCH (a:Entity {tenant: $tenant, id: aid})
       CALL (a) {
         MATCH (a)-[:SAME_AS*0..1]-(e:Entity)<-[:ABOUT]-(n:Record)
         WITH n, min(CASE WHEN e = a THEN 0 ELSE 1 END) AS hops
         WITH n.id AS id, n.namespace AS ns, hops, n.confidence AS confidence ORDER BY hops, confidence DESC, id
         RETURN collect([id, ns, hops, confidence]) AS ranked
       }
       RETURN stamps, aid, ranked`,
      { tenant, anchors: [...anchors] },
    );
    const read = ((res.records[0]?.get('stamps') ?? []) as Array<[string, string, number]>).map(
      ([ns, epoch, seq]) => ({ key: namespaceKey(tenant, ns), epoch, seq: Number(seq) }),
    );
    const loaded = new Map(res.records.map((r) => [String(r.get('aid')), r.get('ranked') as AnchorRow[]]));
    this.settling.seen(read);
    // Held only when every stamp read with them had settled before the statement started.
    if (!read.every((s) => this.settling.settled(s, startedAt))) return loaded;
    const stamps = new Map(read.map((s) => [s.key, stampValue(s)]));
    for (const a of anchors) this.held.set(anchorKey(tenant, a), { rows: loaded.get(a) ?? [], stamps });
    return loaded;
  }
}

const anchorKey = (tenant: string, anchor: string) => `${tenant}\u0000${anchor}`;

/**
 * The anchors' orders merged into the request's ranking, lazily: `top(n)` gives the first n [id, anchor]
 * pairs whose namespace `inRequest` keeps. A record about several anchors comes once, at its best place,
 * naming the first anchor (in the caller's order) that reaches it there.
 */
export function mergedRanking(
  lists: ReadonlyArray<readonly AnchorRow[]>,
  anchors: readonly string[],
  inRequest: (namespace: string) => boolean,
): { top: (n: number) => Array<[string, string]>; readonly bound: number } {
  const at = lists.map(() => 0);
  const out: Array<[string, string]> = [];
  const seen = new Set<string>();
  const next = (): boolean => {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      const row = lists[i]![at[i]!];
      if (row && (best < 0 || before(row, lists[best]![at[best]!]!))) best = i;
    }
    if (best < 0) return false;
    const row = lists[best]![at[best]!++]!;
    if (!seen.has(row[0]) && inRequest(row[1])) out.push([row[0], anchors[best]!]);
    seen.add(row[0]);
    return true;
  };
  return {
    bound: lists.reduce((n, l) => n + l.length, 0),
    top: (n) => {
      while (out.length < n && next());
      return out.slice(0, n);
    },
  };
}
