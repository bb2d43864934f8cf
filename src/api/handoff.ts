import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { unauthenticated } from '../domain/errors.ts';
import type { Principal } from '../domain/principal.ts';
import type { HandoffService } from '../handoff/contract.ts';
import { requireHandoffCaller } from '../handoff/contract.ts';
import type { TokenVerifier } from '../ports/token-verifier.ts';
import type { ApiContext } from './context.ts';
import { dropNulls } from './resolver-args.ts';
import { DateTime, JSONScalar } from './scalars.ts';

const SCHEMA_PATH = fileURLToPath(new URL('../../handoff.graphql', import.meta.url));

type Args = Record<string, unknown>;

/** The handoff contract's GraphQL schema: every field checks the handoff caller, then calls the service. */
export function buildHandoffSchema(service: HandoffService): GraphQLSchema {
  const caller = (ctx: ApiContext) => requireHandoffCaller(ctx.principal);
  return makeExecutableSchema({
    typeDefs: readFileSync(SCHEMA_PATH, 'utf8'),
    resolvers: {
      DateTime,
      JSON: JSONScalar,
      Query: {
        health: async (_: unknown, _a: Args, ctx: ApiContext) => {
          caller(ctx);
          const h = await service.health();
          return {
            ...h,
            chain: {
              verified: h.chain.verified,
              trustedHead: h.chain.trustedHead,
              breakSeq: h.chain.break?.seq ?? null,
              breakReason: h.chain.break?.reason ?? null,
            },
            manifestFiles: h.records.manifestFiles,
            objectFiles: h.records.objectFiles,
            namedObjects: h.records.namedObjects,
          };
        },
        manifests: async (_: unknown, a: Args, ctx: ApiContext) => {
          caller(ctx);
          const p = await service.manifests(dropNulls(a) as { after?: number; first?: number });
          return { ...p, breakSeq: p.chainBreak?.seq ?? null, breakReason: p.chainBreak?.reason ?? null };
        },
        window: async (_: unknown, a: Args, ctx: ApiContext) => {
          caller(ctx);
          return service.window(String(a['objectId']));
        },
        checkpoint: async (_: unknown, _a: Args, ctx: ApiContext) => {
          caller(ctx);
          return { ...(await service.checkpoint()), repeated: false };
        },
      },
      Mutation: {
        // The service validates each input (strict: no unknown keys, bounded sizes).
        acquireLease: async (_: unknown, a: Args, ctx: ApiContext) => {
          caller(ctx);
          return service.acquireLease(dropNulls(a) as Parameters<HandoffService['acquireLease']>[0]);
        },
        renewLease: async (_: unknown, a: Args, ctx: ApiContext) => {
          caller(ctx);
          return service.renewLease(dropNulls(a) as Parameters<HandoffService['renewLease']>[0]);
        },
        commitCheckpoint: async (_: unknown, a: Args, ctx: ApiContext) => {
          caller(ctx);
          return service.commit(dropNulls(a) as Parameters<HandoffService['commit']>[0]);
        },
      },
    },
  });
}

/**
 * Verifies a handoff credential: the handoff audience and scope (the wrapped verifier), a `jti`, a short
 * lifetime, and first use of that `jti` (a replayed token is UNAUTHENTICATED, even while unexpired).
 */
export function handoffVerifier(
  inner: TokenVerifier,
  replay: { firstUse(jti: string, expiresAt: number): Promise<boolean> },
  maxTtlS: number,
  nowS: () => number = () => Math.floor(Date.now() / 1000),
): TokenVerifier {
  return {
    async verify(token: string): Promise<Principal> {
      const p = await inner.verify(token);
      if (!p.tokenId) throw unauthenticated('a handoff token needs a jti');
      if (p.expiresAt === undefined || p.expiresAt - nowS() > maxTtlS)
        throw unauthenticated(`a handoff token may live at most ${maxTtlS} s`);
      if (!(await replay.firstUse(p.tokenId, p.expiresAt))) throw unauthenticated('token already used');
      return p;
    },
  };
}
