import { describe, expect, it } from 'vitest';
import { classifyAnswer, newTally } from '../bench/soak-load.ts';
import {
  slope,
  soakProblems,
  summarizeLiveHeap,
  summarizeRss,
  type SoakReport,
} from '../bench/soak-report.ts';

/** The soak's judgement (test/bench/soak.ts): how answers are classified and how RSS is summarized. */
describe('classifyAnswer', () => {
  it('data without errors is ok', () => {
    expect(classifyAnswer({ status: 200, data: { x: 1 }, errors: undefined })).toEqual({
      kind: 'ok',
      data: { x: 1 },
    });
  });

  it('a retryable refusal (the overload guard’s RATE_LIMITED) is expected, with its retryAfterMs', () => {
    const a = classifyAnswer({
      status: 200,
      data: null,
      errors: [
        { message: 'overloaded', extensions: { code: 'RATE_LIMITED', retryable: true, retryAfterMs: 700 } },
      ],
    });
    expect(a).toEqual({ kind: 'retryable', code: 'RATE_LIMITED', retryAfterMs: 700 });
  });

  it('UNAVAILABLE marked retryable is expected even without a retryAfterMs', () => {
    const a = classifyAnswer({
      status: 200,
      data: null,
      errors: [{ message: 'down', extensions: { code: 'UNAVAILABLE', retryable: true } }],
    });
    expect(a).toEqual({ kind: 'retryable', code: 'UNAVAILABLE', retryAfterMs: undefined });
  });

  it('any error that is not retryable is unexpected, also next to a retryable one', () => {
    const conflict = { message: 'stale', extensions: { code: 'CONFLICT', retryable: false } };
    const limited = { message: 'slow down', extensions: { code: 'RATE_LIMITED', retryable: true } };
    expect(classifyAnswer({ status: 200, data: null, errors: [conflict] }).kind).toBe('unexpected');
    expect(classifyAnswer({ status: 200, data: null, errors: [limited, conflict] }).kind).toBe('unexpected');
  });

  it('an answer with neither data nor errors (a 404 page) is unexpected', () => {
    expect(classifyAnswer({ status: 404, data: undefined, errors: undefined })).toEqual({
      kind: 'unexpected',
      detail: 'HTTP 404, no data and no errors',
    });
  });
});

describe('RSS summary', () => {
  it('slope is the least-squares slope', () => {
    expect(slope([0, 1, 2, 3].map((x) => ({ x, y: 3 * x + 1 })))).toBeCloseTo(3, 10);
    expect(slope([{ x: 1, y: 5 }])).toBeNaN();
  });

  it('start is the first sample after the warm-up; the slope covers the second half, in MiB/min', () => {
    // 100 MiB during a 60 s warm-up, then flat at 200 MiB for 4 minutes, then +1 MiB per minute.
    const samples = Array.from({ length: 601 }, (_, t) => ({
      t,
      kib: 1024 * (t < 60 ? 100 : t < 300 ? 200 : 200 + (t - 300) / 60),
    }));
    const s = summarizeRss(samples, 60, 600);
    expect(s.startMiB).toBe(200);
    expect(s.endMiB).toBe(205);
    expect(s.maxMiB).toBe(205);
    expect(s.growthMiB).toBe(5);
    expect(s.growthPct).toBeCloseTo(2.5, 10);
    expect(s.secondHalfSlopeMiBPerMin).toBeCloseTo(1, 10);
    expect(s.floorSlopeMiBPerMin).toBeCloseTo(1, 10);
  });

  it('a saw-tooth whose floor stays put has a flat floor slope', () => {
    // Garbage piles up for 29 s, then a collection brings RSS back to 300 MiB; the peaks rise over time.
    const samples = Array.from({ length: 601 }, (_, t) => ({
      t,
      kib: 1024 * (300 + (t % 30) * (1 + t / 300)),
    }));
    const s = summarizeRss(samples, 60, 600);
    expect(s.secondHalfSlopeMiBPerMin).toBeGreaterThan(0);
    expect(s.floorSlopeMiBPerMin).toBeCloseTo(0, 10);
  });
});

describe('live heap summary', () => {
  it('counts from the warm-up on: start, end, growth and the slope of heap used + ArrayBuffers, in MiB/min', () => {
    // 120 MiB while warming up (60 s), then 100 MiB live growing 0.5 MiB a minute; one sample every 30 s.
    const samples = Array.from({ length: 21 }, (_, i) => ({
      t: i * 30,
      usedMiB: i * 30 < 60 ? 110 : 90 + (0.5 * (i * 30 - 60)) / 60,
      backingMiB: 10,
    }));
    const s = summarizeLiveHeap(samples, 60);
    expect(s.samples).toBe(19);
    expect(s.startMiB).toBe(100);
    expect(s.endMiB).toBe(104.5);
    expect(s.growthMiB).toBeCloseTo(4.5, 10);
    expect(s.slopeMiBPerMin).toBeCloseTo(0.5, 10);
  });

  it('fewer than three samples after the warm-up give no slope', () => {
    const s = summarizeLiveHeap(
      [0, 70, 100].map((t) => ({ t, usedMiB: 50, backingMiB: 0 })),
      60,
    );
    expect(s.samples).toBe(2);
    expect(s.slopeMiBPerMin).toBeNaN();
  });
});

describe('soakProblems', () => {
  const report = (o: Partial<SoakReport> = {}): SoakReport => ({
    seconds: 600,
    warmupSeconds: 60,
    callers: 4,
    embedder: 'hashing',
    tenant: 't',
    tally: newTally(),
    ledger: { events: 10, keys: 10 },
    projection: { receipts: 10, caughtUp: true, drainSeconds: 1 },
    unprojected: 0,
    rss: summarizeRss(
      [0, 300, 600].map((t) => ({ t, kib: 200 * 1024 })),
      60,
      600,
    ),
    liveHeap: summarizeLiveHeap(
      [0, 300, 450, 600].map((t) => ({ t, usedMiB: 80, backingMiB: 20 })),
      60,
    ),
    serverErrors: [],
    exitCode: 0,
    ...o,
  });

  it('a clean run has none', () => {
    expect(soakProblems(report(), 5)).toEqual([]);
  });

  it('an unexpected answer, a ledger/projection mismatch, an unclean exit or a climbing live heap is one each', () => {
    const tally = newTally();
    tally.ops.recall.unexpected = 2;
    expect(soakProblems(report({ tally }), 5)).toEqual(['2 unexpected answers']);
    expect(soakProblems(report({ projection: { receipts: 9, caughtUp: true, drainSeconds: 1 } }), 5)).toEqual(
      ['ledger 10 commands ≠ projection 9 receipts'],
    );
    expect(soakProblems(report({ exitCode: null }), 5)).toEqual(['muninn exited with null after SIGTERM']);
    const climbing = summarizeLiveHeap(
      [60, 300, 600].map((t) => ({ t, usedMiB: 80 + t / 30, backingMiB: 0 })),
      60,
    );
    expect(soakProblems(report({ liveHeap: climbing }), 1)).toEqual([
      'the live heap grew 2.00 MiB/min after the warm-up (limit 1)',
    ]);
    // RSS is reported, not judged: its saw-tooth says nothing a 10-minute fit could trust.
    const rssClimbing = summarizeRss(
      [0, 300, 600].map((t) => ({ t, kib: (200 + t / 6) * 1024 })),
      60,
      600,
    );
    expect(soakProblems(report({ rss: rssClimbing }), 1)).toEqual([]);
  });
});
