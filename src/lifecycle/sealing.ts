import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { type LedgerEvent, type SealedPayload } from '../domain/events.ts';
import { decodeRaw, encodeEvent, parseWire, type DecodeResult } from '../domain/event-wire.ts';
import { merge, mergePart, partKeys, split, splitParts, type Part } from '../domain/sealing.ts';
import { unavailable } from '../domain/errors.ts';
import type { KeyStore } from '../ports/key-store.ts';

/**
 * Crypto-shredding on the ledger's wire: `sealEvents` encrypts the personal part of each event (what
 * domain/sealing.ts names) under its item's data key before it is appended; `openEvent` decrypts it
 * when the projector or a rebuild reads it. When the key was destroyed, the event opens to its clear
 * part, with the markers in place of the personal fields: replay sees only what the tombstone leaves.
 * An event about several items (a rollback) seals one part per item; each opens or stays marked alone.
 * AES-256-GCM with a random 96-bit IV; the additional data binds a ciphertext to its event and key id,
 * so a sealed part cannot be moved onto another event.
 */
const ALG = 'aes-256-gcm';

export async function sealEvents(events: readonly LedgerEvent[], keys: KeyStore): Promise<string[]> {
  const splits = events.map((e) => split(e) ?? splitParts(e));
  const ids = splits.flatMap((s) => (!s ? [] : 'keyId' in s ? [s.keyId] : s.parts.map((p) => p.keyId)));
  const keyOf = ids.length ? await keys.forSealing([...new Set(ids)]) : new Map<string, Uint8Array>();
  const sealPart = (eventId: string, p: Part): SealedPayload => {
    const key = keyOf.get(p.keyId);
    if (!key) throw new Error(`no data key for ${p.keyId}`);
    return seal(key, p.keyId, eventId, JSON.stringify(p.secret));
  };
  return events.map((e, i) => {
    const s = splits[i];
    if (!s) return encodeEvent(e);
    if ('keyId' in s) return JSON.stringify({ ...e, payload: s.clear, sealed: sealPart(e.eventId, s) });
    const sealedParts = s.parts.map((p) => sealPart(e.eventId, p));
    return JSON.stringify({ ...e, payload: s.clear, sealedParts });
  });
}

export async function openEvent(bytes: Uint8Array | string, keys: KeyStore): Promise<DecodeResult> {
  const p = parseWire(bytes);
  if (!p.ok) return p;
  const { sealed, sealedParts, eventId, tenant } = p.wire;
  if (!sealed && !sealedParts) return decodeRaw(p.raw);
  const clear = (p.raw['payload'] ?? {}) as Record<string, unknown>;
  // One part per compensation, in order: a part dropped or repeated would pass a record off as erased.
  if (sealedParts && sealedParts.map((s) => s.keyId).join('\n') !== partKeys(tenant, clear).join('\n'))
    return refused('sealed parts do not match the event');
  let payload: Record<string, unknown> | null = clear;
  for (const s of sealed ? [sealed] : sealedParts!) {
    const secret = await openPart(s, eventId, keys);
    if (secret === ERASED) continue;
    payload =
      secret && (sealed ? merge(payload, secret) : mergePart(tenant, payload, { keyId: s.keyId, secret }));
    if (!payload) return refused('sealed payload does not open under its key');
  }
  return decodeRaw({ ...p.raw, payload });
}

const refused = (reason: string): DecodeResult => ({ ok: false, reason, retryableAfterUpgrade: false });

const ERASED = Symbol('erased');

/** One sealed part opened; ERASED when its key was destroyed; null when it does not open under its key. */
async function openPart(
  s: SealedPayload,
  eventId: string,
  keys: KeyStore,
): Promise<Record<string, unknown> | null | typeof ERASED> {
  const key = await keys.forOpening(s.keyId);
  if (!key) {
    // Key destroyed: the item was erased; its clear part (markers in place of the personal fields) is all
    // there is. A key this store never held is another matter: a process bound to the wrong key store (or
    // one restored without its keys) would otherwise project blanked records as if they had been erased.
    // It is refused as retryable, so the projector stops at this event and resumes once the keys are there.
    if ((await keys.state(s.keyId)) === 'DESTROYED') return ERASED;
    throw unavailable(
      'a sealed event names a data key this key store does not hold: every process must share the key store (MUNINN_KEY_DIR)',
    );
  }
  try {
    return JSON.parse(unseal(key, s, eventId)) as Record<string, unknown>;
  } catch {
    return null;
  }
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
