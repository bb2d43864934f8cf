import { z } from 'zod';
import { NamespacePath, Sensitivities, TenantId, type Sensitivity } from '../domain/model.ts';
import { DEFAULT_APPROVER_RULES, parseApproverRules, type ApproverRules } from '../domain/review.ts';
import { MINILM_THRESHOLDS, thresholdsFor } from '../domain/similarity.ts';
import type { StewardThresholds } from '../domain/stewardship.ts';

/**
 * The one config loader. Nothing else reads process.env. Every variable is documented in README.md
 * ("Configuration"); `load()` validates all of them at once and reports every problem in one message.
 */
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes' || v === 'on');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const csv = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x.length > 0),
);

/** The local embedding models `scripts/fetch-model.mjs` can provision (its MODEL_NAMES). */
export const LOCAL_MODELS = ['all-MiniLM-L6-v2', 'bge-small-en-v1.5'] as const;

export const ConfigSchema = z
  .object({
    MUNINN_ENV: z.enum(['development', 'test', 'production']).default('development'),
    MUNINN_HOST: z.string().min(1).default('127.0.0.1'),
    MUNINN_PORT: int(0, 65535).default(4000),
    MUNINN_METRICS_PORT: int(0, 65535).optional(),
    MUNINN_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
    MUNINN_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    MUNINN_ROLE: z.enum(['all', 'api', 'projector']).default('all'),
    MUNINN_STATE_DIR: z.string().min(1).default('.muninn'),

    NEO4J_URI: z.string().regex(/^(bolt|neo4j)(\+s|\+ssc)?:\/\//, 'must be a bolt:// or neo4j:// URI'),
    NEO4J_USER: z.string().default('neo4j'),
    NEO4J_PASSWORD: z.string().default(''),
    NEO4J_DATABASE: z.string().default('neo4j'),
    /** A PEM file of the CA that signed Neo4j's certificate (TLS with a private CA; bolt:// or neo4j:// URI). */
    NEO4J_TRUSTED_CA_FILE: z.string().min(1).optional(),

    KAFKA_BROKERS: csv.pipe(z.array(z.string().regex(/^[^:\s]+:\d+$/, 'host:port')).min(1)),
    KAFKA_CLIENT_ID: z.string().default('muninn'),
    KAFKA_SSL: bool.default(false),
    /** A PEM file of the CA that signed the brokers' certificates (else the system's CAs); needs KAFKA_SSL. */
    KAFKA_SSL_CA_FILE: z.string().min(1).optional(),
    KAFKA_SASL_MECHANISM: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional(),
    KAFKA_SASL_USERNAME: z.string().min(1).optional(),
    /** A secret: never logged, never echoed in a config error. */
    KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
    MUNINN_LEDGER_TOPIC: z.string().default('muninn.ledger.v1'),
    MUNINN_DLQ_TOPIC: z.string().default('muninn.ledger.v1.dlq'),
    MUNINN_LEDGER_PARTITIONS: int(1, 1024).default(3),
    MUNINN_PROJECTOR_GROUP: z.string().default('muninn-projector'),
    MUNINN_PROJECTOR_BATCH_MAX: int(1, 100_000).default(2000),
    MUNINN_RECALL_VECTORS_HELD: int(0, 100_000_000).default(240_000),
    MUNINN_REBUILD_BATCH_MAX: int(1, 100_000).default(10_000),
    MUNINN_PROJECTOR_SESSION_TIMEOUT_MS: int(6000, 300_000).default(30_000),
    MUNINN_PROJECTOR_STALL_AFTER_MS: int(100, 3_600_000).default(30_000),

    MUNINN_AUTH_ISSUER: z.string().min(1).default('muninn-dev'),
    MUNINN_AUTH_AUDIENCE: z.string().min(1).default('urn:muninn:api'),
    MUNINN_HANDOFF_AUDIENCE: z.string().min(1).default('urn:muninn:handoff'),
    MUNINN_AUTH_JWKS_URL: z.url().optional(),
    MUNINN_AUTH_JWKS_FILE: z.string().optional(),
    MUNINN_AUTH_ALGORITHMS: csv.default(['ES256', 'RS256', 'EdDSA']),
    MUNINN_AUTH_CLOCK_SKEW_S: int(0, 300).default(30),
    MUNINN_AUTH_TENANT_CLAIM: z.string().default('tenant'),
    // Longest lifetime (exp − iat) of an API token: a leaked token is useful for at most this long.
    MUNINN_MAX_TOKEN_TTL_S: int(60, 30 * 86_400).default(86_400),

    MUNINN_INTROSPECTION: bool.optional(),
    MUNINN_CONSOLE: bool.optional(),
    MUNINN_MAX_DEPTH: int(1, 100).default(10),
    MUNINN_MAX_ALIASES: int(1, 1000).default(30),
    MUNINN_MAX_TOKENS: int(100, 1_000_000).default(5000),
    MUNINN_MAX_COST: int(1, 10_000_000).default(50_000),
    MUNINN_MAX_BODY_BYTES: int(1024, 64 * 1024 * 1024).default(512 * 1024),
    // Handles accepting on the API's port: each accepts one more new connection per turn of a busy event
    // loop (src/api/acceptors.ts); 1 is Node's own behaviour.
    MUNINN_HTTP_ACCEPTORS: int(1, 64).default(8),
    MUNINN_WS_MAX_SUBSCRIPTIONS: int(1, 1000).default(10),
    MUNINN_MAX_TEXT_CHARS: int(16, 1_000_000).default(20_000),
    MUNINN_AWAIT_TIMEOUT_MS: int(100, 600_000).default(15_000),
    MUNINN_WRITE_MAX_INFLIGHT: int(1, 100_000).default(256),
    MUNINN_WRITE_MAX_LAG_MS: int(100, 3_600_000).default(2_000),
    // On by default (1 turns it off): with the client in a process of its own it kept admitted writes' lag
    // under 2 s at twice the sustainable rate at no clear cost to that rate (README, "Overload").
    MUNINN_WRITE_MAX_BUSY: z.coerce.number().min(0.5).max(1).default(0.9),
    MUNINN_WRITE_BUSY_FLOOR: int(1, 100_000).default(48),

    MUNINN_EMBEDDER: z.enum(['local', 'openai', 'hashing']).default('local'),
    // Which model `scripts/fetch-model.mjs` provisions and the local embedder loads (issue #10); vectors of
    // different models are not comparable, so records keep the modelId they were embedded with.
    MUNINN_LOCAL_MODEL: z.enum(LOCAL_MODELS).default('bge-small-en-v1.5'),
    // Default: .stack/models/<MUNINN_LOCAL_MODEL>.
    MUNINN_MODEL_DIR: z.string().min(1).optional(),
    MUNINN_EMBEDDER_URL: z.url().optional(),
    MUNINN_EMBEDDER_MODEL: z.string().min(1).optional(),
    MUNINN_EMBEDDER_API_KEY: z.string().min(1).optional(),
    MUNINN_EXTRACTOR: z.enum(['default', 'chat']).default('default'),
    MUNINN_EXTRACTOR_URL: z.url().optional(),
    MUNINN_EXTRACTOR_MODEL: z.string().min(1).optional(),
    MUNINN_EXTRACTOR_ESCALATION_MODEL: z.string().min(1).optional(),
    MUNINN_EXTRACTOR_API_KEY: z.string().min(1).optional(),
    MUNINN_POLICY_FILE: z.string().min(1).optional(),
    MUNINN_HANDLE_KEY: z.string().min(32).optional(),
    MUNINN_FINGERPRINT_KEY: z.string().min(32).optional(),
    MUNINN_AUDIT_KEY: z.string().min(32).optional(),
    MUNINN_AUDIT_DIR: z.string().min(1).optional(),
    MUNINN_OTLP_ENDPOINT: z.url().optional(),
    MUNINN_OUTBOX_DIR: z.string().min(1).optional(),
    MUNINN_HANDOFF_STREAM: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/)
      .default('default'),
    MUNINN_HANDOFF_MAX_TOKEN_TTL_S: int(10, 3600).default(300),
    MUNINN_PSEUDONYM_KEY: z.string().min(32).optional(),
    MUNINN_PSEUDONYM_KEY_ID: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/)
      .default('k1'),
    MUNINN_EXPORT_SOURCE: z.string().min(1).optional(),
    MUNINN_EXPORT_SOURCE_TOKEN: z.string().min(1).optional(),
    MUNINN_EXPORT_ALLOWLIST: z.string().default(''),
    MUNINN_EXPORT_QUIET_MS: int(0, 86_400_000).default(120_000),
    MUNINN_EXPORT_SELECTED: z.string().default(''),
    MUNINN_EXPORT_STATE_FILE: z.string().min(1).optional(),
    // `muninn handoff serve`: the handoff contract's own private listener (off unless that command runs).
    MUNINN_HANDOFF_HOST: z.string().min(1).default('127.0.0.1'),
    MUNINN_HANDOFF_PORT: int(0, 65535).default(4200),
    // `muninn curate`, a client of both surfaces: where /handoff is, the command that prints one fresh
    // single-use handoff token per call, and the curator's own token for the main API.
    MUNINN_HANDOFF_URL: z.url().optional(),
    MUNINN_HANDOFF_TOKEN_COMMAND: z.string().min(1).optional(),
    MUNINN_CURATOR_TOKEN: z.string().min(1).optional(),
    MUNINN_CURATOR_NAMESPACE: NamespacePath.default('handoff'),
    MUNINN_DEFAULT_CLEARANCE: z.enum(['NONE', ...Sensitivities]).default('CONFIDENTIAL'),
    MUNINN_REVIEW_APPROVERS: z.string().default(DEFAULT_APPROVER_RULES),

    MUNINN_CORS_ORIGINS: csv.pipe(z.array(z.url())).default([]),
    MUNINN_GRAPHQL_URL: z.url().optional(),
    MUNINN_TOKEN: z.string().min(1).optional(),
    MUNINN_MCP_HOST: z.string().min(1).default('127.0.0.1'),
    MUNINN_MCP_PORT: int(0, 65535).default(4100),
    MUNINN_MCP_AUDIENCE: z.string().min(1).optional(),
    MUNINN_MCP_WRITE_TOOLS: bool.default(false),
    MUNINN_MCP_EXCHANGE_URL: z.url().optional(),
    MUNINN_MCP_CLIENT_ID: z.string().min(1).default('muninn-mcp'),
    MUNINN_MCP_CLIENT_SECRET: z.string().min(32).optional(),
    MUNINN_MCP_AUTHORIZATION_SERVERS: csv.pipe(z.array(z.url())).optional(),
    /** Admins besides the caller who must approve an erasure (0 = the caller's admin scope suffices). */
    MUNINN_ERASE_APPROVERS: z.coerce.number().int().min(0).max(1).default(0),
    /** Where the file key store keeps data keys (default <MUNINN_STATE_DIR>/keys). */
    MUNINN_KEY_DIR: z.string().min(1).optional(),
    /** Retention rules, a JSON file (domain/retention.ts); unset: nothing is archived or erased by age. */
    MUNINN_RETENTION_RULES: z.string().min(1).optional(),
    /** How often the projector process runs the retention rules. */
    MUNINN_RETENTION_INTERVAL_MS: z.coerce.number().int().min(1000).default(3_600_000),
    /** Whether the projector process runs the steward checks (lifecycle/steward.ts). */
    MUNINN_STEWARD: bool.default(false),
    /** How often the steward runs (it also runs once at start). */
    MUNINN_STEWARD_INTERVAL_MS: z.coerce.number().int().min(1000).default(3_600_000),
    /** Tenants the steward checks; unset = every tenant that holds records. */
    MUNINN_STEWARD_TENANTS: csv.pipe(z.array(TenantId)).optional(),
    MUNINN_STEWARD_CONTESTED_DAYS: z.coerce.number().min(0).default(14),
    MUNINN_STEWARD_CANDIDATE_DAYS: z.coerce.number().min(0).default(7),
    // Default: the embedding model's own duplicate threshold (domain/similarity.ts).
    MUNINN_STEWARD_DUPLICATE_COSINE: z.coerce.number().min(0.5).max(1).optional(),
    MUNINN_STEWARD_LOW_UTILITY: z.coerce.number().min(-1).max(1).default(-0.2),
    MUNINN_STEWARD_LOW_UTILITY_VOTES: int(1, 1_000_000).default(3),
  })
  .superRefine((c, ctx) => {
    for (const message of parseApproverRules(c.MUNINN_REVIEW_APPROVERS).problems)
      ctx.addIssue({ code: 'custom', path: ['MUNINN_REVIEW_APPROVERS'], message });
    for (const entry of c.MUNINN_EXPORT_ALLOWLIST.split(',')
      .map((x) => x.trim())
      .filter(Boolean))
      if (!/^[a-z]+:[^\s,:]+$/.test(entry))
        ctx.addIssue({
          code: 'custom',
          path: ['MUNINN_EXPORT_ALLOWLIST'],
          message: `entries are source:owner, got "${entry}"`,
        });
    if (c.MUNINN_EMBEDDER === 'openai' && (!c.MUNINN_EMBEDDER_URL || !c.MUNINN_EMBEDDER_MODEL)) {
      ctx.addIssue({
        code: 'custom',
        path: ['MUNINN_EMBEDDER_URL'],
        message: 'the openai embedder needs MUNINN_EMBEDDER_URL and MUNINN_EMBEDDER_MODEL',
      });
    }
    if (c.MUNINN_EXTRACTOR === 'chat' && (!c.MUNINN_EXTRACTOR_URL || !c.MUNINN_EXTRACTOR_MODEL)) {
      ctx.addIssue({
        code: 'custom',
        path: ['MUNINN_EXTRACTOR_URL'],
        message: 'the chat extractor needs MUNINN_EXTRACTOR_URL and MUNINN_EXTRACTOR_MODEL',
      });
    }
    if (c.MUNINN_AUTH_JWKS_URL && c.MUNINN_AUTH_JWKS_FILE) {
      ctx.addIssue({
        code: 'custom',
        path: ['MUNINN_AUTH_JWKS_URL'],
        message: 'set MUNINN_AUTH_JWKS_URL or MUNINN_AUTH_JWKS_FILE, not both',
      });
    }
    if (c.MUNINN_ENV === 'production' && c.MUNINN_ROLE !== 'projector' && !c.MUNINN_FINGERPRINT_KEY) {
      ctx.addIssue({
        code: 'custom',
        path: ['MUNINN_FINGERPRINT_KEY'],
        message: 'production needs MUNINN_FINGERPRINT_KEY (≥ 32 chars; the same on every API process)',
      });
    }
    if (c.MUNINN_ENV === 'production' && c.MUNINN_ROLE !== 'projector' && !c.MUNINN_AUDIT_KEY) {
      ctx.addIssue({
        code: 'custom',
        path: ['MUNINN_AUDIT_KEY'],
        message: 'production needs MUNINN_AUDIT_KEY (≥ 32 chars; keyed MACs chain the audit trail)',
      });
    }
    for (const origin of c.MUNINN_CORS_ORIGINS)
      if (URL.canParse(origin) && new URL(origin).origin !== origin)
        ctx.addIssue({
          code: 'custom',
          path: ['MUNINN_CORS_ORIGINS'],
          message: `entries are origins (scheme://host[:port], no path), got "${origin}"`,
        });
    for (const { path, message } of transportProblems(c))
      ctx.addIssue({ code: 'custom', path: [path], message });
    if (c.MUNINN_ENV === 'production' && !c.MUNINN_AUTH_JWKS_URL && !c.MUNINN_AUTH_JWKS_FILE) {
      ctx.addIssue({
        code: 'custom',
        path: ['MUNINN_AUTH_JWKS_URL'],
        message: 'production needs MUNINN_AUTH_JWKS_URL or MUNINN_AUTH_JWKS_FILE (the dev key is refused)',
      });
    }
  });

