import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { Kind } from 'graphql';
import type { Telemetry } from '../ports/telemetry.ts';

/**
 * Each GraphQL operation counted and timed under its first root field (`query.recall`,
 * `mutation.propose`): the client's operation name is free text and would make the label set unbounded,
 * the root field is one of the schema's. An operation that never resolved (a parse or validation error)
 * counts as `unknown`; the code is `OK` or the first error's stable extensions.code.
 */
export function apolloMetricsPlugin<C extends BaseContext>(t: Telemetry): ApolloServerPlugin<C> {
  return {
    requestDidStart() {
      const t0 = performance.now();
      let operation = 'unknown';
      return Promise.resolve({
        didResolveOperation({ operation: op }) {
          const field = op?.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
          if (op && field) operation = `${op.operation}.${field.name.value}`;
          return Promise.resolve();
        },
        willSendResponse({ response }) {
          const errors = response.body.kind === 'single' ? response.body.singleResult.errors : undefined;
          const code = errors?.length ? String(errors[0]?.extensions?.['code'] ?? 'INTERNAL') : 'OK';
          t.graphql(operation, code, (performance.now() - t0) / 1000);
          return Promise.resolve();
        },
      });
    },
  };
}
