import { describe, expect, it } from 'vitest';
import { LoopBusy } from '../../src/adapters/loop-busy.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LoopBusy', () => {
  it('reads near 1 after a window the loop spent computing, and near 0 after one it spent waiting', async () => {
    const b = new LoopBusy(100);
    try {
      await sleep(150);
      const end = Date.now() + 1000;
      while (Date.now() < end); // the loop is held: nothing else runs
      await sleep(20); // the sampler's late tick closes the busy window
      expect(b.utilisation()).toBeGreaterThan(0.7);
      await sleep(350); // idle windows
      expect(b.utilisation()).toBeLessThan(0.5);
    } finally {
      b.close();
    }
  });
});
