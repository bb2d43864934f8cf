import { MINILM_THRESHOLDS, thresholdsFor } from '../domain/similarity.ts';
import { commaList, type Settings } from './fields.ts';
import type { Config } from './types.ts';

/** Where the development signing key lives; `muninn token` creates it on first use. */
export const devJwksPath = (stateDir: string): string => `${stateDir}/dev-keys/jwks.json`;

export function httpSection(c: Settings): Config['http'] {
  return {
    host: c.MUNINN_HOST,
    port: c.MUNINN_PORT,
    introspection: c.MUNINN_INTROSPECTION ?? c.MUNINN_ENV !== 'production',
    console: c.MUNINN_CONSOLE ?? c.MUNINN_ENV !== 'production',
    acceptors: c.MUNINN_HTTP_ACCEPTORS,
    limits: {
      maxDepth: c.MUNINN_MAX_DEPTH,
      maxAliases: c.MUNINN_MAX_ALIASES,
      maxTokens: c.MUNINN_MAX_TOKENS,
      maxCost: c.MUNINN_MAX_COST,
      maxBodyBytes: c.MUNINN_MAX_BODY_BYTES,
      maxTextChars: c.MUNINN_MAX_TEXT_CHARS,
      maxWsSubscriptions: c.MUNINN_WS_MAX_SUBSCRIPTIONS,
    },
    awaitTimeoutMs: c.MUNINN_AWAIT_TIMEOUT_MS,
    overload: {
      maxInFlight: c.MUNINN_WRITE_MAX_INFLIGHT,
      maxLagMs: c.MUNINN_WRITE_MAX_LAG_MS,
      maxBusy: c.MUNINN_WRITE_MAX_BUSY,
      busyFloor: c.MUNINN_WRITE_BUSY_FLOOR,
    },
    subjectTurns: c.MUNINN_SUBJECT_TURNS,
  };
}

export function kafkaSection(c: Settings): Config['kafka'] {
  return {
    brokers: c.KAFKA_BROKERS,
    clientId: c.KAFKA_CLIENT_ID,
    topic: c.MUNINN_LEDGER_TOPIC,
    dlqTopic: c.MUNINN_DLQ_TOPIC,
    partitions: c.MUNINN_LEDGER_PARTITIONS,
    groupId: c.MUNINN_PROJECTOR_GROUP,
    batchMax: c.MUNINN_PROJECTOR_BATCH_MAX,
    rebuildBatchMax: c.MUNINN_REBUILD_BATCH_MAX,
    sessionTimeoutMs: c.MUNINN_PROJECTOR_SESSION_TIMEOUT_MS,
    stallAfterMs: c.MUNINN_PROJECTOR_STALL_AFTER_MS,
    tls: c.KAFKA_SSL ? { caFile: c.KAFKA_SSL_CA_FILE } : null,
    sasl: c.KAFKA_SASL_MECHANISM
      ? {
          mechanism: c.KAFKA_SASL_MECHANISM,
          username: c.KAFKA_SASL_USERNAME!,
          password: c.KAFKA_SASL_PASSWORD!,
        }
      : null,
  };
}

export function embedderSection(c: Settings): Config['embedder'] {
  return c.MUNINN_EMBEDDER === 'openai'
    ? {
        kind: 'openai',
        url: c.MUNINN_EMBEDDER_URL!,
        model: c.MUNINN_EMBEDDER_MODEL!,
        apiKey: c.MUNINN_EMBEDDER_API_KEY,
      }
    : c.MUNINN_EMBEDDER === 'hashing'
      ? { kind: 'hashing' }
      : { kind: 'local', modelDir: c.MUNINN_MODEL_DIR ?? `.stack/models/${c.MUNINN_LOCAL_MODEL}` };
}

export function extractorSection(c: Settings): Config['extractor'] {
  return c.MUNINN_EXTRACTOR === 'chat'
    ? {
        kind: 'chat',
        url: c.MUNINN_EXTRACTOR_URL!,
        model: c.MUNINN_EXTRACTOR_MODEL!,
        escalationModel: c.MUNINN_EXTRACTOR_ESCALATION_MODEL,
        apiKey: c.MUNINN_EXTRACTOR_API_KEY,
      }
    : { kind: 'default' };
}

