import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  parse,
  print,
  TypeInfo,
  typeFromAST,
  validate,
  visit,
  visitWithTypeInfo,
  type GraphQLInputType,
  type GraphQLSchema,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
} from 'graphql';
import { z } from 'zod';
import { Scopes, type Scope } from '../domain/principal.ts';

/**
 * MCP tools are named GraphQL operations kept in the repo (src/mcp/tools/<name>.graphql), not code: the
 * operation's leading comment is the tool's description, its variables are the tool's input schema (types
 * and descriptions read from schema.graphql), a query is a read-only tool and a mutation a write tool.
 * Adding a tool (an analytics query, say) means adding a file. Comment lines starting with `@` are
 * metadata: `@scope <scope>` (the token must hold it for the tool to be offered; default `read` for a
 * query, `write` for a mutation) and `@title <text>`.
 */
export interface ToolDef {
  readonly name: string;
  readonly title: string | undefined;
  readonly description: string;
  readonly kind: 'read' | 'write';
  readonly scopes: readonly Scope[];
  /** The operation's source, sent as is. */
  readonly document: string;
  /** One zod schema per variable (what the SDK validates arguments with and lists as JSON Schema). */
  readonly input: Readonly<Record<string, z.ZodType>>;
}

const SCHEMA_PATH = fileURLToPath(new URL('../../schema.graphql', import.meta.url));
export const TOOLS_DIR = fileURLToPath(new URL('./tools/', import.meta.url));
const NAME_RE = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_INPUT_DEPTH = 6;

export function loadSchema(path = SCHEMA_PATH): GraphQLSchema {
  return buildSchema(readFileSync(path, 'utf8'));
}

/**
 * Every tool in `dir`, checked against the schema; a file that does not validate stops the bridge. Files
 * named `_*.graphql` are not tools: they hold fragments shared by tools (one receipt selection for every
 * write tool), and each tool's document carries the ones it spreads.
 */
export function loadTools(dir = TOOLS_DIR, schema = loadSchema()): ToolDef[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort();
  const shared = files
    .filter((f) => f.startsWith('_'))
    .flatMap((f) => parse(readFileSync(join(dir, f), 'utf8')).definitions)
    .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION);
  return files
    .filter((f) => !f.startsWith('_'))
    .map((f) => toolFromSource(basename(f, '.graphql'), readFileSync(join(dir, f), 'utf8'), schema, shared));
}

/** The tool's own source followed by the shared fragments it spreads. */
function withFragments(source: string, shared: readonly FragmentDefinitionNode[]): string {
  const spread = new Set([...source.matchAll(/\.\.\.\s*([_A-Za-z]\w*)/g)].map((m) => m[1]));
  return [source, ...shared.filter((f) => spread.has(f.name.value)).map((f) => print(f))].join('\n');
}

export function toolFromSource(
  name: string,
  own: string,
  schema: GraphQLSchema,
  shared: readonly FragmentDefinitionNode[] = [],
): ToolDef {
  const where = `tool ${name}`;
  if (!NAME_RE.test(name)) throw new Error(`${where}: the file name must be a tool name (a-z, 0-9, _)`);
  const source = withFragments(own, shared);
  const document = parse(source);
  const errors = validate(schema, document);
  if (errors.length) throw new Error(`${where}: ${errors.map((e) => e.message).join('; ')}`);
  const ops = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const op = ops[0];
  if (ops.length !== 1 || !op) throw new Error(`${where}: exactly one operation per file`);
  if (op.name?.value !== name) throw new Error(`${where}: the operation must be named ${name}`);
  if (op.operation === 'subscription') throw new Error(`${where}: subscriptions are not tools`);
  const { text, meta } = leadingComment(source);
  if (!text) throw new Error(`${where}: the leading comment (the tool's description) is missing`);
  const kind = op.operation === 'query' ? 'read' : 'write';
  const scopes = meta.get('scope') ?? [kind === 'read' ? 'read' : 'write'];
  for (const s of scopes)
    if (!(Scopes as readonly string[]).includes(s)) throw new Error(`${where}: unknown scope ${s}`);
  return Object.freeze({
    name,
    title: meta.get('title')?.join(' '),
    description: text,
    kind,
    scopes: scopes as Scope[],
    document: source,
    input: inputShape(schema, op),
  });
}

