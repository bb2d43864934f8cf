import { readFileSync } from 'node:fs';
import {
  buildSchema,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  type GraphQLInputType,
} from 'graphql';
import {
  COMMAND_INPUTS,
  SCREENING,
  type CommandName,
  type FieldRule,
  type InputTypeName,
} from '../../src/ingest/screen-command.ts';

/**
 * Every string a mutation's input can carry, found by walking schema.graphql (not the screening table, so a
 * field added to the contract is tried without anyone listing it), each with the rule the table gives it.
 */

export const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
export const mutations = schema.getMutationType()!.getFields();

export const inputArg = (mutation: string): GraphQLInputType => {
  const arg = mutations[mutation]?.args.find((a) => a.name === 'input');
  if (!arg) throw new Error(`${mutation} takes no input argument`);
  return arg.type;
};

export type Path = Array<string | number>;
export interface Leaf {
  readonly mutation: CommandName;
  /** Where the string sits; for a JSON object key, the path of the object and `key` set. */
  readonly path: Path;
  readonly key?: string;
  /** The GraphQL field ("TurnInput.speaker") and its named type ("String", "RecordClass", "JSON" …). */
  readonly field: string;
  readonly gqlType: string;
  readonly rule: 'text' | 'name' | 'key' | 'opaque';
}

const LATER = '2026-06-01T00:00:00.000Z';

/** A value for every field of `type` (a list gets one element; JSON an object with a nested key). */
export function sampleOf(type: GraphQLInputType): unknown {
  const t = getNullableType(type);
  if (isListType(t)) return [sampleOf(t.ofType as GraphQLInputType)];
  if (isInputObjectType(t))
    return Object.fromEntries(
      // validTo must come after validFrom for the rest of the input to be valid.
      Object.values(t.getFields()).map((f) => [f.name, f.name === 'validTo' ? LATER : sampleOf(f.type)]),
    );
  if (isEnumType(t)) return t.getValues()[0]!.value;
  const byScalar: Record<string, unknown> = {
    Int: 1,
    Float: 1,
    Boolean: true,
    DateTime: '2026-01-01T00:00:00.000Z',
    JSON: { 'x:doc': { title: 'plain', tags: ['plain'] } },
  };
  return byScalar[(t as { name: string }).name] ?? 'plain';
}

/** The rule the table gives the string at `path` of a `typeName` value (`isKey`: an object key there). */
function ruleAt(typeName: InputTypeName, path: Path, isKey: boolean): Leaf['rule'] {
  let rule: FieldRule = { input: typeName };
  for (const step of path) {
    if (typeof step === 'number') continue;
    if (rule === 'json') return isKey ? 'name' : 'text';
    if (typeof rule !== 'object') break;
    rule = SCREENING[rule.input][step]!;
  }
  if (rule === 'json') return isKey ? 'name' : 'text';
  if (typeof rule === 'object') throw new Error(`no string at ${path.join('.')}`);
  return rule;
}

/** Whether `path` is a `json` field or lies below one (its object keys are then strings to screen). */
function isJson(typeName: InputTypeName, path: Path): boolean {
  let rule: FieldRule = { input: typeName };
  for (const step of path) {
    if (rule === 'json') return true;
    if (typeof step === 'number') continue;
    if (typeof rule !== 'object') return false;
    rule = SCREENING[rule.input][step]!;
  }
  return rule === 'json';
}

function leavesOf(mutation: CommandName): { sample: unknown; leaves: Leaf[] } {
  const sample = sampleOf(inputArg(mutation));
  const typeName = COMMAND_INPUTS[mutation];
  const leaves: Leaf[] = [];
  // `field` is the GraphQL field a string sits in ("TurnInput.speaker"); below a JSON field, that field.
  const walk = (v: unknown, path: Path, field: string, type: GraphQLInputType | undefined): void => {
    const named = type && getNamedType(type);
    if (typeof v === 'string') {
      leaves.push({
        mutation,
        path,
        field,
        gqlType: named?.name ?? 'JSON',
        rule: ruleAt(typeName, path, false),
      });
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i], field, type));
    else if (v && typeof v === 'object') {
      const underJson = isJson(typeName, path);
      const inputFields = isInputObjectType(named) ? named.getFields() : undefined;
      for (const [k, x] of Object.entries(v)) {
        if (underJson) leaves.push({ mutation, path, key: k, field, gqlType: 'JSON', rule: 'name' });
        const f = inputFields?.[k];
        walk(x, [...path, k], f ? `${named!.name}.${k}` : field, f?.type);
      }
    }
  };
  walk(sample, [], typeName, inputArg(mutation));
  return { sample, leaves };
}

/** A deep copy of `sample` with the leaf replaced by `s`. */
export function withLeaf(sample: unknown, leaf: Leaf, s: string): Record<string, unknown> {
  const copy = structuredClone(sample) as Record<string, unknown>;
  let parent: Record<string | number, unknown> = copy;
  const steps = leaf.key === undefined ? leaf.path.slice(0, -1) : leaf.path;
  for (const step of steps) parent = parent[step] as Record<string | number, unknown>;
  if (leaf.key !== undefined) {
    parent[s] = parent[leaf.key];
    delete parent[leaf.key];
  } else parent[leaf.path[leaf.path.length - 1]!] = s;
  return copy;
}

export const get = (v: unknown, path: Path): unknown =>
  path.reduce<unknown>((o, step) => (o as Record<string | number, unknown>)[step], v);

/** Every string leaf of every mutation's input, with the (schema-generated) input it sits in. */
export const LEAVES = (Object.keys(COMMAND_INPUTS) as CommandName[]).flatMap((m) => {
  const { sample, leaves } = leavesOf(m);
  return leaves.map((leaf) => ({
    leaf,
    sample,
    name: `${m} ${leaf.path.join('.')}${leaf.key === undefined ? '' : ` [key ${leaf.key}]`}`,
  }));
});
