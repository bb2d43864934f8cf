import { z } from 'zod';
import { NamespacePath, Sensitivities, TenantId } from '../domain/model.ts';
import { DEFAULT_APPROVER_RULES } from '../domain/review.ts';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes' || v === 'on');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** A comma-separated setting's entries, trimmed, the empty ones dropped. */
export const commaList = (s: string): string[] =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x.length > 0);
const csv = z.string().transform(commaList);

/** The local embedding models `scripts/fetch-model.mjs` can provision (its MODEL_NAMES). */
export const LOCAL_MODELS = ['all-MiniLM-L6-v2', 'bge-small-en-v1.5'] as const;

/** Every variable the loader reads, each checked on its own; settingProblems checks them together. */
export const ConfigFields = z.object({
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
  MUNINN_ENTITIES_HELD: int(0, 100_000_000).default(100_000),
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
  // graph: writes about one subject are decided one at a time across API processes too (subject-gate.ts);
  // process: only within each process (enough with one API process, and one lock fewer per write).
  MUNINN_SUBJECT_TURNS: z.enum(['graph', 'process']).default('graph'),

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
});

export type Settings = z.infer<typeof ConfigFields>;
