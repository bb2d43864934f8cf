import { describe, expect, it } from 'vitest';
import { ConfigError, load } from '../../src/config/index.ts';

const base = { NEO4J_URI: 'bolt://127.0.0.1:7687', KAFKA_BROKERS: '127.0.0.1:9092' };

describe('MUNINN_METRICS_PORT / MUNINN_METRICS_HOST', () => {
  it('metrics are not served unless a port is given; the host defaults to loopback', () => {
    expect(load({ ...base }).metrics).toBeNull();
    expect(load({ ...base, MUNINN_METRICS_PORT: '9464' }).metrics).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(load({ ...base, MUNINN_METRICS_PORT: '9464', MUNINN_METRICS_HOST: '0.0.0.0' }).metrics).toEqual({
      host: '0.0.0.0',
      port: 9464,
    });
  });

  it('a port that is not one is a config error naming the variable', () => {
    expect(() => load({ ...base, MUNINN_METRICS_PORT: 'http' })).toThrow(ConfigError);
    expect(() => load({ ...base, MUNINN_METRICS_PORT: '70000' })).toThrow(/MUNINN_METRICS_PORT/);
  });
});

describe('MUNINN_OTLP_ENDPOINT', () => {
  it('off by default; a URL turns the OTLP exporter on; anything else is a config error', () => {
    expect(load({ ...base }).otlpEndpoint).toBeUndefined();
    const url = 'http://collector:4318/v1/traces';
    expect(load({ ...base, MUNINN_OTLP_ENDPOINT: url }).otlpEndpoint).toBe(url);
    expect(() => load({ ...base, MUNINN_OTLP_ENDPOINT: 'collector' })).toThrow(/MUNINN_OTLP_ENDPOINT/);
  });
});
