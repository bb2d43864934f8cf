import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withMigrationLock } from '../../src/adapters/neo4j/migration-lock.ts';
import { startApp, type TestApp } from '../support/harness.ts';

/**
 * Migrating is one process at a time: holders of the migration lock never overlap, a waiting one runs
 * after the holder releases, and a lease left by a killed holder lapses instead of blocking every start.
 * The counter below is read, then written after a pause: without the lock the increments would be lost.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(async () => {
  await app?.m.store.db.write('test.lockCleanup', 'MATCH (c:LockTestCounter {id: $id}) DELETE c', {
    id: KEY,
  });
  await app?.stop();
});

const db = () => app.m.store.db;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const KEY = `lock-test-${Date.now()}`;

async function counter(): Promise<number> {
  const r = await db().read('test.lockCounter', 'MATCH (c:LockTestCounter {id: $id}) RETURN c.n AS n', {
    id: KEY,
  });
  return Number(r.records[0]?.get('n') ?? 0);
}

describe('migration lock', () => {
  it('four concurrent holders run one at a time: no increment is lost', async () => {
    let inside = 0;
    let most = 0;
    const work = () =>
      withMigrationLock(
        db(),
        async () => {
          most = Math.max(most, ++inside);
          const n = await counter();
          await sleep(150);
          await db().write('test.lockCounter', 'MERGE (c:LockTestCounter {id: $id}) SET c.n = $n', {
            id: KEY,
            n: n + 1,
          });
          inside--;
        },
        { pollMs: 20 },
      );
    await Promise.all([work(), work(), work(), work()]);
    expect(most).toBe(1);
    expect(await counter()).toBe(4);
  });

  it('a lease left by a holder that died lapses, and the next process takes the lock', async () => {
    await db().write(
      'test.deadHolder',
      'MERGE (l:MigrationLock {id: "migrations"}) SET l.holder = "killed-process", l.until = $past',
      { past: Date.now() - 1 },
    );
    let ran = false;
    await withMigrationLock(db(), async () => {
      ran = true;
    });
    expect(ran).toBe(true);
    const r = await db().read(
      'test.lockState',
      'MATCH (l:MigrationLock {id: "migrations"}) RETURN l.holder AS h',
    );
    expect(r.records[0]?.get('h')).toBeNull();
  });

  it('a holder working past its lease renews it: nobody else gets in meanwhile', async () => {
    const order: string[] = [];
    const first = withMigrationLock(
      db(),
      async () => {
        order.push('first in');
        await sleep(5_000);
        order.push('first out');
      },
      { leaseMs: 2_000 },
    );
    await sleep(100);
    await withMigrationLock(db(), async () => void order.push('second'), { pollMs: 20, leaseMs: 2_000 });
    await first;
    expect(order).toEqual(['first in', 'first out', 'second']);
  });

  it('a live lease makes the next process wait until it is released', async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = withMigrationLock(db(), async () => {
      order.push('first in');
      await held;
      order.push('first out');
    });
    await sleep(100);
    const second = withMigrationLock(db(), async () => void order.push('second'), { pollMs: 20 });
    await sleep(300);
    expect(order).toEqual(['first in']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'first out', 'second']);
  });
});
