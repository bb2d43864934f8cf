/** Where a write's time went, per stage, for the log line and the ingest benchmark. */
export class StageTimes {
  readonly ms: Record<string, number> = {};
  async time<T>(stage: string, fn: () => Promise<T> | T): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.add(stage, performance.now() - t0);
    }
  }
  add(stage: string, ms: number): void {
    this.ms[stage] = (this.ms[stage] ?? 0) + ms;
  }
  rounded(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.ms).map(([k, v]) => [k, Math.round(v * 10) / 10]));
  }
}
