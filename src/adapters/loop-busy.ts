import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/**
 * How busy this process's event loop was over the last window (0–1): Node's event-loop utilisation,
 * sampled every `everyMs`. The write path's overload guard reads it (src/ingest/overload.ts). A saturated
 * loop samples late, so the window stretches with the load; the figure stays the share of busy time.
 * (The loop's delay was tried as the signal and does not show an overload: past the machine's rate the
 * backlog waits in the kernel's accept queue, and timers stayed under ~90 ms late.)
 */
export class LoopBusy {
  private last: EventLoopUtilization = performance.eventLoopUtilization();
  private value = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(everyMs = 250) {
    this.timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      this.value = performance.eventLoopUtilization(now, this.last).utilization;
      this.last = now;
    }, everyMs);
    this.timer.unref();
  }

  utilisation = (): number => this.value;

  close(): void {
    clearInterval(this.timer);
  }
}

let shared: LoopBusy | undefined;

/** The process's one sampler: the loop is the process's, so every service in it reads the same figure. */
export function processLoopBusy(): LoopBusy {
  shared ??= new LoopBusy();
  return shared;
}
