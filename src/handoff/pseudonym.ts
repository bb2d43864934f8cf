/**
 * Keyed pseudonyms (HMAC-SHA256). A plain hash of a predictable identifier is reversible by enumeration; an
 * HMAC under a runtime key is not. Every input is domain-separated by kind and source so a session id can never
 * collide with a message id. The key never leaves this closure; only `keyId` is exposed for rotation.
 */
import { createHmac } from 'node:crypto';
import type { PseudonymKey } from './ports.ts';

export type RefKind = 'owner' | 'session' | 'message' | 'revision' | 'fingerprint' | 'state';

export interface Pseudonymizer {
  readonly keyId: string;
  ref(kind: RefKind, ...parts: string[]): string;
}

export function createPseudonymizer(key: PseudonymKey): Pseudonymizer {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(key.keyId))
    throw new Error('pseudonym key id must be [A-Za-z0-9._-]{1,64}');
  if (key.secret.byteLength < 32) throw new Error('pseudonym key must be at least 32 bytes');
  const secret = Buffer.from(key.secret);
  return {
    keyId: key.keyId,
    ref(kind, ...parts) {
      const h = createHmac('sha256', secret);
      h.update(`muninn.pseudonym/1\u0000${kind}`);
      // Length-prefixed parts: unambiguous whatever the parts contain.
      for (const p of parts) h.update(`\u0000${Buffer.byteLength(p, 'utf8')}:${p}`);
      return h.digest('hex');
    },
  };
}