type Raw = z.infer<typeof ConfigSchema>;

/**
 * The TLS and SASL settings that do not fit together. Messages name variables, never values (the
 * password is a secret).
 */
function transportProblems(c: {
  NEO4J_URI: string;
  NEO4J_TRUSTED_CA_FILE?: string | undefined;
  KAFKA_SSL: boolean;
  KAFKA_SSL_CA_FILE?: string | undefined;
  KAFKA_SASL_MECHANISM?: string | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
  MUNINN_ENV: string;
}): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  // The driver takes its encryption either from the URI scheme or from its config, never both.
  if (c.NEO4J_TRUSTED_CA_FILE && /^(bolt|neo4j)\+/.test(c.NEO4J_URI))
    problems.push({
      path: 'NEO4J_TRUSTED_CA_FILE',
      message: 'with a trusted CA file, NEO4J_URI is bolt:// or neo4j:// (TLS then comes from the CA file)',
    });
  if (c.KAFKA_SSL_CA_FILE && !c.KAFKA_SSL)
    problems.push({ path: 'KAFKA_SSL_CA_FILE', message: 'KAFKA_SSL_CA_FILE needs KAFKA_SSL=true' });
  if (c.KAFKA_SASL_MECHANISM && (!c.KAFKA_SASL_USERNAME || !c.KAFKA_SASL_PASSWORD))
    problems.push({
      path: 'KAFKA_SASL_MECHANISM',
      message: 'KAFKA_SASL_MECHANISM needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD',
    });
  if (!c.KAFKA_SASL_MECHANISM && (c.KAFKA_SASL_USERNAME || c.KAFKA_SASL_PASSWORD))
    problems.push({
      path: 'KAFKA_SASL_MECHANISM',
      message:
        'KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD need KAFKA_SASL_MECHANISM (plain, scram-sha-256, scram-sha-512)',
    });
  // PLAIN sends the password as it is: only inside TLS in production.
  if (c.MUNINN_ENV === 'production' && c.KAFKA_SASL_MECHANISM === 'plain' && !c.KAFKA_SSL)
    problems.push({
      path: 'KAFKA_SASL_MECHANISM',
      message:
        'production refuses SASL PLAIN without KAFKA_SSL=true (the password would cross the network in clear)',
    });
  return problems;
}

