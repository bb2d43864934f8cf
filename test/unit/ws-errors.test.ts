import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { formatGraphQLError } from '../../src/api/errors.ts';
import { badInput, forbidden, unavailable } from '../../src/domain/errors.ts';
import { silentLogger } from '../../src/ports/logger.ts';

/** The WebSocket path's errors take HTTP's wire shape (issue #9): a stable code, `retryable`, no internals. */
const format = formatGraphQLError(silentLogger);

describe('formatGraphQLError', () => {
  it('a validation error (no path, no cause) is BAD_USER_INPUT with its message', () => {
    const f = format(new GraphQLError('Cannot query field "nosuchfield" on type "Query".'));
    expect(f.extensions).toEqual({ code: 'BAD_USER_INPUT', retryable: false });
    expect(f.message).toContain('nosuchfield');
  });

  it('a variable coercion error caused by a GraphQLError is BAD_USER_INPUT', () => {
    const inner = new GraphQLError('Int cannot represent non-integer value: "x"');
    const f = format(new GraphQLError('Variable "$n" got invalid value "x"', { originalError: inner }));
    expect(f.extensions).toMatchObject({ code: 'BAD_USER_INPUT', retryable: false });
  });

  it('a MuninnError thrown in a resolver keeps its code and retryable flag', () => {
    const f = format(
      new GraphQLError('no', { path: ['propose'], originalError: forbidden('the write scope is required') }),
    );
    expect(f.extensions).toEqual({ code: 'FORBIDDEN', retryable: false });
    const u = format(new GraphQLError('x', { originalError: unavailable('ledger unavailable') }));
    expect(u.extensions).toMatchObject({ code: 'UNAVAILABLE', retryable: true });
  });

  it('a raw Error in a resolver is INTERNAL with an error id, its message masked', () => {
    const f = format(
      new GraphQLError('Maximum call stack size exceeded', {
        path: ['propose'],
        originalError: new RangeError('Maximum call stack size exceeded'),
      }),
    );
    expect(f.extensions).toMatchObject({ code: 'INTERNAL', retryable: false });
    expect(f.message).toMatch(/^internal error \([0-9a-f-]{36}\)$/);
  });

  it("a raw Error from a subscription's source stream (no path) is INTERNAL too, not the caller's fault", () => {
    const f = format(
      new GraphQLError('connect ECONNREFUSED 127.0.0.1:7687', {
        originalError: new Error('connect ECONNREFUSED 127.0.0.1:7687'),
      }),
    );
    expect(f.extensions).toMatchObject({ code: 'INTERNAL' });
    expect(JSON.stringify(f)).not.toContain('ECONNREFUSED');
  });

  it('a typed limit error keeps its limit facts', () => {
    const e = new GraphQLError('too many', {
      extensions: { code: 'RATE_LIMITED', limit: 'subscriptions', max: 10 },
    });
    expect(format(e).extensions).toEqual({
      code: 'RATE_LIMITED',
      limit: 'subscriptions',
      max: 10,
      retryable: true,
    });
  });

  it('a secret in a message or a detail is redacted every time, however many messages came before', () => {
    const pat = 'ghp_' + 'A1b2'.repeat(9);
    const leak = (i: number) =>
      format(
        new GraphQLError('bad', {
          path: ['propose'],
          originalError: badInput(`token ${pat} refused (${i})`, { [pat]: `v ${pat}` }),
        }),
      );
    // Clean strings are remembered (at most 1,024): more distinct clean messages than that pass between.
    const cleanOne = (i: number) =>
      format(new GraphQLError('bad', { path: ['propose'], originalError: badInput(`refused (${i})`) }));
    const first = [leak(0), leak(0)];
    for (let i = 0; i < 1500; i++) expect(cleanOne(i).message).toBe(`refused (${i})`);
    for (const f of [...first, leak(0), leak(1)]) {
      expect(JSON.stringify(f)).not.toContain(pat);
      expect(f.message).toContain('[secret:');
    }
  });
});
