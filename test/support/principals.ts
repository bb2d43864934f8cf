import type { Principal } from '../../src/domain/principal.ts';

/** A writer's principal in `tenant`, for tests and benches that decide commands without the API. */
export const writerPrincipal = (tenant: string, iss = 'test', sub = 'writer'): Principal => ({
  iss,
  sub,
  tenant,
  scopes: new Set(['write']),
  actors: [],
  tokenId: undefined,
  expiresAt: undefined,
});
