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
 *  - Cost: `cost(field) = 1 + m × cost(its selection set)`, a selection set costing the sum of its
 *    selections (fragments expanded), where the multiplier m is
 *      · the value of a `first`, `limit` or `k` argument (the largest, if several) when it is an integer
 *        literal or a variable; a variable takes its value from the request's variables, else the
 *        variable's literal default, else is assumed to be 100 (as is any value that is not a
 *        non-negative integer);
 *      · otherwise 10 when the field returns a list (`[T]`, `[T!]!`, nested lists alike);
 *      · otherwise 1.
 *    The validation rules use this estimate without variables (every variable without a default counts
 *    as 100), so a query multiplying several variable page sizes can already be rejected there; the
 *    per-request `checkCost` then enforces the bound with the real values.
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
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  parse,
  type ASTNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
  type ValueNode,
} from 'graphql';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import type { ErrorCode } from '../domain/errors.ts';

export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxCost: number;
}

export type LimitKind = 'depth' | 'aliases' | 'cost' | 'tokens';

/** Argument names whose integer value is taken as the page size of a field. */
const SIZE_ARGS: ReadonlySet<string> = new Set(['first', 'limit', 'k']);
/** Page size assumed for a size argument whose value is not known (a variable without a value). */
export const ASSUMED_VARIABLE_SIZE = 100;
/** Multiplier for a list field without a size argument. */
export const DEFAULT_LIST_SIZE = 10;

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

export type Fragments = ReadonlyMap<string, FragmentDefinitionNode>;

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

function rootType(schema: GraphQLSchema, op: OperationDefinitionNode): GraphQLNamedType | undefined {
  switch (op.operation) {
    case 'query':
      return schema.getQueryType() ?? undefined;
    case 'mutation':
      return schema.getMutationType() ?? undefined;
    case 'subscription':
      return schema.getSubscriptionType() ?? undefined;
  }
}

function fieldDef(
  schema: GraphQLSchema,
  parent: GraphQLNamedType | undefined,
  name: string,
): GraphQLField<unknown, unknown> | undefined {
  if (name === TypeNameMetaFieldDef.name) return TypeNameMetaFieldDef;
  if (!parent) return undefined;
  if (parent === schema.getQueryType()) {
    if (name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef;
    if (name === TypeMetaFieldDef.name) return TypeMetaFieldDef;
  }
  if (isObjectType(parent) || isInterfaceType(parent)) return parent.getFields()[name];
  return undefined;
}

/** Connection lists whose length is the parent's page size. */
const CONNECTION_LISTS = new Set(['nodes', 'edges']);

const isSize = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;

/**
 * Static cost of an operation (see the module comment). A variable absent from `variables` (or with
 * no `variables` at all) takes its literal default, else ASSUMED_VARIABLE_SIZE.
 */
export function operationCost(
  schema: GraphQLSchema,
  op: OperationDefinitionNode,
  fragments: Fragments,
  variables: Readonly<Record<string, unknown>> | undefined,
): number {
  const defaults = new Map<string, ValueNode | undefined>();
  for (const v of op.variableDefinitions ?? []) defaults.set(v.variable.name.value, v.defaultValue);

  const sizeOf = (value: ValueNode): number | undefined => {
    if (value.kind === Kind.INT) {
      const n = Number.parseInt(value.value, 10);
      return isSize(n) ? n : ASSUMED_VARIABLE_SIZE;
    }
    if (value.kind === Kind.VARIABLE) {
      const name = value.name.value;
      if (variables && Object.hasOwn(variables, name)) {
        const v = variables[name];
        return isSize(v) ? v : ASSUMED_VARIABLE_SIZE;
      }
      const d = defaults.get(name);
      if (d?.kind === Kind.INT) {
        const n = Number.parseInt(d.value, 10);
        if (isSize(n)) return n;
      }
      return ASSUMED_VARIABLE_SIZE;
    }
    return undefined; // null, strings, …: not a size; the field falls back to the list default
  };

  // Each selection set is costed against the type it selects on. Fragment costs are memoised by name,
  // which is sound because a named fragment always selects on its own type condition.
  const fragMemo = new Map<string, number>();
  const walking = new Set<string>();
  // `paged`: the selection set belongs to a field that took a page size (first/limit/k); its connection
  // list (`nodes`/`edges`) is that page and is not multiplied again.
  const costOf = (set: SelectionSetNode, parent: GraphQLNamedType | undefined, paged = false): number => {
    let total = 0;
    for (const sel of set.selections) {
      switch (sel.kind) {
        case Kind.FIELD: {
          const def = fieldDef(schema, parent, sel.name.value);
          let m: number | undefined;
          for (const arg of sel.arguments ?? []) {
            if (!SIZE_ARGS.has(arg.name.value)) continue;
            const s = sizeOf(arg.value);
            if (s !== undefined) m = Math.max(m ?? 0, s);
          }
          const sized = m !== undefined;
          if (m === undefined && paged && CONNECTION_LISTS.has(sel.name.value)) m = 1;
          m ??= def && isListType(getNullableType(def.type)) ? DEFAULT_LIST_SIZE : 1;
          const inner = sel.selectionSet
            ? costOf(sel.selectionSet, def ? getNamedType(def.type) : undefined, sized)
            : 0;
          total += 1 + m * inner;
          break;
        }
        case Kind.INLINE_FRAGMENT:
          total += costOf(
            sel.selectionSet,
            sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent,
            paged,
          );
          break;
        case Kind.FRAGMENT_SPREAD: {
          const name = sel.name.value;
          const memoKey = `${name}${paged ? '#paged' : ''}`;
          let v = fragMemo.get(memoKey);
          if (v === undefined) {
            const frag = fragments.get(name);
            if (!frag || walking.has(name)) break; // unknown fragment or cycle: counts as empty
            walking.add(name);
            v = costOf(frag.selectionSet, schema.getType(frag.typeCondition.name.value), paged);
            walking.delete(name);
            fragMemo.set(memoKey, v);
          }
          total += v;
          break;
        }
      }
    }
    return total;
  };

  return costOf(op.selectionSet, rootType(schema, op));
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
