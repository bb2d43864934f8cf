/**
 * Query limits, applied identically on the HTTP path (Apollo) and the WebSocket path (graphql-ws).
 *
 * Everything here is plain graphql-js so both transports share one implementation:
 *
 *  - `parseWithLimits` — parse with graphql's `maxTokens` guard; token-limit and syntax errors become
 *    BAD_USER_INPUT GraphQLErrors. (Apollo parses on its own: give it `parseOptions: { maxTokens }`.)
 *  - `limitRules` — validation rules for depth, aliases and a variable-free cost estimate. These never
 *    look at request variables, so their verdict depends on the document alone (Apollo caches validated
 *    documents, so a rule must not depend on anything else).
 *  - `checkCost` — the same cost estimate, but using the request's variable values. Call it once the
 *    operation is resolved: Apollo's `didResolveOperation` hook (see `apolloLimitsPlugin`) and graphql-ws
 *    `onSubscribe` (after validation, with `message.payload.variables` / `operationName`).
 *
 * Definitions (kept deliberately simple):
 *
 *  - Depth: the number of fields on the longest path from the operation root to a leaf, following
 *    fragment spreads and inline fragments (which add no depth themselves). `{ a }` has depth 1,
 *    `{ a { b } }` depth 2. Introspection fields (`__schema`, `__type`, …) count like any other field.
 *  - Aliases: the number of aliased fields an operation selects, with a fragment's aliases counted once
 *    per spread (so aliases cannot be multiplied through fragments). The worst operation in the document
 *    is the one that is judged.
 *  - Cost: an estimate of the fields an operation resolves, page sizes multiplied through the selection
 *    (see cost.ts for the model: sizes are read from `first`/`limit`/`k` arguments and from input objects
 *    at any depth). The validation rules use it without variables, so a query multiplying several
 *    variable page sizes can already be rejected there; `checkCost` then enforces the bound with the
 *    request's real values.
 *
 * Fragment cycles are rejected by graphql's own NoFragmentCycles rule, but validation rules run in
 * parallel, so every walk here guards against cycles itself (a spread back into a fragment that is being
 * walked counts as empty) and memoises per fragment, so fragment fan-out stays linear.
 *
 * Every violation is a GraphQLError with
 * `extensions: { code: 'BAD_USER_INPUT', limit: 'depth'|'aliases'|'cost'|'tokens', max, actual }`
 * (`actual` is absent for tokens: parsing stops at the limit, so the real count is unknown).
 */
import {
  GraphQLError,
  Kind,
  parse,
  type ASTNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import type { ErrorCode } from '../domain/errors.ts';
import { operationCost, type Fragments } from './cost.ts';

export { ASSUMED_VARIABLE_SIZE, DEFAULT_LIST_SIZE, operationCost, type Fragments } from './cost.ts';

export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxCost: number;
}

export type LimitKind = 'depth' | 'aliases' | 'cost' | 'tokens';

const BAD_USER_INPUT: ErrorCode = 'BAD_USER_INPUT';

function limitError(
  limit: Exclude<LimitKind, 'tokens'>,
  message: string,
  max: number,
  actual: number,
  nodes?: ASTNode | readonly ASTNode[],
): GraphQLError {
  return new GraphQLError(message, {
    nodes,
    extensions: { code: BAD_USER_INPUT, limit, max, actual: capped(actual) },
  });
}

/** Keeps huge estimates JSON-safe (Infinity would serialise as null). */
const capped = (n: number): number => Math.min(n, Number.MAX_SAFE_INTEGER);

function fragmentsOf(doc: DocumentNode): Fragments {
  const m = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) m.set(d.name.value, d);
  return m;
}

function operationsOf(doc: DocumentNode): OperationDefinitionNode[] {
  return doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
}

/**
 * Folds a selection set, expanding fragment spreads once per fragment (memoised) with a cycle guard.
 * `field` computes a field's value given a function that folds a child selection set.
 */
function makeFolder<T>(
  fragments: Fragments,
  empty: T,
  combine: (a: T, b: T) => T,
  field: (node: FieldNode, fold: (set: SelectionSetNode) => T) => T,
): (set: SelectionSetNode) => T {
  const memo = new Map<string, T>();
  const walking = new Set<string>();
  const fold = (set: SelectionSetNode): T => {
    let acc = empty;
    for (const sel of set.selections) {
      switch (sel.kind) {
        case Kind.FIELD:
          acc = combine(acc, field(sel, fold));
          break;
        case Kind.INLINE_FRAGMENT:
          acc = combine(acc, fold(sel.selectionSet));
          break;
        case Kind.FRAGMENT_SPREAD: {
          const name = sel.name.value;
          let v = memo.get(name);
          if (v === undefined) {
            const frag = fragments.get(name);
            if (!frag || walking.has(name)) break; // unknown fragment or cycle: counts as empty
            walking.add(name);
            v = fold(frag.selectionSet);
            walking.delete(name);
            memo.set(name, v);
          }
          acc = combine(acc, v);
          break;
        }
      }
    }
    return acc;
  };
  return fold;
}

/** Depth of an operation: fields on the longest root-to-leaf path. */
export function operationDepth(op: OperationDefinitionNode, fragments: Fragments): number {
  const fold = makeFolder<number>(fragments, 0, Math.max, (f, inner) =>
    f.selectionSet ? 1 + inner(f.selectionSet) : 1,
  );
  return fold(op.selectionSet);
}

