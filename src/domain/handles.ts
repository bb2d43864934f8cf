import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A handle for an item in one recall: "h:" + the record id + "." + 16 hex of HMAC-SHA256(key, recallId
 * NUL recordId). It names the record (so `feedback` and expansion need no server-side recall log) and
 * proves that this recall returned it (so feedback cannot be forged for records never served).
 */
export function handleFor(recallId: string, recordId: string, key = ''): string {
  return `h:${recordId}.${mac(key, recallId, recordId)}`;
}

const mac = (key: string, recallId: string, recordId: string): string =>
  createHmac('sha256', key).update(`${recallId}\u0000${recordId}`).digest('hex').slice(0, 16);

/** The record id a handle names, when the handle is one this recall (under this key) gave out. */
export function recordOfHandle(recallId: string, handle: string, key = ''): string | undefined {
  const m = /^h:(.+)\.([0-9a-f]{16})$/.exec(handle);
  if (!m) return undefined;
  const expected = Buffer.from(mac(key, recallId, m[1]!));
  const given = Buffer.from(m[2]!);
  return expected.length === given.length && timingSafeEqual(expected, given) ? m[1] : undefined;
}
