import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The layering rules fail the build: ESLint's Node API lints small fixture sources placed (virtually, by
 * file path) where the rules forbid them, with the repository's own eslint.config.js.
 */
const eslint = new ESLint({
  cwd: new URL('../..', import.meta.url).pathname,
  // The fixtures exist only in memory: the type-aware parser gives them TypeScript's default project.
  overrideConfig: {
    files: ['src/**/zone-fixture.ts'],
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['src/*/zone-fixture.ts', 'src/*/*/zone-fixture.ts'] },
      },
    },
  },
});

async function ruleErrors(
  filePath: string,
  code: string,
): Promise<Array<{ rule: string | null; message: string }>> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? [])
    .filter((m) => m.severity === 2)
    .map((m) => ({ rule: m.ruleId, message: m.message }));
}

// The first lint starts TypeScript's project service: seconds on a loaded machine.
describe('layering zones (eslint.config.js)', { timeout: 120_000 }, () => {
  it('an adapter importing a use case is an error', async () => {
    const errors = await ruleErrors(
      'src/adapters/neo4j/zone-fixture.ts',
      "import { rankLexical } from '../../recall/lexical.ts';\nexport const f = rankLexical;\n",
    );
    expect(errors).toContainEqual({
      rule: 'import-x/no-restricted-paths',
      message: expect.stringContaining('adapters implement ports: they never import a use case'),
    });
  });

  it('a use case importing node:fs (or node:fs/promises, fs) is an error', async () => {
    for (const mod of ['node:fs', 'node:fs/promises', 'fs']) {
      const errors = await ruleErrors(
        'src/recall/zone-fixture.ts',
        `import { readFile } from '${mod}';\nexport const f = readFile;\n`,
      );
      expect(errors, mod).toContainEqual({
        rule: '@typescript-eslint/no-restricted-imports',
        message: expect.stringContaining('a use case reaches files through a port, never node:fs'),
      });
    }
  });

  it('the handoff outbox importing node:fs is an error (it has no exemption)', async () => {
    for (const filePath of ['src/handoff/outbox.ts', 'src/handoff/zone-fixture.ts']) {
      const errors = await ruleErrors(
        filePath,
        "import { link } from 'node:fs/promises';\nexport const f = link;\n",
      );
      expect(errors, filePath).toContainEqual({
        rule: '@typescript-eslint/no-restricted-imports',
        message: expect.stringContaining('a use case reaches files through a port, never node:fs'),
      });
    }
  });

  it('eval importing an adapter, and config importing a use case, are errors', async () => {
    const evalErrors = await ruleErrors(
      'src/eval/zone-fixture.ts',
      "import { nodeTextFiles } from '../adapters/files/text-files.ts';\nexport const f = nodeTextFiles;\n",
    );
    expect(evalErrors.map((e) => e.rule)).toContain('import-x/no-restricted-paths');
    const configErrors = await ruleErrors(
      'src/config/zone-fixture.ts',
      "import { rankLexical } from '../recall/lexical.ts';\nexport const f = rankLexical;\n",
    );
    expect(configErrors).toContainEqual({
      rule: 'import-x/no-restricted-paths',
      message: expect.stringContaining('config imports only the domain'),
    });
  });

  it('a file over 400 lines or a function over 60 is an error; at the limits it is clean', async () => {
    // A function of `lines` lines: signature, accumulator, the sums, return, closing brace.
    const fn = (lines: number) =>
      `export function f(): number {\n  let s = 0;\n${'  s += 1;\n'.repeat(lines - 4)}  return s;\n}\n`;
    const long = await ruleErrors('src/recall/zone-fixture.ts', fn(61));
    expect(long.map((e) => e.rule)).toEqual(['max-lines-per-function']);
    expect(await ruleErrors('src/recall/zone-fixture.ts', fn(60))).toEqual([]);
    // Comments and blank lines count toward neither limit.
    const commented = fn(60).replace(/\n/g, '\n  // why\n\n').replace(/^/, '// why\n'.repeat(400));
    expect(await ruleErrors('src/recall/zone-fixture.ts', commented)).toEqual([]);
    const constants = (n: number) =>
      Array.from({ length: n }, (_, i) => `export const c${i} = ${i};`).join('\n') + '\n';
    const big = await ruleErrors('src/adapters/neo4j/zone-fixture.ts', constants(401));
    expect(big.map((e) => e.rule)).toEqual(['max-lines']);
    expect(await ruleErrors('src/adapters/neo4j/zone-fixture.ts', constants(400))).toEqual([]);
  });

  it('src importing a package package.json does not name as a dependency (a type too, a devDependency) is an error', async () => {
    const sources = [
      "import type { inspect } from 'cross-inspect';\nexport type F = typeof inspect;\n",
      "import { expect } from 'vitest';\nexport const f = expect;\n",
    ];
    for (const code of sources) {
      const errors = await ruleErrors('src/api/zone-fixture.ts', code);
      expect(
        errors.map((e) => e.rule),
        code,
      ).toEqual(['import-x/no-extraneous-dependencies']);
    }
    const named = "import type { IResolvers } from '@graphql-tools/utils';\nexport type R = IResolvers;\n";
    expect(await ruleErrors('src/api/zone-fixture.ts', named)).toEqual([]);
  });

  it('the same imports where they belong are clean', async () => {
    expect(
      await ruleErrors(
        'src/adapters/files/zone-fixture.ts',
        "import { readFile } from 'node:fs/promises';\nimport { terms } from '../../domain/lexical-terms.ts';\nexport const f = [readFile, terms];\n",
      ),
    ).toEqual([]);
  });

  it('a Cypher index hint that does not ask for a seek is an error; USING INDEX SEEK is clean', async () => {
    const plain = [
      'export const q = `MATCH (n:Record) USING INDEX n:Record(tenant, id) WHERE n.id = $id RETURN n`;\n',
      "export const q = 'MATCH (n:Record) USING INDEX n:Record(tenant, id) RETURN n';\n",
    ];
    for (const code of plain)
      expect(await ruleErrors('src/adapters/neo4j/zone-fixture.ts', code), code).toEqual([
        { rule: 'no-restricted-syntax', message: 'an index hint asks for a seek: USING INDEX SEEK' },
      ]);
    const seek = 'export const q = `MATCH (n:Record) USING INDEX SEEK n:Record(tenant, id) RETURN n`;\n';
    expect(await ruleErrors('src/adapters/neo4j/zone-fixture.ts', seek)).toEqual([]);
  });
});
