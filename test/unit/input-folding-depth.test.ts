import { Kind, parseValue } from 'graphql';
import { describe, expect, it } from 'vitest';
import { JSONScalar, MAX_JSON_DEPTH } from '../../src/api/scalars.ts';
import { namespaceMatches, AdmissionPolicy } from '../../src/domain/admission.ts';
import { MAX_INPUT_DEPTH, parseCommand, ProposeCommand } from '../../src/domain/commands.ts';
import { NamespacePath, nestedDeeperThan, TenantId } from '../../src/domain/model.ts';
import { servicePrincipal } from '../../src/domain/principal.ts';

/** Issue #9: case-folded tenants and namespaces; a depth limit on JSON input (typed, never a stack overflow). */

const nest = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};
const code = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return (
      (e as { code?: unknown; extensions?: { code?: unknown } }).code ??
      (e as { extensions?: { code?: unknown } }).extensions?.code
    );
  }
  return 'no error';
};

describe('case folding', () => {
  it('a namespace in any case is the lower-case namespace', () => {
    expect(NamespacePath.parse('ACME/ENG')).toBe('acme/eng');
    expect(NamespacePath.parse('Acme/Platform/agent:Reviewer')).toBe('acme/platform/agent:reviewer');
    expect(NamespacePath.safeParse('ACME/has space').success).toBe(false);
  });

  it('a tenant in any case is the lower-case tenant, also for service principals', () => {
    expect(TenantId.parse('ACME')).toBe('acme');
    expect(servicePrincipal('curator', 'ACME').tenant).toBe('acme');
  });

  it('a command folds its namespace (so ACME/ENG and acme/eng are one namespace)', () => {
    const input = {
      namespace: 'ACME/ENG',
      class: 'FACT',
      statement: { subject: 's', predicate: 'p', object: 'o', text: 't' },
      purpose: 'test',
      idempotencyKey: 'k',
    };
    expect(parseCommand(ProposeCommand, input).namespace).toBe('acme/eng');
  });

  it('admission globs fold too, so a rule written in upper case keeps matching', () => {
    const policy = AdmissionPolicy.parse({ autoAdmit: [{ namespaces: ['ACME/**'] }] });
    const glob = policy.autoAdmit[0]!.namespaces[0]!;
    expect(glob).toBe('acme/**');
    expect(namespaceMatches(glob, NamespacePath.parse('Acme/Eng'))).toBe(true);
  });
});

describe('nesting depth', () => {
  it('nestedDeeperThan counts object/array levels and survives 1,000,000 levels', () => {
    expect(nestedDeeperThan(1, 0)).toBe(false);
    expect(nestedDeeperThan({}, 0)).toBe(true);
    expect(nestedDeeperThan(nest(3), 3)).toBe(false);
    expect(nestedDeeperThan(nest(4), 3)).toBe(true);
    expect(nestedDeeperThan([[[]]], 3)).toBe(false);
    expect(nestedDeeperThan(nest(1_000_000), 32)).toBe(true);
  });

  it(`the JSON scalar accepts ${MAX_JSON_DEPTH} levels and refuses one more with BAD_USER_INPUT`, () => {
    expect(JSONScalar.parseValue(nest(MAX_JSON_DEPTH))).toEqual(nest(MAX_JSON_DEPTH));
    expect(code(() => JSONScalar.parseValue(nest(MAX_JSON_DEPTH + 1)))).toBe('BAD_USER_INPUT');
    expect(code(() => JSONScalar.parseValue(nest(200_000)))).toBe('BAD_USER_INPUT');
  });

  it('the JSON scalar refuses a deep literal the same way', () => {
    const literal = (levels: number) => '{a:'.repeat(levels) + '1' + '}'.repeat(levels);
    const ok = parseValue(literal(MAX_JSON_DEPTH));
    expect(ok.kind).toBe(Kind.OBJECT);
    expect(JSONScalar.parseLiteral(ok, undefined)).toEqual(nest(MAX_JSON_DEPTH));
    expect(code(() => JSONScalar.parseLiteral(parseValue(literal(MAX_JSON_DEPTH + 1)), undefined))).toBe(
      'BAD_USER_INPUT',
    );
  });

  it(`parseCommand refuses input nested deeper than ${MAX_INPUT_DEPTH} levels before recursing into it`, () => {
    const input = {
      namespace: 'acme',
      class: 'FACT',
      statement: { subject: 's', predicate: 'p', object: 'o', text: 't' },
      purpose: 'test',
      idempotencyKey: 'k',
      ext: { 'x:deep': nest(500_000) },
    };
    expect(code(() => parseCommand(ProposeCommand, input, 20_000))).toBe('BAD_USER_INPUT');
  });
});
