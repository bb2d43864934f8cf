import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { nestedDeeperThan } from '../domain/model.ts';
import { gqlError } from './errors.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function parseInstant(v: unknown): string {
  if (typeof v !== 'string' || !ISO.test(v))
    throw gqlError('BAD_USER_INPUT', 'DateTime must be ISO-8601 with an offset, e.g. 2026-03-01T12:00:00Z');
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw gqlError('BAD_USER_INPUT', `invalid DateTime: ${v.slice(0, 40)}`);
  // Reject calendar overflow such as 2026-02-30 that Date would silently roll over.
  const [y, m, day] = v.slice(0, 10).split('-').map(Number);
  const check = new Date(Date.UTC(y!, m! - 1, day!));
  if (check.getUTCMonth() !== m! - 1 || check.getUTCDate() !== day)
    throw gqlError('BAD_USER_INPUT', `invalid DateTime: ${v.slice(0, 40)}`);
  return d.toISOString();
}

export const DateTime = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  serialize: (v) => (typeof v === 'string' ? v : new Date(v as number).toISOString()),
  parseValue: parseInstant,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw gqlError('BAD_USER_INPUT', 'DateTime must be a string');
    return parseInstant(ast.value);
  },
});

/** Deepest JSON value (`ext`) accepted: `{}` is 1 level, `{"a":{}}` 2. Deeper is BAD_USER_INPUT. */
export const MAX_JSON_DEPTH = 32;

const tooDeep = () => gqlError('BAD_USER_INPUT', `JSON value nested deeper than ${MAX_JSON_DEPTH} levels`);

function checkedJson(v: unknown): unknown {
  if (nestedDeeperThan(v, MAX_JSON_DEPTH)) throw tooDeep();
  return v;
}

function literalToJson(
  ast: ValueNode,
  variables: Record<string, unknown> | null | undefined,
  depth = 0,
): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      if (depth >= MAX_JSON_DEPTH) throw tooDeep();
      return ast.values.map((v) => literalToJson(v, variables, depth + 1));
    case Kind.OBJECT:
      if (depth >= MAX_JSON_DEPTH) throw tooDeep();
      return Object.fromEntries(
        ast.fields.map((f) => [f.name.value, literalToJson(f.value, variables, depth + 1)]),
      );
    case Kind.VARIABLE:
      return variables?.[ast.name.value];
    case Kind.ENUM:
      return ast.value;
  }
}

/** Arbitrary JSON, depth-limited on the way in so that nothing downstream recurses into a hostile value. */
export const JSONScalar = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  serialize: (v) => v,
  parseValue: checkedJson,
  parseLiteral: (ast, variables) => checkedJson(literalToJson(ast, variables)),
});
