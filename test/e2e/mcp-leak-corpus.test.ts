import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { RecordStatuses } from '../../src/domain/model.ts';
import {
  CALLERS,
  entitled,
  grantsOf,
  inBatches,
  NAMESPACES,
  PURPOSES,
  QUERIES,
  QUERY_NAMESPACES,
  recallOracle,
  recordsOracle,
  setupLeakCorpus,
  sorted,
  state,
  tenants,
  truth,
  VALID_AT,
  type Caller,
  type ValidAtKey,
} from '../support/leak-corpus.ts';
import { bridgesFor, call, httpClient, mcpAppConfig, type McpStack } from '../support/mcp.ts';

/**
 * The whole leak corpus (test/support/leak-corpus.ts, the same records, grants, callers and oracle as
 * leak-corpus.test.ts) run again through the MCP tools, as an agent reaches them: the streamable HTTP
 * bridge, each caller with a token minted for the bridge's audience (exchanged by the bridge for an API
 * token of the same subject and delegation chain). `query` must list exactly what the pure entitlement
 * model allows, `recall` must return nothing it does not allow, and `expand` of every record the caller
 * may not read must be null: 0 invisible items. (stdio runs the same tool code with the user's own token;
 * mcp-leak.test.ts covers both transports on a focused set.)
 */

let stack: McpStack;
const clients = new Map<string, Client>();
const client = (c: Caller) => clients.get(c.name)!;

beforeAll(async () => {
  const cfg = await mcpAppConfig();
  const { app } = await setupLeakCorpus({ appConfig: cfg.env });
  stack = await bridgesFor(app, cfg);
  for (const c of CALLERS) {
    const token = await app.token({
      tenant: tenants[c.tenant],
      sub: c.sub,
      scopes: ['read'],
      ttlSeconds: 3600,
      audience: cfg.audience,
      ...(c.actor ? { act: { sub: c.actor, iss: state.iss } } : {}),
    });
    const cl = await httpClient(stack.readOnlyBridge.url, token);
    stack.clients.push(cl);
    clients.set(c.name, cl);
  }
}, 900_000); // seeding the corpus through the whole pipeline: minutes on a shared 2-core machine
afterAll(async () => stack?.stop());

type Page = {
  totalCount: number;
  pageInfo: { endCursor: string | null; hasNextPage: boolean };
  nodes: Array<{ id: string }>;
};

describe('the leak corpus through the MCP tools', () => {
  it('query lists exactly what each caller may read, in every namespace, status set and world time', async () => {
    const cases = CALLERS.flatMap((c) =>
      NAMESPACES.flatMap((namespace) =>
        [
          { statuses: undefined, at: undefined },
          { statuses: [...RecordStatuses], at: undefined },
          { statuses: undefined, at: VALID_AT.past },
          { statuses: undefined, at: VALID_AT.future },
        ].map((v) => ({ c, namespace, ...v })),
      ),
    );
    const wrong: string[] = [];
    await inBatches(cases, 8, async ({ c, namespace, statuses, at }) => {
      const label = `query ${c.name} ${namespace} ${statuses ? 'all' : 'default'} ${at ?? 'now'}`;
      const listed: string[] = [];
      let after: string | null = null;
      let total = -1;
      for (let page = 0; page < 10; page++) {
        const r = await call(client(c), 'query', {
          namespace,
          ...(statuses ? { statuses } : {}),
          ...(at ? { validAt: at } : {}),
          first: 100,
          ...(after ? { after } : {}),
        });
        expect(r.isError, `${label}: ${r.codes.join()}`).toBe(false);
        const p = r.data['records'] as Page;
        total = p.totalCount;
        listed.push(...p.nodes.map((n) => n.id));
        if (!p.pageInfo.hasNextPage) break;
        after = p.pageInfo.endCursor;
      }
      const want = recordsOracle(c, namespace, statuses, at);
      if (sorted(listed).join() !== sorted(want).join() || total !== want.size)
        wrong.push(`${label}: listed ${listed.length} (total ${total}), allowed ${want.size}`);
    });
    console.log(`MCP query: ${cases.length} cases, ${wrong.length} differ from the oracle`);
    expect(wrong).toEqual([]);
  }, 600_000);

  it('recall returns nothing invisible, for every caller, purpose, namespace and world time', async () => {
    const cases = CALLERS.flatMap((c) =>
      PURPOSES.flatMap((purpose) =>
        QUERY_NAMESPACES.flatMap((namespace) =>
          (Object.keys(VALID_AT) as ValidAtKey[]).map((when) => ({ c, purpose, namespace, when })),
        ),
      ),
    );
    const invisible: string[] = [];
    let items = 0;
    await inBatches(cases, 8, async ({ c, purpose, namespace, when }, i) => {
      const at = VALID_AT[when];
      const label = `recall ${c.name} ${purpose} ${namespace} ${when}`;
      const r = await call(client(c), 'recall', {
        query: QUERIES[i % QUERIES.length],
        namespace,
        purpose,
        limit: 50,
        tokenBudget: 20000,
        ...(at ? { validAt: at } : {}),
      });
      expect(r.isError, `${label}: ${r.codes.join()}`).toBe(false);
      const got = (r.data['recall'] as { items: Array<{ record: { id: string } }> }).items;
      const allowed = recallOracle(c, purpose, namespace, at ?? new Date().toISOString());
      items += got.length;
      for (const it of got) if (!allowed.has(it.record.id)) invisible.push(`${label}: ${it.record.id}`);
      // not vacuous: where the caller may see something, recall gives something
      if (allowed.size > 0) expect(got.length, label).toBeGreaterThan(0);
    });
    console.log(`MCP recall: ${cases.length} cases, ${items} items, ${invisible.length} invisible`);
    expect(invisible).toEqual([]);
  }, 600_000);

  it('expand of every record a caller may not read is null', async () => {
    const cases = CALLERS.flatMap((c) => {
      const gs = grantsOf(c, undefined);
      const own = truth[c.tenant].filter((r) => !entitled(gs, r));
      const other = truth[c.tenant === 'T' ? 'U' : 'T'];
      return [...own, ...other].map((r) => ({ c, id: r.id }));
    });
    const named: string[] = [];
    await inBatches(cases, 8, async ({ c, id }) => {
      const r = await call(client(c), 'expand', { handle: `h:${id}.0000000000000000` });
      expect(r.isError, `expand ${c.name} ${id}: ${r.codes.join()}`).toBe(false);
      if (r.data['expand'] !== null) named.push(`${c.name}: ${id}`);
    });
    console.log(`MCP expand: ${cases.length} invisible records tried, ${named.length} returned`);
    expect(cases.length).toBeGreaterThan(0);
    expect(named).toEqual([]);
  }, 600_000);
});
