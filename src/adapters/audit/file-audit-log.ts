import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  chainEntry,
  GENESIS,
  verifyChain,
  type AuditFacts,
  type ChainVerdict,
} from '../../domain/audit-chain.ts';
import type { AuditLog } from '../../ports/audit.ts';

/**
 * The audit trail as hash-chained JSON lines, apart from the ledger (which holds memory's facts, is
 * shared by every reader of the topic and must not grow with every read). One file per process run
 * (`audit-<start>-<pid>-<id>.jsonl`): processes never interleave in one chain, and each file verifies on
 * its own. Entries are appended in call order through one queue; a crash loses at most what the OS had
 * not written yet, never the order of what it had.
 */
export class FileAuditLog implements AuditLog {
  private seq = 0;
  private prev = GENESIS;
  private tail: Promise<void> = Promise.resolve();

  private constructor(
    private readonly key: string,
    readonly file: string,
  ) {}

  static async open(dir: string, key: string): Promise<FileAuditLog> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    return new FileAuditLog(
      key,
      join(dir, `audit-${stamp}-${process.pid}-${randomUUID().slice(0, 8)}.jsonl`),
    );
  }

  append(facts: AuditFacts): Promise<void> {
    const entry = chainEntry(this.key, facts, ++this.seq, this.prev);
    this.prev = entry.mac;
    const line = `${JSON.stringify(entry)}\n`;
    const write = this.tail.then(() => appendFile(this.file, line, { mode: 0o600 }));
    this.tail = write.catch(() => undefined);
    return write;
  }

  close(): Promise<void> {
    return this.tail;
  }
}

/** Every audit file in `dir`, each verified on its own (oldest first). */
export async function verifyAuditDir(
  dir: string,
  key: string,
): Promise<Array<{ file: string; verdict: ChainVerdict }>> {
  const files = (await readdir(dir)).filter((f) => /^audit-.*\.jsonl$/.test(f)).sort();
  return Promise.all(
    files.map(async (f) => ({
      file: f,
      verdict: verifyChain(key, (await readFile(join(dir, f), 'utf8')).split('\n')),
    })),
  );
}
