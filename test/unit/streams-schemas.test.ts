import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventJsonSchemas, renderSchema } from '../../src/domain/event-schemas.ts';
import { EventTypes } from '../../src/domain/events.ts';

describe('streams/ JSON Schemas', () => {
  const generated = eventJsonSchemas();

  it.each(Object.keys(generated))('streams/%s matches the zod union (run `npm run gen` if not)', (file) => {
    const onDisk = readFileSync(new URL(`../../streams/${file}`, import.meta.url), 'utf8');
    expect(onDisk).toBe(renderSchema(generated[file]));
  });

  it('there is one schema per event type', () => {
    for (const t of EventTypes)
      expect(Object.keys(generated).some((f) => f.startsWith(`events/${t}.v`))).toBe(true);
  });
});
