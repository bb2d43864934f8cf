import type { BaseContext, GraphQLRequestListener } from '@apollo/server';
import { GraphQLError, buildSchema, parse, specifiedRules, validate, type DocumentNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  apolloLimitsPlugin,
  checkCost,
  limitRules,
  parseWithLimits,
  type QueryLimits,
} from '../../src/api/limits.ts';

const typeDefs = /* GraphQL */ `
  type Query {
    node(id: ID!): Node
    nodes(limit: Int): [Node!]!
    viewer: User
    search(q: String!, k: Int): [Hit!]!
  }
  type Node {
    id: ID!
    child: Node
    children(first: Int): [Node!]!
  }
  type User {
    id: ID!
    name: String
    org: Org
    friends: [User!]!
  }
  type Org {
    id: ID!
    name: String
    members(first: Int): [User!]!
  }
  type Hit {
    score: Float!
    node: Node!
  }
`;
const schema = buildSchema(typeDefs);

const l: QueryLimits = { maxDepth: 10, maxAliases: 30, maxTokens: 5000, maxCost: 5000 };

const run = (doc: DocumentNode, limits: QueryLimits = l) =>
  validate(schema, doc, [...specifiedRules, ...limitRules(limits)]);
const runOnly = (doc: DocumentNode, limits: QueryLimits = l) => validate(schema, doc, limitRules(limits));
const limitErrors = (errors: readonly GraphQLError[], kind: string) =>
  errors.filter((e) => e.extensions['limit'] === kind);

/** `node(id: "1")` plus `child` nested until the path holds `depth` fields, ending in `id`. */
function nested(depth: number): string {
  let inner = 'id';
  for (let i = 0; i < depth - 2; i++) inner = `child { ${inner} }`;
  return `{ node(id: "1") { ${inner} } }`;
}

function aliased(n: number): string {
  return `{ ${Array.from({ length: n }, (_, i) => `a${i}: node(id: "${i}") { id }`).join(' ')} }`;
}

describe('depth limit', () => {
  it('rejects a depth-20 query', () => {
    const errors = run(parse(nested(20)));
    expect(errors).toHaveLength(1);
    const e = errors[0]!;
    expect(e.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'depth', max: 10, actual: 20 });
    expect(e.message).toBe('query depth 20 exceeds the limit of 10');
  });

  it('accepts a depth-10 query with maxDepth 10 and rejects depth 11', () => {
    expect(run(parse(nested(10)))).toEqual([]);
    expect(limitErrors(run(parse(nested(11))), 'depth')[0]?.extensions['actual']).toBe(11);
  });

  it('counts depth through fragment spreads and inline fragments', () => {
    // node 1 + Deep's child 1 + Deeper's 8 × child and id = 11; fragments and inline fragments add nothing
    const doc = parse(`
      query { node(id: "1") { ...Deep } }
      fragment Deep on Node { child { ... on Node { ...Deeper } } }
      fragment Deeper on Node { child { child { child { child { child { child { child { child { id } } } } } } } } }
    `);
    const errors = run(doc);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'depth', actual: 11 });
    expect(run(doc, { ...l, maxDepth: 11 })).toEqual([]);
  });

  it('counts introspection fields like any other', () => {
    const doc = parse(`{ __schema { types { fields { type { ofType { ofType { ofType { name } } } } } } } }`);
    expect(limitErrors(run(doc, { ...l, maxDepth: 7 }), 'depth')[0]?.extensions['actual']).toBe(8);
  });

  it('does not loop on a fragment cycle (graphql rejects the cycle itself)', () => {
    const doc = parse(`
      query { node(id: "1") { ...A } }
      fragment A on Node { child { ...B } }
      fragment B on Node { children(first: 2) { ...A } }
    `);
    const errors = run(doc);
    expect(errors.some((e) => /Cannot spread fragment "A" within itself/.test(e.message))).toBe(true);
    // our rules alone terminate too
    expect(runOnly(doc)).toEqual([]);
  });

  it('stays linear when fragments fan out', () => {
    // 2^30 expanded paths if fragments were not memoised
    const frags = Array.from(
      { length: 30 },
      (_, i) =>
        `fragment F${i} on Node { id ${i < 29 ? `a: child { ...F${i + 1} } b: child { ...F${i + 1} }` : ''} }`,
    ).join('\n');
    const doc = parse(`query { node(id: "1") { ...F0 } }\n${frags}`);
    const errors = runOnly(doc, { ...l, maxDepth: 100, maxAliases: 1_000 });
    expect(limitErrors(errors, 'aliases')[0]?.extensions['actual']).toBeGreaterThan(1_000_000);
    expect(limitErrors(errors, 'cost')).toHaveLength(1);
  });
});

