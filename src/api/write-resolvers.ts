import type { IResolvers } from '@graphql-tools/utils';
import type { WriteReceipt } from '../ingest/write-service.ts';
import type { ApiContext } from './context.ts';
import { dropNulls, obj, type Args } from './resolver-args.ts';
import type { ApiServices } from './services.ts';

type WriteCommand =
  | 'propose'
  | 'revise'
  | 'relate'
  | 'ingestEpisode'
  | 'approve'
  | 'reject'
  | 'retract'
  | 'feedback'
  | 'dismissFinding'
  | 'rollback';

/** The write service's commands, one mutation each; grants answer with the grant's id. */
export function buildWriteResolvers(s: ApiServices): IResolvers<unknown, ApiContext> {
  const write = (command: WriteCommand) => (_: unknown, a: Args, ctx: ApiContext) => {
    const { input, wait } = commandInput(a['input']);
    return s.writes[command](ctx.principal, input, wait);
  };
  const grant = (command: 'grantAccess' | 'revokeAccess') => async (_: unknown, a: Args, ctx: ApiContext) => {
    const { input, wait } = commandInput(a['input']);
    return grantReceipt(await s.writes[command](ctx.principal, input, wait));
  };
  return {
    Mutation: {
      propose: write('propose'),
      revise: write('revise'),
      relate: write('relate'),
      ingestEpisode: write('ingestEpisode'),
      approve: write('approve'),
      reject: write('reject'),
      retract: write('retract'),
      feedback: write('feedback'),
      grantAccess: grant('grantAccess'),
      revokeAccess: grant('revokeAccess'),
      dismissFinding: write('dismissFinding'),
      rollback: write('rollback'),
    },
  };
}

/** GraphQL input → command input: drop transport options and nulls (GraphQL null = "not given"). */
function commandInput(v: unknown): { input: Args; wait: boolean } {
  const { await: w, ...rest } = obj(v);
  return { input: dropNulls(rest) as Args, wait: w !== false };
}

/** A grant's receipt names the grant where a record receipt names the record. */
const grantReceipt = ({ recordId, version: _v, ...r }: WriteReceipt) => ({ ...r, grantId: recordId });
