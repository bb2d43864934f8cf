import type { ApolloServerPlugin } from '@apollo/server';
import { getArgumentValues, Kind, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { AuditFacts } from '../domain/audit-chain.ts';
import { principalKey, type Principal } from '../domain/principal.ts';
import type { AuditLog } from '../ports/audit.ts';
import type { Logger } from '../ports/logger.ts';

/**
 * One audit entry per GraphQL operation a known caller runs, read or write, whatever it returned: who
 * (and the agents acting for them), the purpose it stated, the operation's root field, the ids in its
 * answer, and OK or the error code. Done once here rather than in every resolver, so that a new read
 * path cannot forget it: the ids are every `id`-like field of the response (what the caller was shown
 * or what was written), the purpose is the root field's `purpose` argument (or its input's).
 * Failed authentications never reach this point; they are logged by the context (api/context.ts).
 */
const ID_FIELDS = new Set(['id', 'recordId', 'grantId', 'holdId', 'entityId', 'episodeId']);
const MAX_IDS = 10_000;

export function apolloAuditPlugin<C extends { principal: Principal }>(
  audit: AuditLog,
  logger: Logger,
): ApolloServerPlugin<C> {
  return {
    requestDidStart({ contextValue }) {
      let resolved:
        { schema: GraphQLSchema; operation: OperationDefinitionNode; variables: Vars } | undefined;
      return Promise.resolve({
        didResolveOperation({ operation, schema, request }) {
          if (operation) resolved = { schema, operation, variables: request.variables ?? {} };
          return Promise.resolve();
        },
        willSendResponse({ response }) {
          if (response.body.kind !== 'single' || !contextValue.principal) return Promise.resolve();
          auditOperation(audit, logger, contextValue.principal, resolved, response.body.singleResult);
          return Promise.resolve();
        },
      });
    },
  };
}

type Vars = Readonly<Record<string, unknown>>;

/** One entry for one result (HTTP response, or one WebSocket delivery); a failed append is logged. */
export function auditOperation(
  audit: AuditLog,
  logger: Logger,
  p: Principal,
  resolved: { schema: GraphQLSchema; operation: OperationDefinitionNode; variables: Vars } | undefined,
  result: {
    readonly data?: unknown;
    readonly errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }>;
  },
): void {
  const root = resolved ? rootField(resolved.schema, resolved.operation, resolved.variables) : undefined;
  const ids = new Set<string>();
  collectIds(result.data, ids);
  const errors = result.errors;
  const facts: AuditFacts = {
    at: new Date().toISOString(),
    kind: resolved?.operation.operation === 'mutation' ? 'write' : 'read',
    op: root?.op ?? 'unknown',
    tenant: p.tenant,
    who: principalKey(p),
    chain: p.actors.map((a) => (a.iss ? `${a.iss}|${a.sub}` : a.sub)),
    purpose: root?.purpose ?? null,
    ids: [...ids],
    code: errors?.length ? String(errors[0]?.extensions?.['code'] ?? 'INTERNAL') : 'OK',
  };
  audit
    .append(facts)
    .catch((e: unknown) => logger.error({ err: String(e), op: facts.op }, 'audit append failed'));
}

function rootField(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  variables: Vars,
): { op: string; purpose: string | null } | undefined {
  const field = operation.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
  if (!field) return undefined;
  const op = `${operation.operation}.${field.name.value}`;
  const type = schema.getRootType(operation.operation);
  const def = type?.getFields()[field.name.value];
  if (!def) return { op, purpose: null };
  try {
    const args = getArgumentValues(def, field, variables);
    const input = args['input'] as Record<string, unknown> | undefined;
    const purpose = args['purpose'] ?? input?.['purpose'];
    return { op, purpose: typeof purpose === 'string' ? purpose.slice(0, 200) : null };
  } catch {
    return { op, purpose: null }; // invalid variables: the operation fails, and is audited with its code
  }
}

function collectIds(v: unknown, into: Set<string>): void {
  if (into.size >= MAX_IDS || v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    for (const x of v) collectIds(x, into);
    return;
  }
  for (const [k, x] of Object.entries(v)) {
    if (ID_FIELDS.has(k) && typeof x === 'string') into.add(x);
    else collectIds(x, into);
  }
}
