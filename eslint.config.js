// Type-aware lint with the layering rules of ARCHITECTURE.md ("Import rules") enforced, not remembered.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import prettier from 'eslint-config-prettier';

const useCases = ['records', 'projector', 'ingest', 'recall', 'handoff', 'lifecycle'];
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
  prettier,
);
