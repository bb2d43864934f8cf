import type { Draft } from '../../src/ingest/plan.ts';

/** A statement on its way into the decide step (unit tests of plan and prepareDrafts): a FACT about billing. */
export const draft = (over: Partial<Draft> & { text?: string } = {}): Draft => {
  const { text, ...rest } = over;
  return {
    index: 0,
    class: 'FACT',
    statement: {
      subject: 'billing',
      predicate: 'stores',
      object: 'postgres',
      text: text ?? 'billing stores data in postgres',
    },
    about: [],
    sources: [],
    validFrom: '2026-06-01T10:00:00.000Z',
    validTo: null,
    timeSource: 'STATED',
    sensitivity: 'INTERNAL',
    flags: [],
    extractionConfidence: 1,
    rationale: null,
    ext: {},
    source: null,
    ...rest,
  };
};
