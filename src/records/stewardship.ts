import type { FindingState } from '../domain/fold.ts';
import { z } from 'zod';
import { coversNamespace } from '../domain/access.ts';
import { parseCommand } from '../domain/commands.ts';
import { forbidden } from '../domain/errors.ts';
import { NamespacePath } from '../domain/model.ts';
import type { Policy } from '../domain/policy.ts';
import type { Principal } from '../domain/principal.ts';
import { scorecardOf, type Scorecard } from '../domain/scorecard.ts';
import { stewardshipOf, type StewardRef } from '../domain/stewardship.ts';
import type { FindingType } from '../domain/stewardship-model.ts';
import type { Clock } from '../ports/clock.ts';
import type { RecordReads } from '../ports/graph.ts';
import type { StewardReads } from '../ports/steward.ts';

const NamespaceArg = z.object({ namespace: NamespacePath });
const readNamespace = (namespace: string): string => parseCommand(NamespaceArg, { namespace }).namespace;

/** The most findings one scorecard counts (a namespace with more shows this many). */
const FINDINGS_COUNTED = 10_000;

export interface NamespaceScorecard extends Scorecard {
  readonly namespace: string;
  /** When it was computed. */
  readonly at: string;
  /** Open findings the caller may see, by type. */
  readonly openFindings: ReadonlyArray<{ readonly key: FindingType; readonly count: number }>;
}

/**
 * Stewardship's read side: the scorecard and the findings of a namespace subtree need the review scope on
 * it and count only what the caller may read (its review-purpose scope, like the review queue); who owns
 * and stewards a namespace may be asked by anyone who may read there.
 */
export class StewardshipService {
  constructor(
    private readonly reads: StewardReads,
    private readonly grants: Pick<RecordReads, 'grants'>,
    private readonly policy: Policy,
    private readonly clock: Clock,
  ) {}

  async scorecard(principal: Principal, namespace: string): Promise<NamespaceScorecard> {
    const ns = readNamespace(namespace);
    await this.policy.checkReview(principal, ns);
    const scope = await this.policy.readScope(principal, 'review');
    const now = this.clock.now();
    const [rows, open] = await Promise.all([
      this.reads.scoreRows(scope, ns),
      this.reads.findings(scope, ns, true, FINDINGS_COUNTED),
    ]);
    const byType = new Map<FindingType, number>();
    for (const f of open) byType.set(f.type, (byType.get(f.type) ?? 0) + 1);
    return {
      namespace: ns,
      at: now.toISOString(),
      ...scorecardOf(rows, now),
      openFindings: [...byType]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, count]) => ({ key, count })),
    };
  }

  async findings(
    principal: Principal,
    namespace: string,
    status: 'OPEN' | 'RESOLVED' | 'ALL',
    first: number,
  ): Promise<FindingState[]> {
    const ns = readNamespace(namespace);
    await this.policy.checkReview(principal, ns);
    const scope = await this.policy.readScope(principal, 'review');
    const open = status === 'ALL' ? null : status === 'OPEN';
    return this.reads.findings(scope, ns, open, first);
  }

  async stewardship(
    principal: Principal,
    namespace: string,
  ): Promise<{ namespace: string; owners: StewardRef[]; stewards: StewardRef[] }> {
    const ns = readNamespace(namespace);
    const scope = await this.policy.readScope(principal, undefined);
    if (!coversNamespace(scope.grants, ns)) throw forbidden('no grant covers this namespace');
    return { namespace: ns, ...stewardshipOf(await this.grants.grants(principal.tenant), ns) };
  }
}
