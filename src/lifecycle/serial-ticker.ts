import { MuninnError } from '../domain/errors.ts';
import type { Logger } from '../ports/logger.ts';

/** Only the error's class and code reach the log: a message could quote what a job is working on. */
export const errName = (e: unknown): string =>
  e instanceof MuninnError ? e.code : e instanceof Error ? e.name : 'unknown';

/**
 * A background job of the projector process (retention, the steward): it runs now, then every interval,
 * and runs never overlap — a tick, or a caller of `runOnce`, during a run waits for it first.
 */
export class SerialTicker<T> {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<T> | undefined;

  constructor(
    private readonly job: () => Promise<T>,
    private readonly o: { readonly name: string; readonly intervalMs: number; readonly logger: Logger },
  ) {}

  start(): void {
    const tick = () => {
      this.runOnce().catch((e: unknown) =>
        this.o.logger.error({ event: `${this.o.name}_failed`, err: errName(e) }, `${this.o.name} run failed`),
      );
    };
    tick();
    this.timer = setInterval(tick, this.o.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.current?.catch(() => undefined);
  }

  async runOnce(): Promise<T> {
    while (this.current) await this.current.catch(() => undefined);
    this.current = this.job();
    try {
      return await this.current;
    } finally {
      this.current = undefined;
    }
  }
}
