/**
 * The static cost of an operation: an estimate of how many fields it resolves, used by the cost limit
 * (limits.ts) on HTTP and WebSocket alike, with or without the request's variables.
 *
 * `cost(field) = 1 + m × cost(its selection set)`, a selection set costing the sum of its selections
 * (fragments expanded), where the multiplier m is the field's page size when its arguments ask for one,
 * else DEFAULT_LIST_SIZE for a list field, else 1. A connection list (`nodes`, `edges`, `items`) under a
 * field that took a page size is that page and is not multiplied again.
 *
 * Page sizes are read wherever the arguments carry them, not only at the top:
 *  - a top-level argument named `first`, `limit` or `k`;
 *  - inside an input object argument (a literal or a variable's value), an Int field with one of those
 *    names, at any depth of input objects (`recall(input: { limit: 100 })`);
 *  - in a list of input objects every element is a request of its own, so their sizes add up;
 *  - otherwise the largest size found counts (several arguments, several fields of one object).
 * A size is an integer literal or a variable: the request's value, else the variable's literal default,
 * else ASSUMED_VARIABLE_SIZE (as is any value that is not a non-negative integer). A variable holding an
 * input object is read from the request's value, else from its default; without either it holds no size
 * (the per-request check, which has the value, then decides). Only input types are walked, never a
 * scalar's content (a `JSON` value's `limit` key is data, not a page size).
 */
import {
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
  getNamedType,
  getNullableType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isObjectType,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';

/** Argument and input field names whose integer value is taken as the page size of a field. */
const SIZE_ARGS: ReadonlySet<string> = new Set(['first', 'limit', 'k']);
/** Page size assumed for a size whose value is not known (a variable without a value). */
export const ASSUMED_VARIABLE_SIZE = 100;
/** Multiplier for a list field without a page size. */
export const DEFAULT_LIST_SIZE = 10;
/** Connection lists whose length is the parent's page size. */
const CONNECTION_LISTS: ReadonlySet<string> = new Set(['nodes', 'edges', 'items']);
/** Input values are searched for sizes this deep at most (our input types nest a few levels). */
const MAX_INPUT_DEPTH = 16;

export type Fragments = ReadonlyMap<string, FragmentDefinitionNode>;
type Variables = Readonly<Record<string, unknown>>;

const isSize = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
const larger = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);
const isInt = (t: GraphQLInputType): boolean => getNamedType(t).name === 'Int';

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

/** Reads page sizes out of argument values, given the operation's variable defaults and values. */
class SizeReader {
  private readonly defaults = new Map<string, ValueNode | undefined>();

  constructor(
    op: OperationDefinitionNode,
    private readonly variables: Variables | undefined,
  ) {
    for (const v of op.variableDefinitions ?? []) this.defaults.set(v.variable.name.value, v.defaultValue);
  }

  /** The multiplier a field's arguments ask for, or undefined when they name no page size. */
  field(node: FieldNode, def: GraphQLField<unknown, unknown> | undefined): number | undefined {
    let m: number | undefined;
    for (const arg of node.arguments ?? []) {
      const name = arg.name.value;
      if (SIZE_ARGS.has(name)) m = larger(m, this.size(arg.value));
      else {
        const type = def?.args.find((a) => a.name === name)?.type;
        if (type) m = larger(m, this.input(arg.value, type, 0));
      }
    }
    return m;
  }

  /** An Int-valued size: a literal, or a variable (value, default, else assumed). */
  private size(value: ValueNode): number | undefined {
    if (value.kind === Kind.INT) {
      const n = Number.parseInt(value.value, 10);
      return isSize(n) ? n : ASSUMED_VARIABLE_SIZE;
    }
    if (value.kind !== Kind.VARIABLE) return undefined; // null, strings, …: not a size
    const name = value.name.value;
    if (this.variables && Object.hasOwn(this.variables, name)) {
      const v = this.variables[name];
      return isSize(v) ? v : ASSUMED_VARIABLE_SIZE;
    }
    const d = this.defaults.get(name);
    if (d?.kind === Kind.INT) {
      const n = Number.parseInt(d.value, 10);
      if (isSize(n)) return n;
    }
    return ASSUMED_VARIABLE_SIZE;
  }

