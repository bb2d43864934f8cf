import { badInput } from '../domain/errors.ts';
import { digest } from './render.ts';
import type { DeliveryProfile } from './profiles.ts';

/**
 * Puts Muninn's block into a file's text. Muninn owns exactly the lines from its begin line to its end
 * line; every byte outside them is kept as it was. A file without a block gets it appended (after one
 * blank line); a file with one gets it replaced in place. A file whose block was edited by hand (the
 * digest in its begin line no longer matches what is inside) is refused unless `force`, so that a sync
 * never silently throws a person's edit away. Two blocks, or a begin without an end, are refused.
 */
export interface SpliceResult {
  readonly text: string;
  readonly changed: boolean;
}

export function spliceBlock(
  profile: DeliveryProfile,
  existing: string | undefined,
  block: string,
  opts: { force?: boolean } = {},
): SpliceResult {
  if (existing === undefined) return { text: `${profile.newFilePreamble}${block}\n`, changed: true };
  const found = locate(profile, existing);
  if (!found) {
    const sep = existing === '' ? '' : existing.endsWith('\n') ? '\n' : '\n\n';
    return { text: `${existing}${sep}${block}\n`, changed: true };
  }
  if (!opts.force && editedByHand(found.beginLine, found.body))
    throw badInput('the Muninn block was edited by hand; propose the change in Muninn, or pass --force');
  const text = existing.slice(0, found.start) + block + existing.slice(found.end);
  return { text, changed: text !== existing };
}

interface Found {
  /** Offsets of the block: start of the begin line, end of the end line (before its line break). */
  readonly start: number;
  readonly end: number;
  readonly beginLine: string;
  readonly body: string;
}

function locate(profile: DeliveryProfile, text: string): Found | undefined {
  const [beginPrefix] = profile.fence.begin.split('{attrs}');
  const lines = text.split('\n');
  const begins: number[] = [];
  const ends: number[] = [];
  lines.forEach((l, i) => {
    const line = l.replace(/\r$/, '');
    if (line.startsWith(beginPrefix!)) begins.push(i);
    else if (line === profile.fence.end) ends.push(i);
  });
  if (begins.length === 0 && ends.length === 0) return undefined;
  if (begins.length !== 1 || ends.length !== 1 || ends[0]! < begins[0]!)
    throw badInput(
      'the file has a malformed Muninn block (one begin line and one end line after it expected)',
    );
  const offset = (line: number) => lines.slice(0, line).reduce((n, l) => n + l.length + 1, 0);
  const b = begins[0]!;
  const e = ends[0]!;
  const start = offset(b);
  const end = offset(e) + lines[e]!.replace(/\r$/, '').length;
  return {
    start,
    end,
    beginLine: lines[b]!,
    body: text.slice(offset(b + 1), offset(e)),
  };
}

function editedByHand(beginLine: string, body: string): boolean {
  const m = /\bsha256=([0-9a-f]{16})\b/.exec(beginLine);
  return !m || m[1] !== digest(body);
}
