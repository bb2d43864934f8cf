import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kafkaSecurity } from '../../src/adapters/kafka/wire.ts';
import { CypherExecutor } from '../../src/adapters/neo4j/executor.ts';
import { ConfigError, load } from '../../src/config/index.ts';

/**
 * TLS and SASL for the brokers and Bolt: the config's variables, what they map to (KafkaJS's `ssl` and
 * `sasl`, the driver's CA file) and the combinations refused at load with an error naming variables only.
 */
const base = { NEO4J_URI: 'bolt://127.0.0.1:7687', KAFKA_BROKERS: '127.0.0.1:9092' };
const PASSWORD = 'hunter2-do-not-print-me';

function problems(env: Record<string, string>): string {
  try {
    load({ ...base, ...env });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('Kafka TLS and SASL', () => {
  it('off by default: plaintext, no SASL, and KafkaJS gets neither option', () => {
    const c = load({ ...base });
    expect(c.kafka.tls).toBeNull();
    expect(c.kafka.sasl).toBeNull();
    expect(kafkaSecurity(c.kafka.tls, c.kafka.sasl)).toEqual({});
  });

  it('KAFKA_SSL alone trusts the system CAs; with a CA file, KafkaJS gets that PEM', () => {
    const c = load({ ...base, KAFKA_SSL: 'true' });
    expect(kafkaSecurity(c.kafka.tls, c.kafka.sasl)).toEqual({ ssl: true });
    const dir = mkdtempSync(join(tmpdir(), 'muninn-ca-'));
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    writeFileSync(join(dir, 'ca.pem'), pem);
    const withCa = load({ ...base, KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: join(dir, 'ca.pem') });
    expect(withCa.kafka.tls).toEqual({ caFile: join(dir, 'ca.pem') });
    expect(kafkaSecurity(withCa.kafka.tls, withCa.kafka.sasl)).toEqual({ ssl: { ca: [pem] } });
  });

  it('a CA file that is not there fails when the client is built, naming the file', () => {
    const c = load({ ...base, KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: '/nonexistent/ca.pem' });
    expect(() => kafkaSecurity(c.kafka.tls, c.kafka.sasl)).toThrow(/nonexistent\/ca\.pem/);
  });

  it.each(['plain', 'scram-sha-256', 'scram-sha-512'] as const)(
    'SASL %s maps to KafkaJS’s sasl option',
    (m) => {
      const c = load({
        ...base,
        KAFKA_SSL: 'true',
        KAFKA_SASL_MECHANISM: m,
        KAFKA_SASL_USERNAME: 'muninn',
        KAFKA_SASL_PASSWORD: PASSWORD,
      });
      expect(c.kafka.sasl).toEqual({ mechanism: m, username: 'muninn', password: PASSWORD });
      expect(kafkaSecurity(c.kafka.tls, c.kafka.sasl)).toEqual({
        ssl: true,
        sasl: { mechanism: m, username: 'muninn', password: PASSWORD },
      });
    },
  );

  it('refuses a mechanism without credentials, credentials without a mechanism, an unknown mechanism', () => {
    expect(problems({ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'muninn' })).toMatch(
      /KAFKA_SASL_MECHANISM needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD/,
    );
    expect(problems({ KAFKA_SASL_USERNAME: 'muninn', KAFKA_SASL_PASSWORD: PASSWORD })).toMatch(
      /need KAFKA_SASL_MECHANISM/,
    );
    expect(problems({ KAFKA_SASL_MECHANISM: 'gssapi' })).toMatch(/KAFKA_SASL_MECHANISM/);
    expect(problems({ KAFKA_SSL_CA_FILE: '/etc/ca.pem' })).toMatch(/KAFKA_SSL_CA_FILE needs KAFKA_SSL=true/);
    expect(problems({ KAFKA_SSL: 'maybe' })).toMatch(/KAFKA_SSL/);
  });

  it('production refuses SASL PLAIN outside TLS; SCRAM (no password on the wire) is allowed', () => {
    const prod = {
      MUNINN_ENV: 'production',
      MUNINN_ROLE: 'projector',
      MUNINN_AUTH_JWKS_URL: 'https://idp.example/jwks',
      KAFKA_SASL_USERNAME: 'muninn',
      KAFKA_SASL_PASSWORD: PASSWORD,
    };
    expect(problems({ ...prod, KAFKA_SASL_MECHANISM: 'plain' })).toMatch(/SASL PLAIN without KAFKA_SSL/);
    expect(
      load({ ...base, ...prod, KAFKA_SASL_MECHANISM: 'plain', KAFKA_SSL: 'true' }).kafka.sasl,
    ).not.toBeNull();
    expect(load({ ...base, ...prod, KAFKA_SASL_MECHANISM: 'scram-sha-512' }).kafka.sasl?.mechanism).toBe(
      'scram-sha-512',
    );
  });

  it('no config error ever carries the password', () => {
    const msg = problems({
      MUNINN_ENV: 'production',
      KAFKA_SASL_MECHANISM: 'plain',
      KAFKA_SASL_PASSWORD: PASSWORD,
      KAFKA_SSL_CA_FILE: '/etc/ca.pem',
    });
    expect(msg).not.toContain(PASSWORD);
  });
});

describe('Neo4j TLS', () => {
  it('the URI scheme decides by default; NEO4J_TRUSTED_CA_FILE names a private CA for bolt:// or neo4j://', () => {
    expect(load({ ...base }).neo4j.trustedCaFile).toBeUndefined();
    expect(load({ ...base, NEO4J_URI: 'neo4j+s://db.example:7687' }).neo4j.trustedCaFile).toBeUndefined();
    expect(load({ ...base, NEO4J_TRUSTED_CA_FILE: '/etc/neo4j-ca.pem' }).neo4j.trustedCaFile).toBe(
      '/etc/neo4j-ca.pem',
    );
  });

  it('refuses a CA file beside a +s/+ssc URI (the driver takes TLS from one or the other)', () => {
    for (const uri of ['bolt+s://db:7687', 'neo4j+ssc://db:7687'])
      expect(problems({ NEO4J_URI: uri, NEO4J_TRUSTED_CA_FILE: '/etc/ca.pem' })).toMatch(
        /NEO4J_TRUSTED_CA_FILE: with a trusted CA file, NEO4J_URI is bolt:\/\/ or neo4j:\/\//,
      );
  });

  it('the driver takes the CA file as its TLS config with a bolt:// URI (no connection is opened here)', async () => {
    const c = load({ ...base, NEO4J_TRUSTED_CA_FILE: '/etc/neo4j-ca.pem' }).neo4j;
    const db = CypherExecutor.connect(c.uri, c.user, c.password, c.database, c.trustedCaFile);
    await db.close();
    // The same config beside a +s URI is what the loader refuses: the driver throws on it.
    expect(() => CypherExecutor.connect('bolt+s://db:7687', 'neo4j', '', 'neo4j', '/etc/ca.pem')).toThrow(
      /either through URL or config/,
    );
  });
});