export function handoffSection(c: Settings): Config['handoff'] {
  return {
    outboxDir: c.MUNINN_OUTBOX_DIR ?? `${c.MUNINN_STATE_DIR}/outbox`,
    stream: c.MUNINN_HANDOFF_STREAM,
    maxTokenTtlS: c.MUNINN_HANDOFF_MAX_TOKEN_TTL_S,
    pseudonymKey: c.MUNINN_PSEUDONYM_KEY
      ? { keyId: c.MUNINN_PSEUDONYM_KEY_ID, secret: c.MUNINN_PSEUDONYM_KEY }
      : undefined,
    source: !c.MUNINN_EXPORT_SOURCE
      ? undefined
      : c.MUNINN_EXPORT_SOURCE.startsWith('file:')
        ? { kind: 'file', dir: c.MUNINN_EXPORT_SOURCE.slice('file:'.length) }
        : { kind: 'http', url: c.MUNINN_EXPORT_SOURCE, token: c.MUNINN_EXPORT_SOURCE_TOKEN },
    allowlist: commaList(c.MUNINN_EXPORT_ALLOWLIST).map((x) => ({
      source: x.slice(0, x.indexOf(':')),
      owner: x.slice(x.indexOf(':') + 1),
    })),
    quietPeriodMs: c.MUNINN_EXPORT_QUIET_MS,
    selectedWebUiSessions: commaList(c.MUNINN_EXPORT_SELECTED),
    stateFile: c.MUNINN_EXPORT_STATE_FILE ?? `${c.MUNINN_STATE_DIR}/export-state.json`,
    host: c.MUNINN_HANDOFF_HOST,
    port: c.MUNINN_HANDOFF_PORT,
    url: c.MUNINN_HANDOFF_URL ?? `http://${c.MUNINN_HANDOFF_HOST}:${c.MUNINN_HANDOFF_PORT}/handoff`,
    tokenCommand: c.MUNINN_HANDOFF_TOKEN_COMMAND,
    curatorToken: c.MUNINN_CURATOR_TOKEN,
    curatorNamespace: c.MUNINN_CURATOR_NAMESPACE,
  };
}

export function mcpSection(c: Settings): Config['mcp'] {
  return {
    host: c.MUNINN_MCP_HOST,
    port: c.MUNINN_MCP_PORT,
    audience: c.MUNINN_MCP_AUDIENCE ?? `http://${c.MUNINN_MCP_HOST}:${c.MUNINN_MCP_PORT}/mcp`,
    writeTools: c.MUNINN_MCP_WRITE_TOOLS,
    // Outside production the API serves a development token endpoint (the stand-in for the IdP's).
    exchangeUrl:
      c.MUNINN_MCP_EXCHANGE_URL ??
      (c.MUNINN_ENV === 'production' ? undefined : `http://${c.MUNINN_HOST}:${c.MUNINN_PORT}/dev/token`),
    clientId: c.MUNINN_MCP_CLIENT_ID,
    clientSecret: c.MUNINN_MCP_CLIENT_SECRET,
    authorizationServers:
      c.MUNINN_MCP_AUTHORIZATION_SERVERS ??
      (URL.canParse(c.MUNINN_AUTH_ISSUER) ? [c.MUNINN_AUTH_ISSUER] : []),
  };
}

export function stewardSection(c: Settings): Config['steward'] {
  return {
    enabled: c.MUNINN_STEWARD,
    intervalMs: c.MUNINN_STEWARD_INTERVAL_MS,
    tenants: c.MUNINN_STEWARD_TENANTS ?? null,
    thresholds: {
      contestedDays: c.MUNINN_STEWARD_CONTESTED_DAYS,
      candidateDays: c.MUNINN_STEWARD_CANDIDATE_DAYS,
      duplicateCosine:
        c.MUNINN_STEWARD_DUPLICATE_COSINE ??
        (c.MUNINN_EMBEDDER === 'local' && !c.MUNINN_MODEL_DIR
          ? thresholdsFor(c.MUNINN_LOCAL_MODEL).duplicate
          : MINILM_THRESHOLDS.duplicate),
      lowUtility: c.MUNINN_STEWARD_LOW_UTILITY,
      lowUtilityMinVotes: c.MUNINN_STEWARD_LOW_UTILITY_VOTES,
    },
  };
}

export function authSection(c: Settings): Config['auth'] {
  return {
    issuer: c.MUNINN_AUTH_ISSUER,
    audience: c.MUNINN_AUTH_AUDIENCE,
    handoffAudience: c.MUNINN_HANDOFF_AUDIENCE,
    jwks: c.MUNINN_AUTH_JWKS_URL
      ? { kind: 'url', url: c.MUNINN_AUTH_JWKS_URL }
      : { kind: 'file', path: c.MUNINN_AUTH_JWKS_FILE ?? devJwksPath(c.MUNINN_STATE_DIR) },
    algorithms: c.MUNINN_AUTH_ALGORITHMS,
    clockSkewS: c.MUNINN_AUTH_CLOCK_SKEW_S,
    tenantClaim: c.MUNINN_AUTH_TENANT_CLAIM,
    maxTokenTtlS: c.MUNINN_MAX_TOKEN_TTL_S,
  };
}
