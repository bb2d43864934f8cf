#!/usr/bin/env node
// Kubernetes JSON schemas for kubeconform, made from Kubernetes' own OpenAPI v2 document (swagger.json) as
// the k8s.io/kubernetes Go module carries it (api/openapi-spec/), fetched through the Go module proxy by
// scripts/chart-tools.sh. kubeconform's default schema host is unreachable here; this writes the same layout
// it would download: one standalone file per kind, `<kind>-<group>-<version>.json` (core: `<kind>-v1.json`),
// every `$ref` inlined, every object closed (`additionalProperties: false`, what the "-strict" schemas
// do), and Kubernetes' two string-or-number types (IntOrString, Quantity) accepted as either.
//
// Usage: node scripts/k8s-schemas.mjs <swagger.json> <out-dir>
// No npm dependencies (it runs before `npm ci` in CI).

import fs from 'node:fs';
import path from 'node:path';

const [swaggerPath, outDir] = process.argv.slice(2);
if (!swaggerPath || !outDir) {
  process.stderr.write('usage: k8s-schemas.mjs <swagger.json> <out-dir>\n');
  process.exit(2);
}

const definitions = JSON.parse(fs.readFileSync(swaggerPath, 'utf8')).definitions;
const REF = '#/definitions/';

// Types whose JSON form is a string or a number; swagger.json declares them as `type: string` plus a format.
// (Quantity: `cpu: 1` or `cpu: 500m`; IntOrString: `port: 80` or `port: http`.)
const STRING_OR_NUMBER = new Map([
  ['io.k8s.apimachinery.pkg.util.intstr.IntOrString', 'integer'],
  ['io.k8s.apimachinery.pkg.api.resource.Quantity', 'number'],
]);

/** Inline `$ref`s. A definition met again below itself (JSONSchemaProps is recursive) becomes `{}`. */
function expand(schema, stack) {
  if (Array.isArray(schema)) return schema.map((s) => expand(s, stack));
  if (!schema || typeof schema !== 'object') return schema;
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.slice(REF.length);
    const numeric = STRING_OR_NUMBER.get(name);
    if (numeric) return { oneOf: [{ type: 'string' }, { type: numeric }] };
    if (stack.includes(name)) return {};
    const target = definitions[name];
    if (!target) throw new Error(`unresolved $ref ${schema.$ref}`);
    const { $ref: _ref, ...rest } = schema;
    return { ...expand(target, [...stack, name]), ...expand(rest, stack) };
  }
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    // Property names are data, not keywords: expand each property's schema, not the map itself as one.
    out[k] = k === 'properties' ? mapValues(v, (p) => expand(p, stack)) : expand(v, stack);
  }
  return close(out);
}

const mapValues = (o, f) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

/** Strict like kubeconform's "-strict" schemas; optional scalars may be null, as the API server accepts. */
function close(schema) {
  if (schema.properties && schema.additionalProperties === undefined) schema.additionalProperties = false;
  if (schema.properties) {
    const required = new Set(schema.required ?? []);
    for (const [name, prop] of Object.entries(schema.properties)) {
      if (!required.has(name) && typeof prop.type === 'string') prop.type = [prop.type, 'null'];
    }
  }
  return schema;
}

fs.mkdirSync(outDir, { recursive: true });
let written = 0;
for (const [name, def] of Object.entries(definitions)) {
  for (const gvk of def['x-kubernetes-group-version-kind'] ?? []) {
    // Only top-level kinds that carry apiVersion/kind (not the shared meta types listed under many GVKs).
    if (!def.properties?.kind || !def.properties?.apiVersion || name.startsWith('io.k8s.apimachinery.'))
      continue;
    const group = gvk.group === '' ? '' : `-${gvk.group.split('.')[0].toLowerCase()}`;
    const file = `${gvk.kind.toLowerCase()}${group}-${gvk.version.toLowerCase()}.json`;
    const schema = expand(def, [name]);
    schema.$schema = 'http://json-schema.org/schema#';
    // apiVersion and kind must name this very kind (kubeconform picks the file by them; this proves it).
    schema.properties.apiVersion = {
      type: 'string',
      enum: [gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`],
    };
    schema.properties.kind = { type: 'string', enum: [gvk.kind] };
    fs.writeFileSync(path.join(outDir, file), JSON.stringify(schema));
    written++;
  }
}
process.stdout.write(`k8s-schemas: ${written} kinds written to ${outDir}\n`);