  /** Sizes inside an input value (AST) of `type`: objects take the largest, lists add up. */
  private input(value: ValueNode, type: GraphQLInputType, depth: number): number | undefined {
    if (depth > MAX_INPUT_DEPTH) return undefined;
    if (value.kind === Kind.VARIABLE) {
      const name = value.name.value;
      if (this.variables && Object.hasOwn(this.variables, name))
        return this.json(this.variables[name], type, depth);
      const d = this.defaults.get(name);
      return d ? this.input(d, type, depth) : undefined;
    }
    const t = getNullableType(type);
    if (isListType(t)) {
      if (value.kind !== Kind.LIST) return this.input(value, t.ofType, depth + 1);
      let sum: number | undefined;
      for (const v of value.values) {
        const s = this.input(v, t.ofType, depth + 1);
        if (s !== undefined) sum = (sum ?? 0) + s;
      }
      return sum;
    }
    if (!isInputObjectType(t) || value.kind !== Kind.OBJECT) return undefined;
    const fields = t.getFields();
    let m: number | undefined;
    for (const f of value.fields) {
      const def = fields[f.name.value];
      if (!def) continue;
      const s =
        SIZE_ARGS.has(f.name.value) && isInt(def.type)
          ? this.size(f.value)
          : this.input(f.value, def.type, depth + 1);
      m = larger(m, s);
    }
    return m;
  }

  /** The same as `input`, for a variable's (JSON) value. */
  private json(value: unknown, type: GraphQLInputType, depth: number): number | undefined {
    if (depth > MAX_INPUT_DEPTH || value === null || value === undefined) return undefined;
    const t = getNullableType(type);
    if (isListType(t)) {
      if (!Array.isArray(value)) return this.json(value, t.ofType, depth + 1);
      let sum: number | undefined;
      for (const v of value) {
        const s = this.json(v, t.ofType, depth + 1);
        if (s !== undefined) sum = (sum ?? 0) + s;
      }
      return sum;
    }
    if (!isInputObjectType(t) || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const fields = t.getFields();
    let m: number | undefined;
    for (const [name, v] of Object.entries(value)) {
      const def = fields[name];
      if (!def || v === null || v === undefined) continue;
      const s =
        SIZE_ARGS.has(name) && isInt(def.type)
          ? isSize(v)
            ? v
            : ASSUMED_VARIABLE_SIZE
          : this.json(v, def.type, depth + 1);
      m = larger(m, s);
    }
    return m;
  }
}

/**
 * Static cost of an operation (see the module comment). Without `variables` (the validation rule) every
 * variable takes its literal default, else the assumptions above.
 */
export function operationCost(
  schema: GraphQLSchema,
  op: OperationDefinitionNode,
  fragments: Fragments,
  variables: Variables | undefined,
): number {
  const sizes = new SizeReader(op, variables);
  // Each selection set is costed against the type it selects on. Fragment costs are memoised by name,
  // which is sound because a named fragment always selects on its own type condition. Fragment cycles
  // are rejected by graphql's NoFragmentCycles, but rules run side by side, so guard here too.
  const fragMemo = new Map<string, number>();
  const walking = new Set<string>();

  const fieldCost = (sel: FieldNode, parent: GraphQLNamedType | undefined, paged: boolean): number => {
    const def = fieldDef(schema, parent, sel.name.value);
    let m = sizes.field(sel, def);
    const sized = m !== undefined;
    if (m === undefined && paged && CONNECTION_LISTS.has(sel.name.value)) m = 1;
    m ??= def && isListType(getNullableType(def.type)) ? DEFAULT_LIST_SIZE : 1;
    const inner = sel.selectionSet
      ? costOf(sel.selectionSet, def ? getNamedType(def.type) : undefined, sized)
      : 0;
    return 1 + m * inner;
  };

  // `paged`: the selection set belongs to a field that took a page size; its connection list is the page.
  const costOf = (set: SelectionSetNode, parent: GraphQLNamedType | undefined, paged = false): number => {
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) total += fieldCost(sel, parent, paged);
      else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const on = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
        total += costOf(sel.selectionSet, on ?? undefined, paged);
      } else {
        const name = sel.name.value;
        const memoKey = `${name}${paged ? '#paged' : ''}`;
        let v = fragMemo.get(memoKey);
        if (v === undefined) {
          const frag = fragments.get(name);
          if (!frag || walking.has(name)) continue; // unknown fragment or cycle: counts as empty
          walking.add(name);
          v = costOf(frag.selectionSet, schema.getType(frag.typeCondition.name.value) ?? undefined, paged);
          walking.delete(name);
          fragMemo.set(memoKey, v);
        }
        total += v;
      }
    }
    return total;
  };

  return costOf(op.selectionSet, rootType(schema, op));
}
