import { z } from 'zod';
import { parseCommand, Purpose } from '../domain/commands.ts';
import { badInput } from '../domain/errors.ts';
import type { Principal, Reader } from '../domain/principal.ts';
import type { AsOf, RecordQuery, RevisionView } from '../ports/graph.ts';
import type { ApiServices } from './services.ts';

/** GraphQL arguments → the services' inputs, for every resolver module. */
export type Args = Record<string, unknown>;
export const obj = (v: unknown): Args => (v && typeof v === 'object' ? (v as Args) : {});

export function asOfArg(v: unknown): AsOf {
  const a = obj(v);
  return {
    validAt: (a['validAt'] as string | undefined) ?? undefined,
    knownAt: (a['knownAt'] as string | undefined) ?? undefined,
  };
}

/** GraphQL passes omitted optional arguments as null; the services' schemas expect them absent. */
export function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== null && x !== undefined)
        .map(([k, x]) => [k, dropNulls(x)]),
    );
  }
  return v;
}

/** A RecordFilter argument → the store's RecordQuery (entity refs resolved as the caller sees them). */
export async function recordQuery(
  s: ApiServices,
  principal: Principal,
  filter: unknown,
): Promise<RecordQuery> {
  const f = dropNulls(obj(filter)) as Args;
  let aboutEntityIds: string[] | undefined;
  if (Array.isArray(f['about'])) {
    const found = await Promise.all(f['about'].map((ref) => s.records.entity(principal, ref)));
    aboutEntityIds = found.filter((e) => e !== undefined).map((e) => e.id);
  }
  return {
    namespace: String(f['namespace']),
    classes: f['classes'] as never,
    statuses: f['statuses'] as never,
    aboutEntityIds,
    predicate: f['predicate'] as string | undefined,
    textContains: f['textContains'] as string | undefined,
    changesetId: f['changesetId'] as string | undefined,
  };
}

/** The caller with the purpose the field states (`purpose` argument), checked like a command's. */
export function readerOf(principal: Principal, a: Args): Reader {
  const purpose = a['purpose'];
  if (purpose === undefined || purpose === null) return principal;
  return { ...principal, purpose: parseCommand(z.object({ purpose: Purpose }), { purpose }).purpose };
}

export const revision = (v: RevisionView) => ({
  ...v,
  statement: { subject: v.subject, predicate: v.predicate, object: v.object, text: v.text },
});

export function pageSize(v: unknown): number {
  const first = Number(v ?? 50);
  if (!Number.isInteger(first) || first < 1 || first > 500) throw badInput('first must be between 1 and 500');
  return first;
}