/** Aliased fields an operation selects, fragments counted once per spread. */
export function operationAliases(op: OperationDefinitionNode, fragments: Fragments): number {
  const fold = makeFolder<number>(
    fragments,
    0,
    (a, b) => a + b,
    (f, inner) => (f.alias ? 1 : 0) + (f.selectionSet ? inner(f.selectionSet) : 0),
  );
  return fold(op.selectionSet);
}

const opLabel = (op: OperationDefinitionNode): string =>
  op.name ? `${op.operation} "${op.name.value}"` : op.operation;

function costError(op: OperationDefinitionNode, cost: number, maxCost: number): GraphQLError {
  return limitError(
    'cost',
    `${opLabel(op)} cost ${capped(cost)} exceeds the limit of ${maxCost}`,
    maxCost,
    cost,
    op,
  );
}

const depthRule =
  (max: number): ValidationRule =>
  (context) => ({
    Document(doc) {
      const fragments = fragmentsOf(doc);
      for (const op of operationsOf(doc)) {
        const depth = operationDepth(op, fragments);
        if (depth > max)
          context.reportError(
            limitError('depth', `${opLabel(op)} depth ${depth} exceeds the limit of ${max}`, max, depth, op),
          );
      }
      return false;
    },
  });

const aliasRule =
  (max: number): ValidationRule =>
  (context) => ({
    Document(doc) {
      const fragments = fragmentsOf(doc);
      for (const op of operationsOf(doc)) {
        const n = operationAliases(op, fragments);
        if (n > max)
          context.reportError(
            limitError(
              'aliases',
              `${opLabel(op)} uses ${capped(n)} aliases, exceeding the limit of ${max}`,
              max,
              n,
              op,
            ),
          );
      }
      return false;
    },
  });

const costRule =
  (max: number): ValidationRule =>
  (context) => ({
    Document(doc) {
      const fragments = fragmentsOf(doc);
      const schema = context.getSchema();
      for (const op of operationsOf(doc)) {
        const cost = operationCost(schema, op, fragments, undefined);
        if (cost > max) context.reportError(costError(op, cost, max));
      }
      return false;
    },
  });

/**
 * Validation rules for depth, aliases and the variable-free cost estimate. Use with
 * `validate(schema, doc, [...specifiedRules, ...limitRules(l)])` or Apollo's `validationRules`.
 * The per-request cost check with real variable values is `checkCost` (see `apolloLimitsPlugin`).
 */
export function limitRules(l: QueryLimits): ValidationRule[] {
  return [depthRule(l.maxDepth), aliasRule(l.maxAliases), costRule(l.maxCost)];
}

/**
 * Cost check with the request's variables, for the operation that will execute. Call it after the
 * operation is resolved (Apollo `didResolveOperation`, graphql-ws `onSubscribe` after validation).
 * When the operation cannot be determined (no name and several operations) the most expensive one is
 * judged; an unknown operation name yields no error (execution rejects it anyway).
 */
export function checkCost(
  schema: GraphQLSchema,
  doc: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined,
  maxCost: number,
): GraphQLError | undefined {
  const fragments = fragmentsOf(doc);
  const ops = operationsOf(doc);
  const candidates = operationName !== undefined ? ops.filter((o) => o.name?.value === operationName) : ops;
  let worst: { op: OperationDefinitionNode; cost: number } | undefined;
  for (const op of candidates) {
    const cost = operationCost(schema, op, fragments, variables ?? {});
    if (!worst || cost > worst.cost) worst = { op, cost };
  }
  return worst && worst.cost > maxCost ? costError(worst.op, worst.cost, maxCost) : undefined;
}

/** graphql 16 says "more that N tokens" (sic); accept the corrected spelling too. */
const TOKEN_LIMIT = /Document contains more th(?:at|an) (\d+) tokens/;

/**
 * `parse` with graphql's token limit. A token-limit error becomes BAD_USER_INPUT with
 * `limit: 'tokens'`; any other syntax error becomes BAD_USER_INPUT keeping its message and location.
 */
export function parseWithLimits(source: string, l: QueryLimits): DocumentNode {
  try {
    return parse(source, { maxTokens: l.maxTokens });
  } catch (e) {
    if (!(e instanceof GraphQLError)) throw e;
    const m = TOKEN_LIMIT.exec(e.message);
    if (m) {
      const max = Number(m[1] ?? l.maxTokens);
      throw new GraphQLError(`query exceeds the limit of ${max} tokens`, {
        extensions: { code: BAD_USER_INPUT, limit: 'tokens', max },
      });
    }
    throw new GraphQLError(e.message, {
      source: e.source,
      positions: e.positions,
      originalError: e,
      extensions: { code: BAD_USER_INPUT },
    });
  }
}

/**
 * Apollo plugin running `checkCost` with the request's variables once the operation is resolved.
 * Depth, aliases and the variable-free cost estimate belong in `validationRules: limitRules(l)`, the
 * token limit in `parseOptions: { maxTokens: l.maxTokens }`.
 * The thrown error carries `extensions.http.status = 400`, which Apollo turns into the HTTP status
 * and strips from the response.
 */
export function apolloLimitsPlugin<TContext extends BaseContext = BaseContext>(
  l: QueryLimits,
): ApolloServerPlugin<TContext> {
  return {
    requestDidStart: () =>
      Promise.resolve({
        didResolveOperation: (rc) => {
          const err = checkCost(
            rc.schema,
            rc.document,
            rc.request.variables,
            rc.request.operationName ?? undefined,
            l.maxCost,
          );
          if (!err) return Promise.resolve();
          return Promise.reject(
            new GraphQLError(err.message, {
              nodes: err.nodes,
              extensions: { ...err.extensions, http: { status: 400 } },
            }),
          );
        },
      }),
  };
}
