import { parseApproverRules } from '../domain/review.ts';
import { commaList, type Settings } from './fields.ts';

/** A setting that does not fit the others: the variable to blame and why. */
export interface SettingProblem {
  readonly path: string;
  readonly message: string;
}

/** What the fields' own checks cannot see, in the order the loader reports it. */
export function settingProblems(c: Settings): SettingProblem[] {
  return [
    ...listProblems(c),
    ...pairingProblems(c),
    ...productionKeyProblems(c),
    ...originProblems(c),
    ...transportProblems(c),
    ...productionJwksProblems(c),
  ];
}

function listProblems(c: Settings): SettingProblem[] {
  const problems: SettingProblem[] = [];
  for (const message of parseApproverRules(c.MUNINN_REVIEW_APPROVERS).problems)
    problems.push({ path: 'MUNINN_REVIEW_APPROVERS', message });
  for (const entry of commaList(c.MUNINN_EXPORT_ALLOWLIST))
    if (!/^[a-z]+:[^\s,:]+$/.test(entry))
      problems.push({ path: 'MUNINN_EXPORT_ALLOWLIST', message: `entries are source:owner, got "${entry}"` });
  return problems;
}

function pairingProblems(c: Settings): SettingProblem[] {
  const problems: SettingProblem[] = [];
  if (c.MUNINN_EMBEDDER === 'openai' && (!c.MUNINN_EMBEDDER_URL || !c.MUNINN_EMBEDDER_MODEL))
    problems.push({
      path: 'MUNINN_EMBEDDER_URL',
      message: 'the openai embedder needs MUNINN_EMBEDDER_URL and MUNINN_EMBEDDER_MODEL',
    });
  if (c.MUNINN_EXTRACTOR === 'chat' && (!c.MUNINN_EXTRACTOR_URL || !c.MUNINN_EXTRACTOR_MODEL))
    problems.push({
      path: 'MUNINN_EXTRACTOR_URL',
      message: 'the chat extractor needs MUNINN_EXTRACTOR_URL and MUNINN_EXTRACTOR_MODEL',
    });
  if (c.MUNINN_AUTH_JWKS_URL && c.MUNINN_AUTH_JWKS_FILE)
    problems.push({
      path: 'MUNINN_AUTH_JWKS_URL',
      message: 'set MUNINN_AUTH_JWKS_URL or MUNINN_AUTH_JWKS_FILE, not both',
    });
  return problems;
}

function productionKeyProblems(c: Settings): SettingProblem[] {
  if (c.MUNINN_ENV !== 'production' || c.MUNINN_ROLE === 'projector') return [];
  const problems: SettingProblem[] = [];
  if (!c.MUNINN_FINGERPRINT_KEY)
    problems.push({
      path: 'MUNINN_FINGERPRINT_KEY',
      message: 'production needs MUNINN_FINGERPRINT_KEY (≥ 32 chars; the same on every API process)',
    });
  if (!c.MUNINN_AUDIT_KEY)
    problems.push({
      path: 'MUNINN_AUDIT_KEY',
      message: 'production needs MUNINN_AUDIT_KEY (≥ 32 chars; keyed MACs chain the audit trail)',
    });
  return problems;
}

function originProblems(c: Settings): SettingProblem[] {
  return c.MUNINN_CORS_ORIGINS.filter(
    (origin) => URL.canParse(origin) && new URL(origin).origin !== origin,
  ).map((origin) => ({
    path: 'MUNINN_CORS_ORIGINS',
    message: `entries are origins (scheme://host[:port], no path), got "${origin}"`,
  }));
}

/**
 * The TLS and SASL settings that do not fit together. Messages name variables, never values (the
 * password is a secret).
 */
function transportProblems(c: Settings): SettingProblem[] {
  const problems: SettingProblem[] = [];
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

function productionJwksProblems(c: Settings): SettingProblem[] {
  if (c.MUNINN_ENV !== 'production' || c.MUNINN_AUTH_JWKS_URL || c.MUNINN_AUTH_JWKS_FILE) return [];
  return [
    {
      path: 'MUNINN_AUTH_JWKS_URL',
      message: 'production needs MUNINN_AUTH_JWKS_URL or MUNINN_AUTH_JWKS_FILE (the dev key is refused)',
    },
  ];
}
