import { describe, expect, it } from 'vitest';
import { identifiersAgree, identifierTokens, mayMerge } from '../../src/domain/identifiers.ts';

describe('entity match: identifiers tell near-identical names apart', () => {
  it('identifier tokens are the alphanumeric runs holding a digit', () => {
    expect(identifierTokens('zephyr-53b947')).toEqual(['53b947']);
    expect(identifierTokens('Payments V2 (eu-1)')).toEqual(['1', 'v2']);
    expect(identifierTokens('Zephyr Cluster')).toEqual([]);
  });

  it('names whose identifiers differ do not agree, whatever else they share', () => {
    expect(identifiersAgree('zephyr-53b947', 'zephyr-76b778')).toBe(false);
    expect(identifiersAgree('payments-v1', 'payments-v2')).toBe(false);
    expect(identifiersAgree('postgres', 'postgres 15')).toBe(false);
  });

  it('names with the same identifiers, or none, agree (spelling and case aside)', () => {
    expect(identifiersAgree('Payments-V2', 'payments v2')).toBe(true);
    expect(identifiersAgree('zephyr cluster', 'Zephyr')).toBe(true);
  });

  it('a candidate may absorb a name that agrees with its name or any alias', () => {
    const e = { name: 'orders-db', aliases: ['orders db 3', 'ordb-3'] };
    expect(mayMerge('ORDB-3', e)).toBe(true);
    expect(mayMerge('orders-db-4', e)).toBe(false);
  });
});
