import type { FindingState } from '../domain/fold.ts';
import type { IResolvers } from '@graphql-tools/utils';
import { forbidden } from '../domain/errors.ts';
import type { ApiContext } from './context.ts';
import { pageSize, type Args } from './resolver-args.ts';
import type { ApiServices } from './services.ts';

/** Stewardship (schema.graphql, "Stewardship"): scorecard, findings, owners and stewards. Thin. */
export function buildStewardResolvers(s: ApiServices): IResolvers<unknown, ApiContext> {
  const service = () => {
    if (!s.stewardship) throw forbidden('stewardship is not served here');
    return s.stewardship;
  };
  return {
    Query: {
      scorecard: (_: unknown, a: Args, ctx: ApiContext) =>
        service().scorecard(ctx.principal, String(a['namespace'])),
      findings: (_: unknown, a: Args, ctx: ApiContext) =>
        service().findings(
          ctx.principal,
          String(a['namespace']),
          (a['status'] as 'OPEN' | 'RESOLVED' | 'ALL' | undefined) ?? 'OPEN',
          pageSize(a['first']),
        ),
      namespaceStewardship: (_: unknown, a: Args, ctx: ApiContext) =>
        service().stewardship(ctx.principal, String(a['namespace'])),
    },
    Finding: {
      status: (f: FindingState) => (f.resolvedAt === null ? 'OPEN' : 'RESOLVED'),
    },
  };
}
