import { mkdir, readdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TextFiles } from '../../ports/text-files.ts';
import { writeFileAtomic } from './atomic-file.ts';

const missing = (e: unknown) => (e as NodeJS.ErrnoException).code === 'ENOENT';

/** TextFiles on the local file system; writes are atomic (atomic-file.ts). */
export const nodeTextFiles: TextFiles = {
  async read(path) {
    try {
      return await readFile(path, 'utf8');
    } catch (e) {
      if (missing(e)) return undefined;
      throw e;
    }
  },
  async write(path, text, modes = {}) {
    await mkdir(dirname(path), { recursive: true, ...(modes.dirMode ? { mode: modes.dirMode } : {}) });
    await writeFileAtomic(path, text, modes.fileMode);
  },
  async list(dir) {
    try {
      return (await readdir(dir)).sort();
    } catch (e) {
      if (missing(e)) return undefined;
      throw e;
    }
  },
};
