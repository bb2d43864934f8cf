import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, type FileHandle } from 'node:fs/promises';
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
 * its own. Entries are written in call order; a crash loses at most what the OS had not written yet,
 * never the order of what it had.
 *
 * Why one open handle and batches: every recall and write appends an entry, and opening, writing and
 * closing the file for each cost the API's event loop ~0.5 ms a recall (a CPU profile at 8 callers).
 * While one write is in flight, the entries that arrive wait and go out together in the next write.
 */
export class FileAuditLog implements AuditLog {
  private seq = 0;
  private prev = GENESIS;
  private tail: Promise<void> = Promise.resolve();
  /** Lines waiting for the write after the one in flight, and that write's outcome. */
  private next: { lines: string[]; written: Promise<void> } | undefined;
  private handle: Promise<FileHandle> | undefined;

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
    if (!this.next) {
      const batch: { lines: string[]; written: Promise<void> } = { lines: [], written: Promise.resolve() };
      batch.written = this.tail.then(() => {
        this.next = undefined; // entries from here on go in the write after this one
        return this.write(batch.lines.join(''));
      });
      this.tail = batch.written.catch(() => undefined);
      this.next = batch;
    }
    this.next.lines.push(`${JSON.stringify(entry)}\n`);
    return this.next.written;
  }

  private async write(text: string): Promise<void> {
    this.handle ??= open(this.file, 'a', 0o600);
    try {
      await (await this.handle).appendFile(text);
    } catch (e) {
      // A handle that failed is dropped (the next write opens the file again); the entries fail with it.
      await this.closeHandle();
      throw e;
    }
  }

  private async closeHandle(): Promise<void> {
    const h = this.handle;
    this.handle = undefined;
    await h?.then((fh) => fh.close()).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.tail;
    await this.closeHandle();
  }
}

/**
 * Every audit file in `dir`, each verified on its own (oldest first). A file's last line without its
 * newline is an append still being written by a running server (`inFlight`): its complete lines are
 * verified and that one is not, rather than named as tampering. Anywhere else a broken line fails.
 */
export async function verifyAuditDir(
  dir: string,
  key: string,
): Promise<Array<{ file: string; verdict: ChainVerdict; inFlight?: true }>> {
  const files = (await readdir(dir)).filter((f) => /^audit-.*\.jsonl$/.test(f)).sort();
  return Promise.all(
    files.map(async (f) => {
      const text = await readFile(join(dir, f), 'utf8');
      const end = text.lastIndexOf('\n') + 1;
      const verdict = verifyChain(key, text.slice(0, end).split('\n'));
      return end < text.length ? { file: f, verdict, inFlight: true as const } : { file: f, verdict };
    }),
  );
}