/** The `#` lines before the first statement: prose (paragraphs kept) and `@key value` metadata. */
function leadingComment(source: string): { text: string; meta: Map<string, string[]> } {
  const prose: string[] = [];
  const meta = new Map<string, string[]>();
  for (const line of source.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('#')) break;
    const body = t.replace(/^#\s?/, '');
    const m = /^@(\w+)\s+(.*)$/.exec(body);
    if (m) meta.set(m[1]!, [...(meta.get(m[1]!) ?? []), ...m[2]!.trim().split(/\s+/)]);
    else prose.push(body);
  }
  const text = prose
    .join('\n')
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s*\n\s*/g, ' ').trim())
    .filter(Boolean)
    .join('\n\n');
  return { text, meta };
}

/** One zod schema per variable, described by the schema field or argument it feeds. */
function inputShape(schema: GraphQLSchema, op: OperationDefinitionNode): Record<string, z.ZodType> {
  const described = variableDescriptions(schema, op);
  const shape: Record<string, z.ZodType> = {};
  for (const v of op.variableDefinitions ?? []) {
    const name = v.variable.name.value;
    const type = typeFromAST(schema, v.type) as GraphQLInputType | undefined;
    if (!type) throw new Error(`variable $${name}: unknown type`);
    let zt = zodOf(type, 0);
    const optional = !isNonNullType(type) || v.defaultValue !== undefined;
    const dflt =
      v.defaultValue && 'value' in v.defaultValue ? ` Default: ${String(v.defaultValue.value)}.` : '';
    const description = `${described.get(name) ?? ''}${dflt}`.trim();
    if (optional) zt = zt.optional();
    shape[name] = description ? zt.describe(description) : zt;
  }
  return shape;
}

function variableDescriptions(schema: GraphQLSchema, op: OperationDefinitionNode): Map<string, string> {
  const out = new Map<string, string>();
  const info = new TypeInfo(schema);
  visit(
    op,
    visitWithTypeInfo(info, {
      Argument(node) {
        const d = info.getArgument()?.description;
        if (node.value.kind === Kind.VARIABLE && d) out.set(node.value.name.value, d);
      },
      ObjectField(node) {
        const parent = info.getParentInputType();
        const named = parent ? getNamedType(parent) : undefined;
        const d = isInputObjectType(named) ? named.getFields()[node.name.value]?.description : undefined;
        if (node.value.kind === Kind.VARIABLE && d) out.set(node.value.name.value, d);
      },
    }),
  );
  return out;
}

/** GraphQL input type → zod. Nullable fields are optional (GraphQL null means "not given"). */
function zodOf(type: GraphQLInputType, depth: number): z.ZodType {
  if (depth > MAX_INPUT_DEPTH) throw new Error('input type nests too deeply for a tool');
  if (isNonNullType(type)) return zodOf(type.ofType, depth);
  if (isListType(type)) return z.array(zodOf(type.ofType, depth + 1));
  if (isEnumType(type)) {
    const values = type.getValues().map((v) => v.name);
    return z.enum(values as [string, ...string[]]);
  }
  if (isInputObjectType(type)) {
    const shape: Record<string, z.ZodType> = {};
    for (const f of Object.values(type.getFields())) {
      let zt = zodOf(f.type, depth + 1);
      if (!isNonNullType(f.type) || f.defaultValue !== undefined) zt = zt.optional();
      shape[f.name] = f.description ? zt.describe(f.description) : zt;
    }
    return z.object(shape);
  }
  if (isScalarType(type)) return scalar(type.name);
  throw new Error('unsupported input type');
}

function scalar(name: string): z.ZodType {
  switch (name) {
    case 'Int':
      return z.number().int();
    case 'Float':
      return z.number();
    case 'Boolean':
      return z.boolean();
    case 'DateTime':
      return z.string().describe('an instant, ISO-8601 with an offset, e.g. 2026-03-01T12:00:00Z');
    case 'JSON':
      return z.record(z.string(), z.unknown());
    default:
      return z.string(); // String, ID
  }
}
