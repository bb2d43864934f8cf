import type { IResolvers } from '@graphql-tools/utils';
import { forbidden } from '../domain/errors.ts';
import type { ApiContext } from './context.ts';
import { dropNulls, type Args } from './resolver-args.ts';
import type { ApiServices } from './services.ts';

/** Erasure and legal holds, where this process serves them. */
export function buildLifecycleResolvers(s: ApiServices): IResolvers<unknown, ApiContext> {
  return {
    Query: {
      holds: (_: unknown, _a: Args, ctx: ApiContext) => {
        if (!s.holds) throw forbidden('legal holds are not served here');
        return s.holds.list(ctx.principal);
      },
    },
    Mutation: {
      erase: (_: unknown, a: Args, ctx: ApiContext) => {
        if (!s.erasure) throw forbidden('erasure is not served here');
        return s.erasure.erase(ctx.principal, dropNulls(a['input']));
      },
      placeHold: (_: unknown, a: Args, ctx: ApiContext) => {
        if (!s.holds) throw forbidden('legal holds are not served here');
        return s.holds.place(ctx.principal, dropNulls(a['input']));
      },
      releaseHold: (_: unknown, a: Args, ctx: ApiContext) => {
        if (!s.holds) throw forbidden('legal holds are not served here');
        return s.holds.release(ctx.principal, dropNulls(a['input']));
      },
    },
  };
}
