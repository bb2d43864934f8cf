// Type-aware lint with the layering rules of ARCHITECTURE.md ("Import rules") enforced, not remembered.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import prettier from 'eslint-config-prettier';

const useCases = ['records', 'projector', 'ingest', 'recall', 'handoff', 'lifecycle'];
/** Use cases that reach files: they do it through a port (src/ports/text-files.ts, outbox.ts), never node:fs. */
const noFsIn = [...useCases, 'delivery', 'eval'];
const fsModules = ['fs', 'node:fs', 'fs/promises', 'node:fs/promises'];
const vendorSdks = [
  'neo4j-driver',
  'kafkajs',
  'jose',
  'pino',
  'onnxruntime-node',
  'prom-client',
  '@opentelemetry/api',
  '@opentelemetry/sdk-trace',
  '@opentelemetry/exporter-trace-otlp-http',
];

export default tseslint.config(
  { ignores: ['node_modules/', '.stack/', '.muninn/', 'coverage/', 'dist/', 'stack/'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.js', '.mjs'] })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
      'import-x/no-self-import': 'error',
      'no-restricted-imports': 'off',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // What src/ imports is what package.json names as a dependency (type-only imports too): a package
      // reached only through another's dependencies can vanish with that package's next release.
      'import-x/no-extraneous-dependencies': ['error', { devDependencies: false, includeTypes: true }],
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './src/domain',
              from: './src',
              except: ['./domain'],
              message: 'domain imports nothing of ours',
            },
            {
              target: './src/ports',
              from: './src',
              except: ['./domain', './ports'],
              message: 'ports import only the domain',
            },
            ...useCases.map((u) => ({
              target: `./src/${u}`,
              from: './src',
              except: ['./domain', './ports', `./${u}`],
              message: 'a use case imports domain and ports, never adapters, the API or another use case',
            })),
            {
              target: './src/eval',
              from: './src',
              except: ['./domain', './ports', './eval', './recall', './ingest'],
              message: 'eval imports domain, ports and the use cases it measures, never adapters or surfaces',
            },
            {
              target: './src/config',
              from: './src',
              except: ['./domain', './config'],
              message: 'config imports only the domain',
            },
            {
              target: './src/adapters',
              from: [...noFsIn.map((u) => `./src/${u}`)],
              message: 'adapters implement ports: they never import a use case',
            },
            { target: './src/api', from: './src/adapters', message: 'the API never imports adapters' },
            { target: './src/mcp', from: './src/adapters', message: 'MCP never imports adapters' },
            {
              target: './src/adapters',
              from: ['./src/api', './src/mcp', './src/cli'],
              message: 'adapters do not depend on surfaces',
            },
          ],
        },
      ],
    },
  },
  {
    files: [
      'src/domain/**/*.ts',
      'src/ports/**/*.ts',
      'src/api/**/*.ts',
      'src/mcp/**/*.ts',
      ...useCases.map((u) => `src/${u}/**/*.ts`),
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: vendorSdks.map((name) => ({ name, message: 'vendor SDKs live in src/adapters only' })) },
      ],
    },
  },
  {
    // Use cases reach files through a port; the file system lives in src/adapters (files/).
    files: noFsIn.map((u) => `src/${u}/**/*.ts`),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...vendorSdks.map((name) => ({ name, message: 'vendor SDKs live in src/adapters only' })),
            ...fsModules.map((name) => ({
              name,
              message: 'a use case reaches files through a port, never node:fs',
            })),
          ],
        },
      ],
    },
  },
  {
    // An index hint in Cypher asks for a seek: a plain `USING INDEX` lets Neo4j scan the named index, and a
    // plan made over an empty graph did, and kept doing it as the graph grew (README, "Plans made over an
    // empty graph").
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'TemplateElement[value.raw=/USING INDEX (?!SEEK )/], Literal[value=/USING INDEX (?!SEEK )/]',
          message: 'an index hint asks for a seek: USING INDEX SEEK',
        },
      ],
    },
  },
  {
    // The size standard: files under ~400 lines, functions under ~60, blank lines and
    // comments not counted. A factory returning a closure-object counts as one function: lift its parts.
    files: ['src/**/*.ts', 'src/**/*.js'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  prettier,
);
