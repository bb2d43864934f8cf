import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import type { Config } from '../config/index.ts';
import { createLogger } from '../adapters/logger.ts';
import { httpCuratorDeps } from '../client/handoff.ts';
import { commandTokenSource } from '../client/token-command.ts';
import { curateAll } from '../handoff/curator.ts';
import { runHandoffUntilSignal } from '../handoff-process.ts';

/** `muninn handoff serve`: the handoff contract's private listener (src/handoff-process.ts). */
export async function handoffCmd(args: string[], c: Config): Promise<number> {
  if (args[0] !== 'serve' || args.length > 1) {
    process.stderr.write('usage: muninn handoff serve\n');
    return 2;
  }
  await runHandoffUntilSignal(c);
  return 0;
}

/**
 * `muninn curate [--max N]`: the curator as a client of /handoff (MUNINN_HANDOFF_URL, a fresh token per call
 * from MUNINN_HANDOFF_TOKEN_COMMAND) and of the main API (MUNINN_GRAPHQL_URL, MUNINN_CURATOR_TOKEN). The
 * drafts land in the curator token's tenant.
 */
export async function curateCmd(args: string[], c: Config): Promise<number> {
  const { values } = parseArgs({ args, options: { max: { type: 'string' } } });
  const max = values.max === undefined ? undefined : Number(values.max);
  if (max !== undefined && !(Number.isSafeInteger(max) && max > 0)) {
    process.stderr.write('--max must be a positive integer\n');
    return 2;
  }
  const h = c.handoff;
  if (!h.tokenCommand || !h.curatorToken) {
    process.stderr.write(
      'curate needs MUNINN_HANDOFF_TOKEN_COMMAND (prints one handoff token per call) and MUNINN_CURATOR_TOKEN (its token for the API)\n',
    );
    return 2;
  }
  const curatorToken = h.curatorToken;
  const logger = createLogger(c.log.level === 'info' ? 'warn' : c.log.level);
  const outcomes = await curateAll(
    httpCuratorDeps({
      handoffUrl: h.url,
      handoffToken: commandTokenSource(h.tokenCommand),
      apiUrl: c.client.graphqlUrl,
      apiToken: () => Promise.resolve(curatorToken),
      holder: `curator@${hostname()}:${process.pid}`,
      namespace: h.curatorNamespace,
      logger,
    }),
    max,
  );
  process.stdout.write(`${JSON.stringify(outcomes)}\n`);
  return 0;
}
