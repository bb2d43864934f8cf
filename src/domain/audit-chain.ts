import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from './canonical.ts';

/**
 * The audit trail's entries and their chain. Each entry names who asked (issuer, subject, the agents
 * acting for them), why (purpose), what (operation, and the ids it returned or wrote) and how it ended
 * (OK or the error code) — never a token, a query string or record text. Entries are chained: each
 * carries the MAC of the one before and its own MAC over its canonical JSON, keyed by the audit key.
 * Without the key an edited, inserted, dropped or reordered entry cannot be made to verify again; with
 * it, the chain shows the first entry that does not.
 */
export interface AuditFacts {
  readonly at: string;
  /** read or write: the GraphQL operation type (subscriptions are audited as reads). */
  readonly kind: 'read' | 'write';
  /** `query.recall`, `mutation.grant`, …: the first root field. */
  readonly op: string;
  readonly tenant: string;
  readonly who: string;
  /** The delegation chain, most recent actor first (iss|sub each). */
  readonly chain: readonly string[];
  readonly purpose: string | null;
  /** Ids the operation returned or wrote (records, entities, grants, holds …), first seen first. */
  readonly ids: readonly string[];
  readonly code: string;
}

export interface AuditEntry extends AuditFacts {
  readonly seq: number;
  readonly prev: string;
  readonly mac: string;
}

export const GENESIS = 'genesis';

const macOf = (key: string, body: Omit<AuditEntry, 'mac'>): string =>
  createHmac('sha256', key).update(canonicalJson(body)).digest('hex');

/** The next entry after `prev` (its MAC, or GENESIS) at position `seq`. */
export function chainEntry(key: string, facts: AuditFacts, seq: number, prev: string): AuditEntry {
  const body = { ...facts, seq, prev };
  return { ...body, mac: macOf(key, body) };
}

export type ChainVerdict =
  | { readonly ok: true; readonly entries: number; readonly head: string }
  | { readonly ok: false; readonly line: number; readonly reason: string };

/** Checks one file's lines in order: each parses, follows the one before, and carries its own MAC. */
export function verifyChain(key: string, lines: readonly string[]): ChainVerdict {
  let prev = GENESIS;
  let n = 0;
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    let e: AuditEntry;
    try {
      e = JSON.parse(line) as AuditEntry;
    } catch {
      return { ok: false, line: i + 1, reason: 'not JSON' };
    }
    if (e.seq !== n + 1)
      return { ok: false, line: i + 1, reason: `sequence ${e.seq} where ${n + 1} was due` };
    if (e.prev !== prev) return { ok: false, line: i + 1, reason: 'does not follow the entry before it' };
    const { mac, ...body } = e;
    const want = Buffer.from(macOf(key, body), 'hex');
    const got = Buffer.from(typeof mac === 'string' ? mac : '', 'hex');
    if (got.length !== want.length || !timingSafeEqual(got, want))
      return { ok: false, line: i + 1, reason: 'MAC does not match: the entry was changed' };
    prev = mac;
    n++;
  }
  return { ok: true, entries: n, head: prev };
}
