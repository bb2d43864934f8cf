import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Replace `path` with `data` so that a reader sees the old file or the new one, never a partial one, and
 * a crash keeps one of them: private temp file → fsync → rename over the target → fsync the directory.
 * (The outbox publishes with a hard link instead: it must never replace an existing name.)
 */
export async function writeFileAtomic(path: string, data: string, mode = 0o644): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.tmp-${process.pid}-${randomBytes(8).toString('hex')}`);
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}
