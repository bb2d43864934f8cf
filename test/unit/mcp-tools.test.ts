import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadSchema, loadTools, toolFromSource } from '../../src/mcp/tools.ts';
import { offeredTools } from '../../src/mcp/server.ts';
import { claimedScopes } from '../../src/mcp/stdio.ts';
import type { Scope } from '../../src/domain/principal.ts';
import { ALL_TOOLS, WRITE_TOOLS } from '../support/mcp-tools.ts';

const schema = loadSchema();
const tools = loadTools();
const names = (ts: ReadonlyArray<{ name: string }>) => ts.map((t) => t.name).sort();

describe('MCP tools are the GraphQL operations in src/mcp/tools', () => {
  it('every file validates against schema.graphql and becomes a tool named after it', () => {
    expect(names(tools)).toEqual(ALL_TOOLS);
    for (const t of tools) expect(t.description.length, t.name).toBeGreaterThan(40);
  });

  it('write tools share one receipt selection: each spreads ...Receipt and carries its definition once', () => {
    for (const t of tools.filter((x) => WRITE_TOOLS.includes(x.name))) {
      expect(t.document, t.name).toContain('...Receipt');
      expect(t.document.match(/fragment Receipt on ProposalReceipt/g), t.name).toHaveLength(1);
    }
    for (const t of tools.filter((x) => !WRITE_TOOLS.includes(x.name)))
      expect(t.document, t.name).not.toContain('fragment Receipt');
  });

  it('variables become the input schema: required, optional, enums and schema descriptions', () => {
    const recall = tools.find((t) => t.name === 'recall')!;
    const json = z.toJSONSchema(z.object(recall.input)) as {
      required: string[];
      properties: Record<string, { description?: string; items?: { enum?: string[] } }>;
    };
    expect(json.required).toEqual(['query', 'namespace', 'purpose']);
    expect(json.properties['purpose']!.description).toBe('Why it asks (entitlement and ranking read it).');
    expect(json.properties['classes']!.items!.enum).toContain('NORMATIVE');
    const parsed = z
      .object(recall.input)
      .safeParse({ query: 'q', namespace: 'acme', purpose: 'p', limit: 1.5 });
    expect(parsed.success).toBe(false);
  });

  it('queries are read tools, mutations write tools; @scope names the scope', () => {
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('query')).toMatchObject({ kind: 'read', scopes: ['read'] });
    expect(byName.get('remember')).toMatchObject({ kind: 'write', scopes: ['write'] });
    expect(byName.get('review_queue')).toMatchObject({ kind: 'read', scopes: ['review'] });
    expect(byName.get('approve')).toMatchObject({ kind: 'write', scopes: ['review'] });
  });

  it('refuses a file without a description, with a mismatched name, an invalid operation or an unknown scope', () => {
    const op = 'query probe($id: ID!) { record(id: $id) { id } }';
    expect(() => toolFromSource('probe', op, schema)).toThrow(/leading comment/);
    expect(() => toolFromSource('other', `# A probe.\n${op}`, schema)).toThrow(/must be named other/);
    expect(() => toolFromSource('probe', '# A probe.\nquery probe { nope }', schema)).toThrow(/nope/);
    expect(() => toolFromSource('probe', `# A probe.\n# @scope root\n${op}`, schema)).toThrow(
      /unknown scope/,
    );
    expect(() => toolFromSource('Probe', `# A probe.\n${op}`, schema)).toThrow(/tool name/);
  });
});

describe('which tools a caller is offered', () => {
  const offer = (scopes: Scope[], writeTools: boolean) =>
    names(offeredTools({ tools, scopes: new Set(scopes), writeTools }));

  it('read tools by default; write tools only when enabled; review tools only with the review scope', () => {
    expect(offer(['read', 'write'], false)).toEqual(['expand', 'query', 'recall']);
    expect(offer(['read', 'write'], true)).toEqual([
      'expand',
      'feedback',
      'ingest_episode',
      'query',
      'recall',
      'remember',
    ]);
    expect(offer(['read', 'review'], false)).toEqual(['expand', 'query', 'recall', 'review_queue']);
    expect(offer(['admin'], true)).toHaveLength(9);
  });

  it('stdio reads the claimed scopes only to choose tools; no token or garbage means read tools only', () => {
    const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
    expect([...claimedScopes(jwt({ scope: 'read review bogus' }))].sort()).toEqual(['read', 'review']);
    expect([...claimedScopes(jwt({ scp: ['write'] }))].sort()).toEqual(['read', 'write']);
    expect([...claimedScopes(undefined)]).toEqual(['read']);
    expect([...claimedScopes('not-a-jwt')]).toEqual(['read']);
  });
});
