import type { IResolvers } from '@graphql-tools/utils';
import type { Principal } from '../domain/principal.ts';
import type { Proposal } from '../ports/graph.ts';
import type { ApiContext } from './context.ts';
import type { RecordParent } from './record-resolvers.ts';
import { pageSize, type Args } from './resolver-args.ts';
import type { ApiServices } from './services.ts';

interface ProposalParent {
  readonly id: string;
  readonly record: RecordParent;
}

/** The review queue: a page of it, and a subscription that delivers each proposal version once. */
export function buildReviewResolvers(s: ApiServices): IResolvers<unknown, ApiContext> {
  return {
    Query: {
      reviewQueue: async (_: unknown, a: Args, ctx: ApiContext) => {
        const first = pageSize(a['first']);
        const page = await s.records.reviewQueue(
          ctx.principal,
          String(a['namespace']),
          first,
          (a['after'] as string | null | undefined) ?? null,
        );
        return {
          nodes: page.items.map((p) => proposal(p, ctx.principal)),
          pageInfo: { endCursor: page.endCursor, hasNextPage: page.hasNextPage },
        };
      },
    },
    Subscription: {
      reviewQueue: {
        subscribe: (_: unknown, a: Args, ctx: ApiContext) =>
          reviewFeed(s, ctx.principal, String(a['namespace'])),
      },
    },
    Proposal: {
      record: (p: ProposalParent) => p.record,
    },
  };
}

function proposal(p: Proposal, principal: Principal) {
  return {
    id: p.record.id,
    record: { ...p.record, principal },
    version: p.record.version,
    reasons: p.reviewReasons,
    flags: p.flags,
    proposedBy: p.record.proposedBy,
    createdAt: p.record.createdAt,
  };
}

/** Polls the queue (works whether the projector runs here or elsewhere); emits each proposal version once. */
function reviewFeed(
  s: ApiServices,
  principal: Principal,
  namespace: string,
): AsyncIterableIterator<{ reviewQueue: ReturnType<typeof proposal> }> {
  const seen = new Set<string>();
  const buffer: Array<ReturnType<typeof proposal>> = [];
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const fill = async () => {
    let after: string | null = null;
    for (;;) {
      const page = await s.records.reviewQueue(principal, namespace, 200, after);
      for (const p of page.items) {
        const key = `${p.record.id}@${p.record.version}`;
        if (!seen.has(key)) {
          seen.add(key);
          buffer.push(proposal(p, principal));
        }
      }
      if (!page.hasNextPage) return;
      after = page.endCursor;
    }
  };
  const it: AsyncIterableIterator<{ reviewQueue: ReturnType<typeof proposal> }> = {
    [Symbol.asyncIterator]: () => it,
    next: async () => {
      while (!done && buffer.length === 0) {
        await fill();
        if (buffer.length === 0) await new Promise<void>((r) => (timer = setTimeout(r, 500)));
      }
      if (done) return { done: true, value: undefined };
      return { done: false, value: { reviewQueue: buffer.shift()! } };
    },
    return: async () => {
      done = true;
      if (timer) clearTimeout(timer);
      return { done: true, value: undefined };
    },
  };
  return it;
}
