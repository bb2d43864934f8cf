import type { IResolvers } from '@graphql-tools/utils';
import type { Principal } from '../domain/principal.ts';
import { forbidden } from '../domain/errors.ts';
import { hasScope } from '../domain/principal.ts';
import { projectionViewFor } from '../records/projection-status.ts';
import type { ApiContext } from './context.ts';
import type { Args } from './resolver-args.ts';
import type { ApiServices } from './services.ts';

/** projectionLag ticks no faster than this, whatever `intervalMs` asks for. */
export const MIN_LAG_INTERVAL_MS = 1000;

/** The projection's status: read once, or ticked to a subscriber (the admin scope sees more of it). */
export function buildProjectionResolvers(s: ApiServices): IResolvers<unknown, ApiContext> {
  // Every projectionLag subscriber of this process shares one status read per interval: Kafka and Neo4j
  // see at most one poll a second however many sockets subscribe.
  const lagStatus = shared(s.projection, MIN_LAG_INTERVAL_MS);
  return {
    Query: {
      projection: async (_: unknown, _a: Args, ctx: ApiContext) => {
        requireRead(ctx.principal);
        return projectionViewFor(await s.projection(), hasScope(ctx.principal, 'admin'));
      },
    },
    Subscription: {
      projectionLag: {
        subscribe: (_: unknown, a: Args, ctx: ApiContext) => {
          requireRead(ctx.principal);
          const interval = Math.max(MIN_LAG_INTERVAL_MS, Number(a['intervalMs'] ?? 1000) || 0);
          const admin = hasScope(ctx.principal, 'admin');
          return ticker(interval, async () => ({
            projectionLag: projectionViewFor(await lagStatus(), admin),
          }));
        },
      },
    },
  };
}

function requireRead(p: Principal): void {
  if (!hasScope(p, 'read')) throw forbidden('the read scope is required');
}

/** An async iterator that yields `next()` every `ms` until the subscriber leaves. */
function ticker<T>(ms: number, next: () => Promise<T>): AsyncIterableIterator<T> {
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const it: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => it,
    next: async () => {
      if (done) return { done: true, value: undefined };
      const first = timer === undefined;
      if (!first) await new Promise<void>((r) => (timer = setTimeout(r, ms)));
      timer = timer ?? setTimeout(() => undefined, 0);
      if (done) return { done: true, value: undefined };
      return { done: false, value: await next() };
    },
    return: async () => {
      done = true;
      if (timer) clearTimeout(timer);
      return { done: true, value: undefined };
    },
  };
  return it;
}

/** `read` coalesced: callers within `maxAgeMs` of the last read (or during one) share its result. */
function shared<T>(read: () => Promise<T>, maxAgeMs: number): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (last && Date.now() - last.at < maxAgeMs) return last.value;
    const value = read();
    last = { at: Date.now(), value };
    // A failed read is not shared beyond the callers already waiting on it.
    value.catch(() => {
      if (last?.value === value) last = undefined;
    });
    return value;
  };
}
