import { execFile } from 'node:child_process';
import { MuninnError } from '../domain/errors.ts';

/** Gives a bearer token for one call. */
export type TokenSource = () => Promise<string>;

const MAX_TOKEN_BYTES = 16 * 1024;

/**
 * A token per call from an operator-provided command (a credential helper: `sh -c COMMAND`, the token on its
 * stdout). The handoff contract accepts each token once (its `jti`), so a client of /handoff cannot hold a
 * static one. Neither the command's output nor its stderr is ever logged or put in an error: a failure
 * says only how the command ended.
 */
export function commandTokenSource(command: string, timeoutMs = 10_000): TokenSource {
  return () =>
    new Promise((resolve, reject) => {
      execFile(
        '/bin/sh',
        ['-c', command],
        { timeout: timeoutMs, maxBuffer: MAX_TOKEN_BYTES, windowsHide: true },
        (err, stdout) => {
          const token = typeof stdout === 'string' ? stdout.trim() : '';
          if (err || !/^[\x21-\x7e]+$/.test(token)) {
            const how = err
              ? err.killed
                ? 'timed out'
                : `exited ${typeof err.code === 'number' ? err.code : 'abnormally'}`
              : 'printed no single token';
            reject(new MuninnError('UNAVAILABLE', `the token command ${how}`));
            return;
          }
          resolve(token);
        },
      );
    });
}
