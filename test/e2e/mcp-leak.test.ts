import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { covers, effectiveGrants } from '../../src/domain/access.ts';
import type { GrantState } from '../../src/domain/fold.ts';
import { Sensitivities, type Sensitivity } from '../../src/domain/model.ts';
import type { Principal } from '../../src/domain/principal.ts';
import { freshTenant, PROPOSE, proposal } from '../support/harness.ts';
import { call, mcpTransports, startMcpStack, type McpStack } from '../support/mcp.ts';

/**
 * A focused leak set through the MCP tools (the full corpus runs against GraphQL in leak-corpus.test.ts):
 * eight records over two namespaces and four labels, callers with a narrowing grant, a purpose-bound grant,
 * no grant (the tenant default) and another tenant. For every caller, over both transports, `query` lists
 * exactly what the pure entitlement model (src/domain/access.ts) allows, `recall` returns nothing else,
 * and `expand` of every other record is null: 0 invisible items.
 */

const GRANT = `mutation G($input: GrantAccessInput!) { grantAccess(input: $input) { outcome grantId } }`;
const APPROVE = `mutation A($input: ApproveInput!) { approve(input: $input) { outcome } }`;
const TEXTS = [
  'Zephyr failover drills run every quarter in the orion region.',
  'The zephyr billing export lands in the vega bucket at midnight.',
  'Zephyr on-call engineers escalate paging storms to the lyra channel.',
  'Backups of the zephyr ledger are encrypted with the draco key.',
  'Zephyr canary deploys hold for twenty minutes before promotion.',
  'The zephyr search cluster shards customer data by the cygnus scheme.',
  'Zephyr incident reviews are published within five business days.',
  'Capacity for zephyr workers is planned against the pavo forecast.',
];
const NAMESPACES = ['acme/leak/a', 'acme/leak/b'] as const;

let stack: McpStack;
const tenant = freshTenant('mcpleak');
const otherTenant = freshTenant('mcpleak-other');
const truth: Array<{ id: string; namespace: string; sensitivity: Sensitivity }> = [];
const held: GrantState[] = [];

interface Caller {
  readonly sub: string;
  readonly tenant: string;
  readonly purpose: string;
}
const CALLERS: Caller[] = [
  { sub: 'carol', tenant, purpose: 'code-change' }, // acme/leak/a up to INTERNAL
  { sub: 'erin', tenant, purpose: 'incident' }, // acme/leak/b up to RESTRICTED, for incidents only
  { sub: 'erin', tenant, purpose: 'code-change' }, // … so nothing for another purpose
  { sub: 'dave', tenant, purpose: 'code-change' }, // no grant: the tenant up to CONFIDENTIAL
  { sub: 'mallory', tenant: otherTenant, purpose: 'code-change' }, // another tenant
];

beforeAll(async () => {
  stack = await startMcpStack();
  const { app } = stack;
  const admin = await app.token({ tenant, sub: 'root', scopes: ['admin'] });
  const reviewer = await app.token({ tenant, sub: 'rev', scopes: ['admin'] });
  await Promise.all(
    TEXTS.map(async (text, i) => {
      const namespace = NAMESPACES[i % 2]!;
      const sensitivity = Sensitivities[Math.floor(i / 2)]!;
      const r = await app.gql<{ propose: { outcome: string; recordId: string; version: number } }>(
        admin,
        PROPOSE,
        {
          input: proposal({
            namespace,
            sensitivity,
            statement: { subject: `zephyr-${i}`, predicate: 'notes', object: `item ${i}`, text },
          }),
        },
      );
      expect(r.errors).toBeUndefined();
      const receipt = r.data!.propose;
      if (receipt.outcome === 'QUEUED') {
        const a = await app.gql(reviewer, APPROVE, {
          input: { proposalId: receipt.recordId, expectedVersion: receipt.version },
        });
        expect(a.errors).toBeUndefined();
      } else expect(receipt.outcome).toBe('ADMITTED');
      truth.push({ id: receipt.recordId, namespace, sensitivity });
    }),
  );
  const grant = async (sub: string, namespace: string, max: Sensitivity, purposes: string[] | null) => {
    const r = await app.gql<{ grantAccess: { outcome: string; grantId: string } }>(admin, GRANT, {
      input: {
        grantee: { sub },
        namespace,
        maxSensitivity: max,
        ...(purposes ? { purposes } : {}),
        reason: 'mcp leak set',
        idempotencyKey: randomUUID(),
      },
    });
    expect(r.data!.grantAccess.outcome).toBe('ADMITTED');
    held.push({
      tenant,
      id: r.data!.grantAccess.grantId,
      grantee: `${app.config.auth.issuer}|${sub}`,
      namespace,
      maxSensitivity: max,
      purposes,
      grantedBy: `${app.config.auth.issuer}|root`,
      grantedAt: new Date().toISOString(),
      revokedAt: null,
      revokeReason: null,
    });
  };
  await grant('carol', 'acme/leak/a', 'INTERNAL', null);
  await grant('erin', 'acme/leak/b', 'RESTRICTED', ['incident']);
});
afterAll(async () => stack?.stop());

/** What the caller may see for a purpose (undefined: a structured read, which states none). */
function oracle(c: Caller, purpose: string | undefined): Set<string> {
  if (c.tenant !== tenant) return new Set();
  const p: Principal = {
    iss: stack.app.config.auth.issuer,
    sub: c.sub,
    tenant,
    scopes: new Set(['read']),
    actors: [],
    tokenId: undefined,
    expiresAt: undefined,
  };
  const gs = effectiveGrants(p, purpose, held, { defaultClearance: 'CONFIDENTIAL' }, false);
  const rank = (s: Sensitivity) => Sensitivities.indexOf(s);
  return new Set(
    truth
      .filter((r) =>
        gs.some((g) => covers(g.root, r.namespace) && rank(r.sensitivity) <= rank(g.maxSensitivity)),
      )
      .map((r) => r.id),
  );
}

describe.each(['http', 'stdio'] as const)('MCP leak set over %s', (name) => {
  it.each(CALLERS)('$sub ($purpose, $tenant): query, recall and expand name nothing invisible', async (c) => {
    const t = mcpTransports(() => stack, c.tenant).find((x) => x.name === name)!;
    const client = await t.connect({ sub: c.sub, scopes: ['read'], tenant: c.tenant });

    const listed = await call(client, 'query', { namespace: 'acme/leak', first: 50 });
    const page = listed.data['records'] as { totalCount: number; nodes: Array<{ id: string }> };
    const structured = oracle(c, undefined);
    expect(page.nodes.map((x) => x.id).sort()).toEqual([...structured].sort());
    expect(page.totalCount).toBe(structured.size);

    const recalled = await call(client, 'recall', {
      query: 'zephyr runbook failover billing backups canary incidents capacity',
      namespace: 'acme/leak',
      purpose: c.purpose,
      limit: 50,
      tokenBudget: 6000,
    });
    const items = (recalled.data['recall'] as { items: Array<{ record: { id: string } }> }).items;
    const allowed = oracle(c, c.purpose);
    const invisible = items.filter((i) => !allowed.has(i.record.id));
    expect(invisible).toEqual([]);
    if (allowed.size > 0) expect(items.length).toBeGreaterThan(0);

    for (const r of truth.filter((x) => !structured.has(x.id))) {
      const e = await call(client, 'expand', { handle: `h:${r.id}.0000000000000000` });
      expect(e.data['expand'], r.id).toBeNull();
    }
  });
});