describe('alias limit', () => {
  it('rejects 100 aliases', () => {
    const errors = run(parse(aliased(100)));
    expect(errors).toHaveLength(1);
    expect(errors[0]!.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      limit: 'aliases',
      max: 30,
      actual: 100,
    });
  });

  it('accepts 30 aliases with maxAliases 30', () => {
    expect(run(parse(aliased(30)))).toEqual([]);
  });

  it('counts aliases inside a fragment once per spread', () => {
    const doc = parse(`
      { a: node(id: "1") { ...F } b: node(id: "2") { ...F } }
      fragment F on Node { ${Array.from({ length: 20 }, (_, i) => `x${i}: id`).join(' ')} }
    `);
    expect(limitErrors(run(doc), 'aliases')[0]?.extensions['actual']).toBe(42);
  });
});

describe('cost limit', () => {
  const doubleFirst = `{ node(id: "1") { children(first: 1000) { children(first: 1000) { id } } } }`;

  it('rejects nested first: 1000', () => {
    const errors = run(parse(doubleFirst));
    expect(errors).toHaveLength(1);
    // node 1 + 1 × (children 1 + 1000 × (children 1 + 1000 × id 1))
    expect(errors[0]!.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      limit: 'cost',
      max: 5000,
      actual: 1_001_002,
    });
    expect(errors[0]!.message).toBe('query cost 1001002 exceeds the limit of 5000');
  });

  it('multiplies unbounded list fields by 10 and honours limit / k', () => {
    // viewer 1 + 1 × (friends 1 + 10 × (friends 1 + 10 × id 1)) = 112
    expect(
      checkCost(schema, parse(`{ viewer { friends { friends { id } } } }`), undefined, undefined, 111),
    ).toMatchObject({
      extensions: { limit: 'cost', actual: 112 },
    });
    expect(
      checkCost(schema, parse(`{ viewer { friends { friends { id } } } }`), undefined, undefined, 112),
    ).toBeUndefined();
    // nodes 1 + 3 × id 1 = 4; search 1 + 2 × (node 1 + id 1) = 5
    const doc = parse(`{ nodes(limit: 3) { id } search(q: "x", k: 2) { node { id } } }`);
    expect(checkCost(schema, doc, undefined, undefined, 8)?.extensions['actual']).toBe(9);
  });

  it('uses variable values in checkCost', () => {
    const doc = parse(
      `query Q($n: Int) { node(id: "1") { children(first: $n) { children(first: $n) { id } } } }`,
    );
    const over = checkCost(schema, doc, { n: 1000 }, 'Q', 5000);
    expect(over).toBeInstanceOf(GraphQLError);
    expect(over!.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      limit: 'cost',
      max: 5000,
      actual: 1_001_002,
    });
    expect(checkCost(schema, doc, { n: 5 }, 'Q', 5000)).toBeUndefined();
    // no value: assumed 100 → 1 + 1 + 100 × (1 + 100) = 10102
    expect(checkCost(schema, doc, {}, 'Q', 5000)?.extensions['actual']).toBe(10_102);
    expect(checkCost(schema, doc, undefined, undefined, 5000)?.extensions['actual']).toBe(10_102);
    // ...which the validation rule (no variables) also rejects
    expect(limitErrors(run(doc), 'cost')[0]?.extensions['actual']).toBe(10_102);
  });

  it('uses a variable default when no value is given', () => {
    const doc = parse(
      `query Q($n: Int = 3) { node(id: "1") { children(first: $n) { children(first: $n) { id } } } }`,
    );
    // 1 + 1 + 3 × (1 + 3) = 14
    expect(checkCost(schema, doc, {}, undefined, 14)).toBeUndefined();
    expect(checkCost(schema, doc, {}, undefined, 13)?.extensions['actual']).toBe(14);
    expect(checkCost(schema, doc, { n: 4 }, undefined, 14)?.extensions['actual']).toBe(1 + 1 + 4 * (1 + 4));
    expect(run(doc)).toEqual([]);
  });

  it('judges the named operation only', () => {
    const doc = parse(`query Cheap { node(id: "1") { id } } query Dear ${doubleFirst}`);
    expect(checkCost(schema, doc, undefined, 'Cheap', 5000)).toBeUndefined();
    expect(checkCost(schema, doc, undefined, 'Dear', 5000)?.extensions['limit']).toBe('cost');
    expect(checkCost(schema, doc, undefined, undefined, 5000)?.extensions['limit']).toBe('cost');
  });
});

