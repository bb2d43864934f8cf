import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJsonFile } from '../../src/config/json-file.ts';
import { AdmissionPolicy } from '../../src/domain/admission.ts';
import { RetentionRules } from '../../src/domain/retention.ts';

const dir = mkdtempSync(join(tmpdir(), 'muninn-json-file-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('a JSON file a setting names (loadJsonFile)', () => {
  it('a valid file: its parsed value, defaults filled by the schema', async () => {
    const rules = await loadJsonFile(
      RetentionRules,
      file('rules.json', JSON.stringify([{ tenant: 'acme', namespace: 'acme/eng', eraseAfterDays: 30 }])),
      'retention rules',
    );
    expect(rules).toEqual([{ tenant: 'acme', namespace: 'acme/eng', eraseAfterDays: 30 }]);
  });

  it('an invalid file: one error naming the setting, the file and every problem with its path', async () => {
    const path = file('policy.json', JSON.stringify({ budgets: { perNamespace: 'lots' } }));
    const err = await loadJsonFile(AdmissionPolicy, path, 'admission policy').catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(new RegExp(`^invalid admission policy ${path}: .*budgets`));
  });

  it('not JSON: the parse error, not a default', async () => {
    await expect(loadJsonFile(RetentionRules, file('bad.json', '{ nope'), 'retention rules')).rejects.toThrow(
      SyntaxError,
    );
  });
});
