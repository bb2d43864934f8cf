import { z } from 'zod';
import { LedgerEvent, type EventType } from './events.ts';
import { CURRENT_VERSION, WireEvent } from './event-wire.ts';

/**
 * JSON Schemas of the ledger's events, generated from the zod union (the one source). Written into
 * streams/ by `npm run gen`; a unit test fails when the files there are stale.
 */
export function eventJsonSchemas(): Record<string, unknown> {
  const files: Record<string, unknown> = {};
  const opts = { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' } as const;
  for (const variant of LedgerEvent.options) {
    const type = variant.shape.type.value as EventType;
    const file = `events/${type}.v${CURRENT_VERSION[type]}.schema.json`;
    files[file] = {
      $id: `urn:muninn:event:${type}:v${CURRENT_VERSION[type]}`,
      title: type,
      ...z.toJSONSchema(variant, opts),
    };
  }
  files['ledger-event.schema.json'] = {
    $id: 'urn:muninn:ledger-event',
    title: 'LedgerEvent',
    ...z.toJSONSchema(LedgerEvent, opts),
  };
  files['wire-envelope.schema.json'] = {
    $id: 'urn:muninn:wire-envelope',
    title: 'WireEnvelope',
    ...z.toJSONSchema(WireEvent, opts),
  };
  return files;
}

export const renderSchema = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;
