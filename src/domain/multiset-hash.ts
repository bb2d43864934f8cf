import { createHash } from 'node:crypto';

const MOD = (1n << 256n) - 1n;

/**
 * A digest of a multiset of lines that does not depend on their order: the sum modulo 2^256 of each
 * line's SHA-256, then the SHA-256 of that sum and the number of lines. Equal multisets give equal
 * digests; a line added, dropped, changed or repeated changes it.
 *
 * Why: the graph's state hash (GraphAdmin.stateHash: live against rebuilt) sorted every line of the
 * canonical dump and hashed them in order, which needs the whole dump in memory at once. A graph of
 * ~135k embedded records here exceeded the heap. Summing lets the dump stream through, a row at a time.
 */
export class MultisetHash {
  private sum = 0n;
  private n = 0;

  add(line: string): void {
    this.sum = (this.sum + BigInt(`0x${createHash('sha256').update(line).digest('hex')}`)) & MOD;
    this.n++;
  }

  digest(): string {
    return createHash('sha256')
      .update(`${this.sum.toString(16).padStart(64, '0')}:${this.n}`)
      .digest('hex');
  }
}
