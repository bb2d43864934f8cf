import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { receiptKey } from '../../src/domain/commands.ts';
import { PROPOSE, proposal, type TestApp } from './harness.ts';

/** Helpers of the issue #9 write-side attack tests (test/e2e/hardening-write*.test.ts). */

export const APPROVE = `mutation A($input: ApproveInput!) { approve(input: $input) { outcome recordId version reason } }`;
export const GRANT = `mutation G($input: GrantAccessInput!) { grantAccess(input: $input) { outcome grantId reason } }`;
export const REVOKE = `mutation V($input: RevokeAccessInput!) { revokeAccess(input: $input) { outcome grantId reason } }`;
export const FEEDBACK = `mutation F($input: FeedbackInput!) { feedback(input: $input) { outcome recordId reason } }`;
const RECORD = `query R($id: ID!) { record(id: $id) { id status version approvedAt approvals { by via at } history { version status } } }`;
const RECALL = `query Q($input: RecallInput!) { recall(input: $input) {
  recallId envelope items { handle record { id utility } } } }`;

export type Receipt = {
  outcome: string;
  recordId: string | null;
  version: number | null;
  reason: string | null;
};
type Err = { message: string; extensions?: Record<string, unknown> };
export type RecordOut = {
  id: string;
  status: string;
  version: number;
  approvedAt: string | null;
  approvals: Array<{ by: string; via: string[]; at: string }>;
  history: Array<{ version: number; status: string }>;
};

/** Every write in these tests waits for its receipt (the assertions need them); a shared machine can be slow. */
export const AWAIT = { MUNINN_AWAIT_TIMEOUT_MS: '60000' };

export const who = (app: TestApp, sub: string) => ({ iss: app.config.auth.issuer, sub });
export const code = (r: { errors?: readonly Err[] | undefined }) => r.errors?.[0]?.extensions?.['code'];

export async function propose(a: TestApp, token: string, o: Record<string, unknown>): Promise<Receipt> {
  const r = await a.gql<{ propose: Receipt }>(token, PROPOSE, { input: proposal(o) });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  expect(r.data!.propose.outcome, 'projected within the await timeout').not.toBe('PENDING');
  return r.data!.propose;
}

/** A NORMATIVE proposal (the default policy queues it). */
export const norm = (text: string, namespace = 'acme/ops') => ({
  namespace,
  class: 'NORMATIVE',
  statement: { subject: `deploys-${randomUUID().slice(0, 6)}`, predicate: 'must', object: 'x', text },
});

export async function record(a: TestApp, token: string, id: string): Promise<RecordOut> {
  const r = await a.gql<{ record: RecordOut | null }>(token, RECORD, { id });
  expect(r.errors).toBeUndefined();
  expect(r.data!.record, `record ${id}`).toBeTruthy();
  return r.data!.record!;
}

export const approve = (a: TestApp, token: string, input: Record<string, unknown>) =>
  a.gql<{ approve: Receipt }>(token, APPROVE, { input });

/** The receipt a default (derived) approve key would leave in `sub`'s key space. */
export const approveReceipt = (a: TestApp, tenant: string, sub: string, id: string, version = 1) =>
  a.m.store.receipt(tenant, receiptKey(who(a, sub), `approve:${id}:v${version}`, 'derived'));

export async function recall(a: TestApp, token: string, query: string, namespace = 'acme') {
  const r = await a.gql<{
    recall: {
      recallId: string;
      envelope: string;
      items: Array<{ handle: string; record: { id: string; utility: number } }>;
    };
  }>(token, RECALL, { input: { query, namespace, purpose: 'code-change', recipe: 'bm25' } });
  expect(r.errors).toBeUndefined();
  return r.data!.recall;
}
export const instructions = (envelope: string) =>
  /<muninn-instructions[^>]*>([\s\S]*?)<\/muninn-instructions>/.exec(envelope)?.[1] ?? '';
export const memory = (envelope: string) =>
  /<muninn-memory[^>]*>([\s\S]*?)<\/muninn-memory>/.exec(envelope)?.[1] ?? '';
