import { describe, expect, it } from 'vitest';
import { type Props } from '../../src/adapters/neo4j/mapping.ts';
import { RECORD_VIEW_FIELDS, toRecordView } from '../../src/adapters/neo4j/view-mapping.ts';

/** recall.records projects RECORD_VIEW_FIELDS only: a property the view reads beyond them would read as absent. */
describe('RECORD_VIEW_FIELDS', () => {
  it('holds every Record property toRecordView reads', () => {
    const read = new Set<string>();
    const node: Props = new Proxy(
      { tenant: 't', id: 'r1', version: 1, confidence: 0.9, sourcesJson: '[]', extJson: '{}' },
      {
        get(target: Props, key: string | symbol) {
          if (typeof key === 'string') read.add(key);
          return target[key as string];
        },
      },
    );
    toRecordView(node, null, []);
    expect(read.size).toBeGreaterThan(20);
    expect([...read].filter((k) => !(RECORD_VIEW_FIELDS as readonly string[]).includes(k))).toEqual([]);
  });

  it('leaves out the embedding', () => {
    expect(RECORD_VIEW_FIELDS).not.toContain('embedding');
  });
});