describe('parseWithLimits', () => {
  it('rejects a document over the token limit', () => {
    const source = `{ node(id: "1") { ${Array.from({ length: 6000 }, () => 'id').join(' ')} } }`;
    let caught: unknown;
    try {
      parseWithLimits(source, l);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(GraphQLError);
    const e = caught as GraphQLError;
    expect(e.extensions).toMatchObject({ code: 'BAD_USER_INPUT', limit: 'tokens', max: 5000 });
    expect(e.message).toBe('query exceeds the limit of 5000 tokens');
  });

  it('turns a syntax error into BAD_USER_INPUT with its location', () => {
    let caught: unknown;
    try {
      parseWithLimits('{ node(id: "1") { id }', l);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(GraphQLError);
    const e = caught as GraphQLError;
    expect(e.extensions['code']).toBe('BAD_USER_INPUT');
    expect(e.extensions['limit']).toBeUndefined();
    expect(e.message).toMatch(/^Syntax Error/);
    expect(e.locations?.[0]).toBeDefined();
  });

  it('parses a normal document', () => {
    expect(parseWithLimits('{ viewer { id } }', l).kind).toBe('Document');
  });
});

describe('a normal query', () => {
  it('passes every rule', () => {
    const doc = parseWithLimits(
      `
      query Home($q: String!) {
        me: viewer { id name org { name members(first: 20) { id name } } }
        recent: nodes(limit: 10) { id child { id } children(first: 5) { id } }
        hits: search(q: $q, k: 8) { score node { id ...N } }
        __typename
      }
      fragment N on Node { child { id } }
    `,
      l,
    );
    expect(run(doc)).toEqual([]);
    expect(checkCost(schema, doc, { q: 'x' }, 'Home', l.maxCost)).toBeUndefined();
  });
});

/*
 * The plugin is driven through its hooks with a minimal request context rather than a real ApolloServer:
 * under vitest without a config, the test's `graphql` (ESM build, via vite) and Apollo's (CJS, via Node)
 * are different module instances, and graphql refuses schemas from "another realm".
 */
describe('apolloLimitsPlugin', () => {
  type DidResolveCtx = Parameters<NonNullable<GraphQLRequestListener<BaseContext>['didResolveOperation']>>[0];

  async function didResolve(
    query: string,
    variables: Record<string, unknown>,
    operationName?: string,
  ): Promise<void> {
    const plugin = apolloLimitsPlugin(l);
    const rc = {
      schema,
      document: parse(query),
      request: { query, variables, operationName },
    } as unknown as DidResolveCtx;
    const listener = await plugin.requestDidStart?.(rc);
    await listener?.didResolveOperation?.(rc);
  }

  // static estimate 1 + 1 + 100 × id 1 = 102 passes validation; the real value decides
  const query = `query Q($n: Int) { node(id: "1") { children(first: $n) { id } } }`;

  it('passes the static rules', () => {
    expect(run(parse(query))).toEqual([]);
  });

  it('rejects on cost with the request variables, asking for HTTP 400', async () => {
    const err: unknown = await didResolve(query, { n: 100_000 }, 'Q').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GraphQLError);
    expect((err as GraphQLError).extensions).toEqual({
      code: 'BAD_USER_INPUT',
      limit: 'cost',
      max: 5000,
      actual: 100_002,
      http: { status: 400 },
    });
  });

  it('lets a cheap request through', async () => {
    await expect(didResolve(query, { n: 10 }, 'Q')).resolves.toBeUndefined();
  });
});
