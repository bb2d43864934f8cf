import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import {
  decodeRaw,
  encodeEvent,
  parseWire,
  type DecodeResult,
  type LedgerEvent,
  type SealedPayload,
} from '../domain/events.ts';
import { merge, split } from '../domain/sealing.ts';
import { unavailable } from '../domain/errors.ts';
import type { KeyStore } from '../ports/key-store.ts';

/**
 * Crypto-shredding on the ledger's wire: `sealEvents` encrypts the personal part of each event (what
 * domain/sealing.ts names) under its item's data key before it is appended; `openEvent` decrypts it
 * when the projector or a rebuild reads it. When the key was destroyed, the event opens to its clear
 * part, with the markers in place of the personal fields: replay sees only what the tombstone leaves.
 * AES-256-GCM with a random 96-bit IV; the additional data binds a ciphertext to its event and key id,
 * so a sealed part cannot be moved onto another event.
 */
const ALG = 'aes-256-gcm';

export async function sealEvents(events: readonly LedgerEvent[], keys: KeyStore): Promise<string[]> {
  const splits = events.map(split);
  const ids = splits.flatMap((s) => (s ? [s.keyId] : []));
  const keyOf = ids.length ? await keys.forSealing(ids) : new Map<string, Uint8Array>();
  return events.map((e, i) => {
    const s = splits[i];
    if (!s) return encodeEvent(e);
    const key = keyOf.get(s.keyId);
    if (!key) throw new Error(`no data key for ${s.keyId}`);
    const sealed = seal(key, s.keyId, e.eventId, JSON.stringify(s.secret));
    return JSON.stringify({ ...e, payload: s.clear, sealed });
  });
}

export async function openEvent(bytes: Uint8Array | string, keys: KeyStore): Promise<DecodeResult> {
  const p = parseWire(bytes);
  if (!p.ok) return p;
  const sealed = p.wire.sealed;
  if (!sealed) return decodeRaw(p.raw);
  const key = await keys.forOpening(sealed.keyId);
  if (!key) {
    // Key destroyed: the item was erased; its clear part (markers in place of the personal fields) is all
    // there is. A key this store never held is another matter: a process bound to the wrong key store (or
    // one restored without its keys) would otherwise project blanked records as if they had been erased.
    // It is refused as retryable, so the projector stops at this event and resumes once the keys are there.
    if ((await keys.state(sealed.keyId)) === 'DESTROYED') return decodeRaw(p.raw);
    throw unavailable(
      'a sealed event names a data key this key store does not hold: every process must share the key store (MUNINN_KEY_DIR)',
    );
  }
  let secret: unknown;
  try {
    secret = JSON.parse(unseal(key, sealed, p.wire.eventId));
  } catch {
    return { ok: false, reason: 'sealed payload does not open under its key', retryableAfterUpgrade: false };
  }
  const clear = (p.raw['payload'] ?? {}) as Record<string, unknown>;
  return decodeRaw({ ...p.raw, payload: merge(clear, secret as Record<string, unknown>) });
}

function seal(key: Uint8Array, keyId: string, eventId: string, plaintext: string): SealedPayload {
  const iv = randomBytes(12);
  const c = createCipheriv(ALG, key, iv);
  c.setAAD(Buffer.from(`${eventId}\u0000${keyId}`));
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final(), c.getAuthTag()]);
  return { keyId, alg: 'A256GCM', iv: iv.toString('base64'), ciphertext: ct.toString('base64') };
}

function unseal(key: Uint8Array, s: SealedPayload, eventId: string): string {
  const all = Buffer.from(s.ciphertext, 'base64');
  const d = createDecipheriv(ALG, key, Buffer.from(s.iv, 'base64'));
  d.setAAD(Buffer.from(`${eventId}\u0000${s.keyId}`));
  d.setAuthTag(all.subarray(all.length - 16));
  return Buffer.concat([d.update(all.subarray(0, all.length - 16)), d.final()]).toString('utf8');
}
