import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A handle for an item in one recall: "h:" + the record id + "." + 16 hex of HMAC-SHA256(key, recallId
 * NUL recordId NUL caller). It names the record (so `feedback` and expansion need no server-side recall
 * log), proves that this recall returned it (so feedback cannot be forged for records never served) and
 * binds it to the caller it was served to (`iss|sub`): another caller's handle does not verify.
 */
export function handleFor(recallId: string, recordId: string, key = '', caller = ''): string {
  return `h:${recordId}.${mac(key, recallId, recordId, caller)}`;
}

const mac = (key: string, recallId: string, recordId: string, caller: string): string =>
  createHmac('sha256', key).update(`${recallId}\u0000${recordId}\u0000${caller}`).digest('hex').slice(0, 16);

const HANDLE_RE = /^h:(.+)\.([0-9a-f]{16})$/;

/**
 * The record id a handle names, by its form alone (no recall or caller to check the MAC against): what `expand`
 * reads. Naming a record grants nothing; the reader's entitlement decides, as for `record(id)`.
 */
export function recordNamedByHandle(handle: string): string | undefined {
  return HANDLE_RE.exec(handle)?.[1];
}

/** The record id a handle names, when the handle is one this recall (under this key) gave to `caller`. */
export function recordOfHandle(recallId: string, handle: string, key = '', caller = ''): string | undefined {
  const m = HANDLE_RE.exec(handle);
  if (!m) return undefined;
  const expected = Buffer.from(mac(key, recallId, m[1]!, caller));
  const given = Buffer.from(m[2]!);
  return expected.length === given.length && timingSafeEqual(expected, given) ? m[1] : undefined;
}
