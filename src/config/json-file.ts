import { readFile } from 'node:fs/promises';
import type { z } from 'zod';

/**
 * A JSON file a setting names (the admission policy, the retention rules), checked against its schema
 * before anything starts: a bad file stops the process with every problem listed, `what` naming it.
 */
export async function loadJsonFile<S extends z.ZodType>(
  schema: S,
  file: string,
  what: string,
): Promise<z.output<S>> {
  const parsed = schema.safeParse(JSON.parse(await readFile(file, 'utf8')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid ${what} ${file}: ${problems}`);
  }
  return parsed.data;
}
