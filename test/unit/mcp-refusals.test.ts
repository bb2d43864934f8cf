import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import type { GraphQLOutcome } from '../../src/client/graphql.ts';
import { refusalWait, runRetrying, type RetryOptions } from '../../src/mcp/refusals.ts';
import { buildMcpServer, type RunOperation } from '../../src/mcp/server.ts';
import { loadTools } from '../../src/mcp/tools.ts';
import { silentLogger, type Logger } from '../../src/ports/logger.ts';

/**
 * The bridge runs a refused call (RATE_LIMITED) again after the refusal's retryAfterMs, within a budget,
 * before the agent sees it; anything else goes to the agent at once.
 */
const refused = (retryAfterMs?: number): GraphQLOutcome & { ok: false } => ({
  ok: false,
  errors: [
    {
      code: 'RATE_LIMITED',
      message: `overloaded: lag; retry after ${retryAfterMs ?? '?'} ms`,
      details: retryAfterMs === undefined ? {} : { retryAfterMs },
    },
  ],
});
const answered: GraphQLOutcome = { ok: true, data: { propose: { outcome: 'PENDING' } } };
const unavailable: GraphQLOutcome & { ok: false } = {
  ok: false,
  errors: [{ code: 'UNAVAILABLE', message: 'down' }],
};

/** A run answering `outcomes` in turn (the last one again once they run out), and the calls it saw. */
function scripted(...outcomes: GraphQLOutcome[]) {
  const calls: Array<Record<string, unknown>> = [];
  const run: RunOperation = async (_tool, variables) => {
    calls.push(variables);
    return outcomes[Math.min(calls.length - 1, outcomes.length - 1)]!;
  };
  return { run, calls };
}

function sleeps(): { sleep: (ms: number) => Promise<void>; slept: number[] } {
  const slept: number[] = [];
  return { slept, sleep: async (ms) => void slept.push(ms) };
}

const tool = loadTools().find((t) => t.name === 'remember')!;

describe('refusals are run again before the agent sees them', () => {
  it('a call refused once is run again after its retryAfterMs and answers', async () => {
    const { run, calls } = scripted(refused(120), answered);
    const s = sleeps();
    const out = await runRetrying(run, tool, { a: 1 }, { budgetMs: 5_000, maxRetries: 4, sleep: s.sleep });
    expect(out).toEqual({ outcome: answered, retries: 1, waitedMs: 120 });
    expect(calls).toEqual([{ a: 1 }, { a: 1 }]);
    expect(s.slept).toEqual([120]);
  });

  it('refused every time: run again until the budget would be passed, then the refusal', async () => {
    const { run, calls } = scripted(refused(400));
    const s = sleeps();
    const out = await runRetrying(run, tool, {}, { budgetMs: 1_000, maxRetries: 9, sleep: s.sleep });
    expect(out).toEqual({ outcome: refused(400), retries: 2, waitedMs: 800 });
    expect(s.slept).toEqual([400, 400]); // a third wait would make 1,200 ms
    expect(calls).toHaveLength(3);
  });

  it('at most maxRetries runs again, whatever the budget', async () => {
    const { run, calls } = scripted(refused(1));
    const s = sleeps();
    await runRetrying(run, tool, {}, { budgetMs: 60_000, maxRetries: 2, sleep: s.sleep });
    expect(calls).toHaveLength(3);
  });

  it('anything but RATE_LIMITED goes to the agent at once (UNAVAILABLE may follow an append)', async () => {
    for (const outcome of [answered, unavailable]) {
      const { run, calls } = scripted(outcome, answered);
      const s = sleeps();
      const out = await runRetrying(run, tool, {}, { budgetMs: 5_000, maxRetries: 4, sleep: s.sleep });
      expect(out).toEqual({ outcome, retries: 0, waitedMs: 0 });
      expect(calls).toHaveLength(1);
      expect(s.slept).toEqual([]);
    }
    const mixed: GraphQLOutcome = { ok: false, errors: [...refused(10).errors, ...unavailable.errors] };
    expect(refusalWait(mixed)).toBeNull();
  });

  it('a refusal without retryAfterMs waits 250 ms', () => {
    expect(refusalWait(refused())).toBe(250);
    expect(refusalWait(refused(33.2))).toBe(34);
  });
});

describe('through the MCP server', () => {
  async function connect(run: RunOperation, retries: RetryOptions, logger: Logger = silentLogger) {
    const server = buildMcpServer({
      tools: [tool],
      scopes: new Set(['read', 'write']),
      writeTools: true,
      run,
      logger,
      retries,
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'test', version: '0' });
    await Promise.all([server.connect(a), client.connect(b)]);
    return client;
  }
  const args = {
    namespace: 'acme',
    class: 'FACT',
    statement: {
      subject: 'billing API',
      predicate: 'uses',
      object: 'Redis',
      text: 'The billing API uses Redis.',
    },
    purpose: 'test',
    idempotencyKey: 'k-1',
  };

  it('a tool call refused once answers the agent with the second run, and its log line counts the retry', async () => {
    const { run, calls } = scripted(refused(5), answered);
    const lines: Array<Record<string, unknown>> = [];
    const logger = { ...silentLogger, info: (o: object) => void lines.push(o as Record<string, unknown>) };
    const client = await connect(run, { budgetMs: 1_000, maxRetries: 4 }, logger);
    const res = await client.callTool({ name: 'remember', arguments: args });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual(answered.ok && answered.data);
    expect(calls).toHaveLength(2);
    expect(lines).toEqual([expect.objectContaining({ tool: 'remember', ok: true, retries: 1, waitedMs: 5 })]);
    await client.close();
  });

  it('past the budget the agent gets the refusal with its retryAfterMs', async () => {
    const { run, calls } = scripted(refused(40));
    const client = await connect(run, { budgetMs: 50, maxRetries: 4 });
    const res = await client.callTool({ name: 'remember', arguments: args });
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toEqual({
      errors: [{ code: 'RATE_LIMITED', message: 'overloaded: lag; retry after 40 ms', retryAfterMs: 40 }],
    });
    expect(calls).toHaveLength(2);
    await client.close();
  });
});
