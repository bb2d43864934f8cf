import { defineConfig } from 'vitest/config';

// graphql ships ESM and CJS builds; Apollo loads the CJS one. Pin one copy so schemas built in tests
// and in Apollo come from the same realm.
const resolve = { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] };

export default defineConfig({
  resolve,
  test: {
    projects: [
      {
        resolve,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node' },
      },
      {
        resolve,
        // The Cypher each read and arm sends, captured by a recording executor: no database.
        test: { name: 'cypher', include: ['test/cypher/**/*.test.ts'], environment: 'node' },
      },
      {
        resolve,
        test: {
          name: 'int',
          include: ['test/int/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/contract/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          // One Neo4j database and one Kafka broker are shared: files run one after another.
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
