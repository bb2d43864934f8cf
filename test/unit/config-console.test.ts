import { describe, expect, it } from 'vitest';
import { ConfigError, load } from '../../src/config/index.ts';

const base = { NEO4J_URI: 'bolt://127.0.0.1:7687', KAFKA_BROKERS: '127.0.0.1:9092' };
// What production needs besides the console switch (an IdP and the fingerprint key).
const production = {
  MUNINN_ENV: 'production',
  MUNINN_AUTH_JWKS_URL: 'https://idp.example/jwks',
  MUNINN_FINGERPRINT_KEY: 'k'.repeat(32),
  MUNINN_AUDIT_KEY: 'a'.repeat(32),
};

describe('MUNINN_CONSOLE', () => {
  it('defaults to on outside production and off in production', () => {
    expect(load({ ...base }).http.console).toBe(true);
    expect(load({ ...base, MUNINN_ENV: 'test' }).http.console).toBe(true);
    expect(load({ ...base, ...production }).http.console).toBe(false);
  });

  it('on/off (and true/false) override the default either way', () => {
    expect(load({ ...base, ...production, MUNINN_CONSOLE: 'on' }).http.console).toBe(true);
    expect(load({ ...base, MUNINN_CONSOLE: 'off' }).http.console).toBe(false);
    expect(load({ ...base, MUNINN_CONSOLE: 'false' }).http.console).toBe(false);
  });

  it('anything else is a config error naming the variable', () => {
    expect(() => load({ ...base, MUNINN_CONSOLE: 'maybe' })).toThrow(ConfigError);
    expect(() => load({ ...base, MUNINN_CONSOLE: 'maybe' })).toThrow(/MUNINN_CONSOLE/);
  });
});
