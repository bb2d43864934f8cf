import { afterAll, describe, expect, it } from 'vitest';
import type { Receipt } from '../../src/domain/fold.ts';
import { contractGraph } from '../support/contract-graph.ts';
import { recordState, unitVector } from '../support/record-state.ts';

/**
 * IngestLookups' receipts are read once the record they name can be read (ingest-lookups.ts,
 * READABLE_RECEIPT): an awaited write is answered from its receipt, and the writer's next call must find
 * the record. Neo4j applies one commit's index updates one after the other, and that moment cannot be
 * forced from outside, so the state "receipt found, record not yet" is written here as data: a receipt
 * whose record is not there, then the record.
 */

const c = await contractGraph('receipt-readable');
const { tenant, graph } = c;
afterAll(() => c.cleanup());

const note = (t: string, id: string) =>
  recordState({
    tenant: t,
    id,
    namespace: 'acme/eng',
    subject: id,
    text: `Note ${id}.`,
    embedding: { modelId: 'test', vector: unitVector(0, 8) },
  });
const receipt = (key: string, outcome: Receipt['outcome'], recordId: string | null): Receipt => ({
  tenant,
  idempotencyKey: key,
  commandHash: 'h',
  eventId: `00000000-0000-4000-8000-${key.replace(/\D/g, '').padStart(12, '0')}`,
  outcome,
  recordId,
  version: recordId ? 1 : null,
  reason: null,
  recordedAt: '2026-12-06T00:00:00.000Z',
});

describe('a receipt is read once its record can be', () => {
  it('not while the record it names is missing; then by key and by prefix once the record is there', async () => {
    await c.project({
      receipts: [receipt('k1', 'ADMITTED', 'r-1'), receipt('k1#stmt:0', 'ADMITTED', 'r-1')],
    });
    expect(await graph.lookups.receipt(tenant, 'k1')).toBeUndefined();
    expect(await graph.lookups.receiptsByPrefix(tenant, 'k1')).toEqual([]);

    await c.project({ records: [note(tenant, 'r-1')] });
    expect((await graph.lookups.receipt(tenant, 'k1'))?.recordId).toBe('r-1');
    expect((await graph.lookups.receiptsByPrefix(tenant, 'k1')).map((r) => r.idempotencyKey)).toEqual([
      'k1',
      'k1#stmt:0',
    ]);
  });

  it('a REJECTED receipt naming a record that does not exist, and one naming none, are read at once', async () => {
    await c.project({
      receipts: [receipt('k2', 'REJECTED', 'r-missing'), receipt('k3', 'ADMITTED', null)],
    });
    expect((await graph.lookups.receipt(tenant, 'k2'))?.outcome).toBe('REJECTED');
    expect((await graph.lookups.receipt(tenant, 'k3'))?.outcome).toBe('ADMITTED');
  });

  it("another tenant's record of the same id does not make the receipt readable", async () => {
    const o = await contractGraph('receipt-readable-other');
    try {
      await o.project({ records: [note(o.tenant, 'r-4')] });
      await c.project({ receipts: [receipt('k4', 'ADMITTED', 'r-4')] });
      expect(await graph.lookups.receipt(tenant, 'k4')).toBeUndefined();
    } finally {
      await o.cleanup();
    }
  });
});