export interface Config {
  readonly env: Raw['MUNINN_ENV'];
  readonly role: Raw['MUNINN_ROLE'];
  readonly stateDir: string;
  readonly http: {
    readonly host: string;
    readonly port: number;
    readonly introspection: boolean;
    /** The operator console at /console (static files; it signs in with the user's own token). */
    readonly console: boolean;
    /** Handles accepting connections on the port (src/api/acceptors.ts). */
    readonly acceptors: number;
    readonly limits: {
      readonly maxDepth: number;
      readonly maxAliases: number;
      readonly maxTokens: number;
      readonly maxCost: number;
      readonly maxBodyBytes: number;
      readonly maxTextChars: number;
      /** Operations one WebSocket may have running at once (subscriptions and queries alike). */
      readonly maxWsSubscriptions: number;
    };
    readonly awaitTimeoutMs: number;
    /** Overload: writes in progress, projection lag, and the loop busy past a floor of writes: beyond, refused. */
    readonly overload: {
      readonly maxInFlight: number;
      readonly maxLagMs: number;
      readonly maxBusy: number;
      readonly busyFloor: number;
    };
  };
  readonly log: { readonly level: Raw['MUNINN_LOG_LEVEL'] };
  /** Prometheus /metrics on its own port; null = not served. */
  readonly metrics: { readonly host: string; readonly port: number } | null;
  readonly neo4j: {
    readonly uri: string;
    readonly user: string;
    readonly password: string;
    readonly database: string;
    /** TLS trusting this CA's PEM file (a bolt:// or neo4j:// URI); else the URI scheme decides. */
    readonly trustedCaFile: string | undefined;
    /** The most record vectors recall's vector arm holds in process (0: none; it then scans in Cypher). */
    readonly vectorsHeld: number;
  };
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly clientId: string;
    readonly topic: string;
    readonly dlqTopic: string;
    readonly partitions: number;
    readonly groupId: string;
    readonly batchMax: number;
    /** Events per transaction of a rebuild (per partition, gathered across fetches). */
    readonly rebuildBatchMax: number;
    readonly sessionTimeoutMs: number;
    /** A partition whose batch has failed this long is reported stalled (/readyz, `projection`). */
    readonly stallAfterMs: number;
    /** TLS to the brokers (with this CA's PEM file, else the system's CAs); null = plaintext. */
    readonly tls: { readonly caFile: string | undefined } | null;
    /** SASL authentication; null = none. */
    readonly sasl: {
      readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
      readonly username: string;
      readonly password: string;
    } | null;
  };
  readonly embedder:
    | { readonly kind: 'local'; readonly modelDir: string }
    | {
        readonly kind: 'openai';
        readonly url: string;
        readonly model: string;
        readonly apiKey: string | undefined;
      }
    | { readonly kind: 'hashing' };
  readonly extractor:
    | { readonly kind: 'default' }
    | {
        readonly kind: 'chat';
        readonly url: string;
        readonly model: string;
        readonly escalationModel: string | undefined;
        readonly apiKey: string | undefined;
      };
  /** The admission policy document (JSON); the built-in default when absent. */
  readonly policyFile: string | undefined;
  /** What a tenant member without namespace grants reads: the tenant up to this label (null = nothing). */
  readonly access: { readonly defaultClearance: Sensitivity | null };
  /** Separation of duties: per class, approvers other than the proposer needed before a record is ACTIVE. */
  readonly review: { readonly approvers: ApproverRules };
  /** Crypto-shredding: where data keys live, how many second approvers an erasure needs. */
  readonly erasure: { readonly keyDir: string; readonly approvers: number };
  /** Retention: the rules file and the scheduler's interval (it runs in the projector process). */
  readonly retention: { readonly rulesFile: string | undefined; readonly intervalMs: number };
  /** The steward checks (projector process): on or off, how often, which tenants, their thresholds. */
  readonly steward: {
    readonly enabled: boolean;
    readonly intervalMs: number;
    readonly tenants: readonly string[] | null;
    readonly thresholds: StewardThresholds;
  };
  /** The transcript outbox and its handoff (seed 000): exporter, Heimdall contract, curator. */
  readonly handoff: {
    readonly outboxDir: string;
    readonly stream: string;
    readonly maxTokenTtlS: number;
    /** HMAC key of the pseudonyms (never logged or written); absent = the exporter refuses to run. */
    readonly pseudonymKey: { readonly keyId: string; readonly secret: string } | undefined;
    readonly source:
      | { readonly kind: 'file'; readonly dir: string }
      | { readonly kind: 'http'; readonly url: string; readonly token: string | undefined }
      | undefined;
    readonly allowlist: ReadonlyArray<{ readonly source: string; readonly owner: string }>;
    readonly quietPeriodMs: number;
    readonly selectedWebUiSessions: readonly string[];
    readonly stateFile: string;
    /** `muninn handoff serve` listens here. */
    readonly host: string;
    readonly port: number;
    /** The curator's view: the /handoff URL, and how it gets a fresh single-use token (never logged). */
    readonly url: string;
    readonly tokenCommand: string | undefined;
    /** The curator's own token for the main API (MUNINN_GRAPHQL_URL); never logged. */
    readonly curatorToken: string | undefined;
    readonly curatorNamespace: string;
  };
  /** Browser origins allowed to call /graphql and the MCP bridge (CORS); none by default. */
  readonly corsOrigins: readonly string[];
  /** Client commands (`muninn mcp` over stdio, `muninn project`): where GraphQL is, and the user's own token. */
  readonly client: { readonly graphqlUrl: string; readonly token: string | undefined };
  /** The MCP bridge (`muninn mcp`). */
  readonly mcp: {
    readonly host: string;
    readonly port: number;
    /** The bridge's resource identifier (RFC 8707/9728): the `aud` its callers' tokens must carry. */
    readonly audience: string;
    readonly writeTools: boolean;
    /** RFC 8693 token endpoint the bridge exchanges its callers' tokens at (the IdP's; dev: Muninn's). */
    readonly exchangeUrl: string | undefined;
    readonly clientId: string;
    /** The bridge's client secret at the token endpoint; the dev endpoint is served only when set. */
    readonly clientSecret: string | undefined;
    readonly authorizationServers: readonly string[];
  };
  /** MAC key of recall handles; every API process of a deployment needs the same one. Random when unset. */
  readonly handleKey: string | undefined;
  /**
   * HMAC key of secret fingerprints (the `[secret:<kind>:<fp>]` refs); every API process of a deployment needs
   * the same one. Required in production; elsewhere a dev key under the state dir when unset.
   */
  readonly fingerprintKey: string | undefined;
  /** The audit trail: hash-chained files in `dir`, MAC'd with `key` (a dev key from the state dir when unset). */
  readonly audit: { readonly dir: string; readonly key: string | undefined };
  /** OTLP/HTTP traces URL (spans of audited operations); none = no exporter. */
  readonly otlpEndpoint: string | undefined;
  readonly auth: {
    readonly issuer: string;
    readonly audience: string;
    readonly handoffAudience: string;
    /** Exactly one JWKS source; in development, a file the `muninn token` command creates. */
    readonly jwks:
      { readonly kind: 'url'; readonly url: string } | { readonly kind: 'file'; readonly path: string };
    readonly algorithms: readonly string[];
    readonly clockSkewS: number;
    readonly tenantClaim: string;
    /** Tokens living longer than this (exp − iat, or exp − now without iat) are refused. */
    readonly maxTokenTtlS: number;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Where the development signing key lives; `muninn token` creates it on first use. */
export const devJwksPath = (stateDir: string): string => `${stateDir}/dev-keys/jwks.json`;

export function load(env: Readonly<Record<string, string | undefined>> = process.env): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(ConfigSchema.shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') input[key] = v;
  }
  const parsed = ConfigSchema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`));
  }
  const c = parsed.data;
  const config: Config = {
    env: c.MUNINN_ENV,
    role: c.MUNINN_ROLE,
    stateDir: c.MUNINN_STATE_DIR,
    http: {
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
    },
    log: { level: c.MUNINN_LOG_LEVEL },
    metrics:
      c.MUNINN_METRICS_PORT === undefined
        ? null
        : { host: c.MUNINN_METRICS_HOST, port: c.MUNINN_METRICS_PORT },
    neo4j: {
      uri: c.NEO4J_URI,
      user: c.NEO4J_USER,
      password: c.NEO4J_PASSWORD,
      database: c.NEO4J_DATABASE,
      trustedCaFile: c.NEO4J_TRUSTED_CA_FILE,
      vectorsHeld: c.MUNINN_RECALL_VECTORS_HELD,
    },
    kafka: {
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
    },
    embedder:
      c.MUNINN_EMBEDDER === 'openai'
        ? {
            kind: 'openai',
            url: c.MUNINN_EMBEDDER_URL!,
            model: c.MUNINN_EMBEDDER_MODEL!,
            apiKey: c.MUNINN_EMBEDDER_API_KEY,
          }
        : c.MUNINN_EMBEDDER === 'hashing'
          ? { kind: 'hashing' }
          : { kind: 'local', modelDir: c.MUNINN_MODEL_DIR ?? `.stack/models/${c.MUNINN_LOCAL_MODEL}` },
    extractor:
      c.MUNINN_EXTRACTOR === 'chat'
        ? {
            kind: 'chat',
            url: c.MUNINN_EXTRACTOR_URL!,
            model: c.MUNINN_EXTRACTOR_MODEL!,
            escalationModel: c.MUNINN_EXTRACTOR_ESCALATION_MODEL,
            apiKey: c.MUNINN_EXTRACTOR_API_KEY,
          }
        : { kind: 'default' },
    policyFile: c.MUNINN_POLICY_FILE,
    handleKey: c.MUNINN_HANDLE_KEY,
    fingerprintKey: c.MUNINN_FINGERPRINT_KEY,
    audit: { dir: c.MUNINN_AUDIT_DIR ?? `${c.MUNINN_STATE_DIR}/audit`, key: c.MUNINN_AUDIT_KEY },
    otlpEndpoint: c.MUNINN_OTLP_ENDPOINT,
    handoff: {
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
      allowlist: c.MUNINN_EXPORT_ALLOWLIST.split(',')
        .map((x) => x.trim())
        .filter(Boolean)
        .map((x) => ({ source: x.slice(0, x.indexOf(':')), owner: x.slice(x.indexOf(':') + 1) })),
      quietPeriodMs: c.MUNINN_EXPORT_QUIET_MS,
      selectedWebUiSessions: c.MUNINN_EXPORT_SELECTED.split(',')
        .map((x) => x.trim())
        .filter(Boolean),
      stateFile: c.MUNINN_EXPORT_STATE_FILE ?? `${c.MUNINN_STATE_DIR}/export-state.json`,
      host: c.MUNINN_HANDOFF_HOST,
      port: c.MUNINN_HANDOFF_PORT,
      url: c.MUNINN_HANDOFF_URL ?? `http://${c.MUNINN_HANDOFF_HOST}:${c.MUNINN_HANDOFF_PORT}/handoff`,
      tokenCommand: c.MUNINN_HANDOFF_TOKEN_COMMAND,
      curatorToken: c.MUNINN_CURATOR_TOKEN,
      curatorNamespace: c.MUNINN_CURATOR_NAMESPACE,
    },
    access: {
      defaultClearance: c.MUNINN_DEFAULT_CLEARANCE === 'NONE' ? null : c.MUNINN_DEFAULT_CLEARANCE,
    },
    review: { approvers: parseApproverRules(c.MUNINN_REVIEW_APPROVERS).rules },
    corsOrigins: c.MUNINN_CORS_ORIGINS,
    client: {
      graphqlUrl: c.MUNINN_GRAPHQL_URL ?? `http://${c.MUNINN_HOST}:${c.MUNINN_PORT}/graphql`,
      token: c.MUNINN_TOKEN,
    },
    mcp: {
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
    },
    erasure: {
      keyDir: c.MUNINN_KEY_DIR ?? `${c.MUNINN_STATE_DIR}/keys`,
      approvers: c.MUNINN_ERASE_APPROVERS,
    },
    retention: { rulesFile: c.MUNINN_RETENTION_RULES, intervalMs: c.MUNINN_RETENTION_INTERVAL_MS },
    steward: {
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
    },
    auth: {
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
    },
  };
  return deepFreeze(config);
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
