// A credential helper for tests of `muninn curate` (MUNINN_HANDOFF_TOKEN_COMMAND): prints one fresh dev token
// (its own jti) per run, like `muninn token` but without loading the whole CLI (that costs seconds a call).
// Usage: node --import tsx test/support/dev-token.ts <stateDir> <audience> <tenant> <sub> <scopes,…>
import { signDevToken } from '../../src/adapters/auth/dev-keys.ts';

const [stateDir, audience, tenant, sub, scopes] = process.argv.slice(2);
if (!stateDir || !audience || !tenant || !sub || !scopes) {
  process.stderr.write('usage: dev-token.ts <stateDir> <audience> <tenant> <sub> <scopes>\n');
  process.exit(2);
}
process.stdout.write(
  `${await signDevToken({ stateDir, issuer: 'muninn-dev', audience, tenant, sub, scopes: scopes.split(','), ttlSeconds: 120 })}\n`,
);
