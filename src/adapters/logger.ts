import { pino } from 'pino';
import type { Logger } from '../ports/logger.ts';

/** pino, writing JSON lines to stderr (stdout stays free for CLI output). */
export function createLogger(
  level: string,
  name = 'muninn',
  destination: NodeJS.WritableStream | undefined = undefined,
): Logger {
  return pino(
    {
      name,
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Defence in depth: even if a caller logs one of these by mistake, it is not written.
      redact: {
        paths: [
          'token',
          'authorization',
          '*.token',
          '*.authorization',
          'headers.authorization',
          'password',
          '*.password',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination(2),
  );
}
