import type { DecideContext } from '../../src/domain/commands.ts';
import type { Principal } from '../../src/domain/principal.ts';

/** A writer of tenant `acme` with no agents acting for it: the caller of unit tests that decide commands. */
export const writerPrincipal: Principal = {
  iss: 'https://issuer.test',
  sub: 'alice',
  tenant: 'acme',
  scopes: new Set(['write']),
  actors: [],
  tokenId: undefined,
  expiresAt: undefined,
};

/** A decide context at a fixed time whose ids count up: the same events on every run. */
export function decideContext(principal: Principal = writerPrincipal): DecideContext {
  let n = 0;
  return {
    principal,
    now: new Date('2024-05-01T10:00:00.000Z'),
    newId: () => `00000000-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`,
  };
}
