import { readFileSync } from 'node:fs';
import { buildSchema, parse, specifiedRules, validate, type DocumentNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { checkCost, limitRules, type QueryLimits } from '../../src/api/limits.ts';
import { load } from '../../src/config/index.ts';

/**
 * The cost model reads page sizes wherever the arguments carry them (issue #9: `recall(input: { limit })`
 * in 30 aliases passed a limit that only read top-level `first`/`limit`).
 */

const schema = buildSchema(/* GraphQL */ `
  scalar JSON
  type Query {
    recall(input: RecallInput!): Pack!
    batch(requests: [RecallInput!]!): [Pack!]!
    propose(input: ProposeInput!): ID
  }
  input RecallInput {
    query: String!
    limit: Int
    options: Options
  }
  input Options {
    k: Int
    label: String
  }
  input ProposeInput {
    ext: JSON
  }
  type Pack {
    items: [Item!]!
    tags: [String!]!
  }
  type Item {
    id: ID!
    text: String
  }
`);

/** The cost the per-request check measures (maxCost 0: every operation costs more, so it reports it). */
const cost = (doc: DocumentNode | string, variables?: Record<string, unknown>): unknown =>
  checkCost(schema, typeof doc === 'string' ? parse(doc) : doc, variables, undefined, 0)?.extensions[
    'actual'
  ];

describe('page sizes inside input objects', () => {
  it('reads input.limit: 1 + 100 × (items 1 + 1 × (id 1 + text 1)) = 301; without it, items count 10', () => {
    expect(cost(`{ recall(input: { query: "x", limit: 100 }) { items { id text } } }`)).toBe(301);
    // recall 1 + 1 × (items 1 + 10 × 2) = 22: the list default, as before
    expect(cost(`{ recall(input: { query: "x" }) { items { id text } } }`)).toBe(22);
  });

  it('reads a size nested deeper (input.options.k)', () => {
    expect(cost(`{ recall(input: { query: "x", options: { k: 40 } }) { items { id } } }`)).toBe(1 + 40 * 2);
  });

  it('takes the largest size of one input object', () => {
    const q = `{ recall(input: { query: "x", limit: 5, options: { k: 70 } }) { items { id } } }`;
    expect(cost(q)).toBe(1 + 70 * 2);
  });

  it('reads the value of a variable holding the input object, and its default without one', () => {
    const doc = parse(`query Q($in: RecallInput!) { recall(input: $in) { items { id } } }`);
    expect(cost(doc, { in: { query: 'x', limit: 50 } })).toBe(1 + 50 * 2);
    expect(cost(doc, { in: { query: 'x', options: { k: 7 } } })).toBe(1 + 7 * 2);
    // no value: no size known (the per-request check has the value); items count 10
    expect(cost(doc, {})).toBe(1 + 1 * (1 + 10 * 1));
    const withDefault = parse(
      `query Q($in: RecallInput = { query: "x", limit: 30 }) { recall(input: $in) { items { id } } }`,
    );
    expect(cost(withDefault, {})).toBe(1 + 30 * 2);
    expect(cost(withDefault, { in: { query: 'y', limit: 2 } })).toBe(1 + 2 * 2);
  });

  it('reads an Int variable inside a literal object: its value, else assumed 100', () => {
    const doc = parse(`query Q($n: Int) { recall(input: { query: "x", limit: $n }) { items { id } } }`);
    expect(cost(doc, { n: 8 })).toBe(1 + 8 * 2);
    expect(cost(doc, {})).toBe(1 + 100 * 2);
  });

  it('adds up the sizes of the elements of a list of inputs (each is a request)', () => {
    const q = `{ batch(requests: [{ query: "a", limit: 30 }, { query: "b", limit: 20 }]) { items { id } } }`;
    expect(cost(q)).toBe(1 + 50 * 2);
    const doc = parse(`query Q($r: [RecallInput!]!) { batch(requests: $r) { items { id } } }`);
    expect(cost(doc, { r: [{ query: 'a', limit: 30 }, { query: 'b', limit: 20 }, { query: 'c' }] })).toBe(
      1 + 50 * 2,
    );
  });

  it('multiplies the whole selection of a sized field by its page size', () => {
    // recall 1 + 100 × (items 1 + 1 × id 1 + tags 1) = 301
    expect(cost(`{ recall(input: { query: "x", limit: 100 }) { items { id } tags } }`)).toBe(301);
    expect(cost(`{ batch(requests: [{ query: "a", limit: 3 }]) { items { id } } }`)).toBe(1 + 3 * 2);
  });

  it('never reads a scalar value: a JSON `limit` key is data, not a page size', () => {
    expect(cost(`{ propose(input: { ext: { limit: 1000000, first: 99 } }) }`)).toBe(1);
    const doc = parse(`query Q($in: ProposeInput!) { propose(input: $in) }`);
    expect(cost(doc, { in: { ext: { limit: 1_000_000 } } })).toBe(1);
  });

  it('terminates on a hostile, deeply nested variable value', () => {
    let deep: Record<string, unknown> = { query: 'x', limit: 3 };
    for (let i = 0; i < 100_000; i++) deep = { options: deep };
    const doc = parse(`query Q($in: RecallInput!) { recall(input: $in) { items { id } } }`);
    expect(cost(doc, { in: deep })).toBe(1 + 1 * (1 + 10 * 1));
  });
});

describe('the issue #9 query against the real schema and default limits', () => {
  const real = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
  const c = load({ NEO4J_URI: 'bolt://unused', KAFKA_BROKERS: 'unused:0' }).http.limits;
  const limits: QueryLimits = {
    maxDepth: c.maxDepth,
    maxAliases: c.maxAliases,
    maxTokens: c.maxTokens,
    maxCost: c.maxCost,
  };
  // What a client reading a pack asks for: the items with their text, record and why.
  const ITEMS = `items { handle score headline body record { id namespace statement { text } } why { arms { arm rank } score } }`;
  const recalls = (n: number, limit: string) =>
    `{ ${Array.from(
      { length: n },
      (_, i) =>
        `r${i}: recall(input: { query: "deploy", namespace: "acme", purpose: "x", ${limit} }) { ${ITEMS} }`,
    ).join(' ')} }`;

  it('30 aliased recalls with limit 100 are refused by the static rule (limit cost) before execution', () => {
    const doc = parse(recalls(30, 'limit: 100'));
    const errors = validate(real, doc, [...specifiedRules, ...limitRules(limits)]);
    expect(errors.map((e) => e.extensions)).toEqual([
      expect.objectContaining({ code: 'BAD_USER_INPUT', limit: 'cost', max: 50_000 }),
    ]);
    expect(errors[0]!.extensions['actual']).toBeGreaterThan(50_000);
  });

  it('the same 30 recalls with the limit in a variable are refused by the per-request check', () => {
    const aliases = Array.from({ length: 30 }, (_, i) => `r${i}: recall(input: $in) { ${ITEMS} }`).join(' ');
    const doc = parse(`query Q($in: RecallInput!) { ${aliases} }`);
    expect(validate(real, doc, [...specifiedRules, ...limitRules(limits)])).toEqual([]); // value unknown
    const input = { query: 'deploy', namespace: 'acme', purpose: 'x', limit: 100 };
    expect(checkCost(real, doc, { in: input }, 'Q', limits.maxCost)?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      limit: 'cost',
    });
    // control: one such recall is well within the limit
    expect(checkCost(real, parse(recalls(1, 'limit: 100')), {}, undefined, limits.maxCost)).toBeUndefined();
  });

  it('control: 30 recalls with the default limit (10) still pass', () => {
    const doc = parse(recalls(30, 'limit: 10'));
    expect(validate(real, doc, [...specifiedRules, ...limitRules(limits)])).toEqual([]);
  });
});
