import { parseApproverRules } from '../domain/review.ts';
import { ConfigFields, type Settings } from './fields.ts';
import { settingProblems } from './problems.ts';
import {
  authSection,
  devJwksPath,
  embedderSection,
  extractorSection,
  handoffSection,
  httpSection,
  kafkaSection,
  mcpSection,
  stewardSection,
} from './sections.ts';
import type { Config } from './types.ts';

export { LOCAL_MODELS } from './fields.ts';
export { devJwksPath };
export type { Config };

export const ConfigSchema = ConfigFields.superRefine((c, ctx) => {
  for (const { path, message } of settingProblems(c)) ctx.addIssue({ code: 'custom', path: [path], message });
});

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The one config loader. Nothing else reads process.env. Every variable is documented in README.md
 * ("Configuration"); `load()` validates all of them at once and reports every problem in one message.
 */
export function load(env: Env = process.env): Config {
  const c = settings(env);
  return deepFreeze<Config>({
    env: c.MUNINN_ENV,
    role: c.MUNINN_ROLE,
    stateDir: c.MUNINN_STATE_DIR,
    http: httpSection(c),
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
      entitiesHeld: c.MUNINN_ENTITIES_HELD,
    },
    kafka: kafkaSection(c),
    embedder: embedderSection(c),
    extractor: extractorSection(c),
    policyFile: c.MUNINN_POLICY_FILE,
    handleKey: c.MUNINN_HANDLE_KEY,
    fingerprintKey: c.MUNINN_FINGERPRINT_KEY,
    audit: { dir: c.MUNINN_AUDIT_DIR ?? `${c.MUNINN_STATE_DIR}/audit`, key: c.MUNINN_AUDIT_KEY },
    otlpEndpoint: c.MUNINN_OTLP_ENDPOINT,
    handoff: handoffSection(c),
    access: { defaultClearance: c.MUNINN_DEFAULT_CLEARANCE === 'NONE' ? null : c.MUNINN_DEFAULT_CLEARANCE },
    review: { approvers: parseApproverRules(c.MUNINN_REVIEW_APPROVERS).rules },
    corsOrigins: c.MUNINN_CORS_ORIGINS,
    client: {
      graphqlUrl: c.MUNINN_GRAPHQL_URL ?? `http://${c.MUNINN_HOST}:${c.MUNINN_PORT}/graphql`,
      token: c.MUNINN_TOKEN,
    },
    mcp: mcpSection(c),
    erasure: {
      keyDir: c.MUNINN_KEY_DIR ?? `${c.MUNINN_STATE_DIR}/keys`,
      approvers: c.MUNINN_ERASE_APPROVERS,
    },
    retention: { rulesFile: c.MUNINN_RETENTION_RULES, intervalMs: c.MUNINN_RETENTION_INTERVAL_MS },
    steward: stewardSection(c),
    auth: authSection(c),
  });
}

/** The variables the schema knows (an empty one counts as unset), all validated at once. */
function settings(env: Env): Settings {
  const input: Record<string, string> = {};
  for (const key of Object.keys(ConfigSchema.shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') input[key] = v;
  }
  const parsed = ConfigSchema.safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`));
  }
  return parsed.data;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
