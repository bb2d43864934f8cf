import { describe, expect, it } from 'vitest';
import { commandTokenSource } from '../../src/client/token-command.ts';
import { isMuninnError } from '../../src/domain/errors.ts';

/** The credential helper behind MUNINN_HANDOFF_TOKEN_COMMAND: one run per token, failures say nothing of the output. */
describe('commandTokenSource', () => {
  it('runs the command for every token and returns its trimmed stdout', async () => {
    const source = commandTokenSource(
      `node -e "process.stdout.write('tok-' + process.hrtime.bigint() + '\\n')"`,
    );
    const [a, b] = [await source(), await source()];
    expect(a).toMatch(/^tok-\d+$/);
    expect(b).toMatch(/^tok-\d+$/);
    expect(a).not.toBe(b);
  });

  it('a failing, silent or multi-word command is UNAVAILABLE and the error carries none of its output', async () => {
    const cases = [
      ['echo SECRET-OUT; echo SECRET-ERR >&2; exit 4', /exited 4/],
      ['true', /printed no single token/],
      ['echo SECRET-OUT SECRET-TWO', /printed no single token/],
    ] as const;
    for (const [command, message] of cases) {
      const e: unknown = await commandTokenSource(command)().then(
        () => null,
        (x: unknown) => x,
      );
      expect(isMuninnError(e) && e.code).toBe('UNAVAILABLE');
      expect(String((e as Error).message)).toMatch(message);
      expect(JSON.stringify(e) + String((e as Error).message)).not.toMatch(/SECRET/);
    }
  });
});
