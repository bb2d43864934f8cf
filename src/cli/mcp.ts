import { parseArgs } from 'node:util';
import { ConfigError, type Config } from '../config/index.ts';
import { createLogger } from '../adapters/logger.ts';
import { tokenVerifier } from '../compose.ts';
import { tokenExchanger } from '../mcp/exchange.ts';
import { startMcpHttp, type RunningMcpHttp } from '../mcp/http.ts';
import { serveMcpStdio } from '../mcp/stdio.ts';
import { loadTools } from '../mcp/tools.ts';
import type { Logger } from '../ports/logger.ts';

/** `muninn mcp [--transport stdio|http]`: the bridge is a client of the API; it needs no Neo4j or Kafka. */
export async function mcpCmd(args: string[], c: Config): Promise<number> {
  const { values } = parseArgs({ args, options: { transport: { type: 'string', default: 'stdio' } } });
  if (values.transport === 'stdio') {
    // stdout is the MCP channel: logs go to stderr, warnings and worse only.
    await serveMcpStdioBridge(c, createLogger(c.log.level === 'info' ? 'warn' : c.log.level));
    return 0;
  }
  if (values.transport !== 'http') {
    process.stderr.write('mcp --transport is stdio or http\n');
    return 2;
  }
  const bridge = await startMcpHttpBridge(c, createLogger(c.log.level));
  process.stderr.write(`muninn mcp listening on ${bridge.url}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await bridge.stop();
  return 0;
}

/** The bridge over streamable HTTP: its own port, tokens for its own audience, exchanged per caller. */
export function startMcpHttpBridge(config: Config, logger: Logger): Promise<RunningMcpHttp> {
  const { exchangeUrl, clientSecret } = config.mcp;
  if (!exchangeUrl || !clientSecret)
    throw new ConfigError([
      ...(clientSecret
        ? []
        : ['MUNINN_MCP_CLIENT_SECRET: the HTTP bridge needs its client secret to exchange tokens']),
      ...(exchangeUrl ? [] : ['MUNINN_MCP_EXCHANGE_URL: the token endpoint (required in production)']),
    ]);
  return startMcpHttp({
    host: config.mcp.host,
    port: config.mcp.port,
    resource: config.mcp.audience,
    authorizationServers: config.mcp.authorizationServers,
    verifier: tokenVerifier(config, config.mcp.audience),
    exchanger: tokenExchanger({
      url: exchangeUrl,
      clientId: config.mcp.clientId,
      clientSecret,
      audience: config.auth.audience,
    }),
    graphqlUrl: config.client.graphqlUrl,
    tools: loadTools(),
    writeTools: config.mcp.writeTools,
    corsOrigins: config.corsOrigins,
    maxBodyBytes: config.http.limits.maxBodyBytes,
    logger,
  });
}

/** The bridge over stdio with the user's own token (MUNINN_TOKEN), until stdin closes. */
export function serveMcpStdioBridge(config: Config, logger: Logger): Promise<void> {
  return serveMcpStdio({
    token: config.client.token,
    graphqlUrl: config.client.graphqlUrl,
    tools: loadTools(),
    writeTools: config.mcp.writeTools,
    logger,
  });
}
