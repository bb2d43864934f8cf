/**
 * One model's held vectors as rows of one WebAssembly memory, scored against a query by a SIMD kernel.
 *
 * Why: relate scores every new draft against its namespace's held vectors and the vector arm every recall
 * against its scope's, and in JavaScript a 384-d dot product costs ~0.2 µs (12 % of the API's busy time
 * in bench:ledger). The kernel below multiplies and adds four floats at a time (f32x4): ~0.03 µs a vector
 * here. It accumulates in 32 bits, as Neo4j's `vector.similarity.cosine` does, so scores differ from the
 * JavaScript loop's in the seventh digit; a ranking's ties (equal vectors) stay ties.
 *
 * Layout of the memory: row 0 holds the query, rows 1..n the vectors (each `dims` floats rounded up to a
 * multiple of 4, the rest zeros), and the n scores (f64) follow the last row. A memory is at least one
 * 64 KiB page, so the shards use this only from DENSE_FROM vectors (vector-shards.ts). Without WebAssembly
 * SIMD (`denseSupported` false) the shards keep scoring in JavaScript.
 */

type Kernel = (query: number, base: number, n: number, rowBytes: number, out: number) => void;

/** The part of the WebAssembly API used here (the runtime has it; this project's type libraries only name it). */
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (size: { initial: number }) => { readonly buffer: ArrayBuffer; grow(pages: number): number };
}
const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
const name = (s: string) => [...leb(s.length), ...Buffer.from(s)];
const get = (local: number) => [0x20, local];
const set = (local: number) => [0x21, local];
const i32 = (v: number) => [0x41, ...leb(v)];
const simd = (op: number, ...imm: number[]) => [0xfd, ...leb(op), ...imm];
const [QUERY, BASE, N, ROW_BYTES, OUT, I, J, ROW, ACC] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
const LOAD = (addr: number[]) => [...addr, ...simd(0x00, 4, 0)]; // v128.load, 16-byte aligned
const LANE = (lane: number) => [...get(ACC), ...simd(0x1f, lane)]; // f32x4.extract_lane

/** `(func (param query base n rowBytes out))`: out[i] = Σ row_i × query, for i < n, as f64. */
const BODY = [
  ...[2, 3, 0x7f, 1, 0x7b], // locals: i, j, row (i32); acc (v128)
  ...get(BASE),
  ...set(ROW),
  ...[0x02, 0x40, 0x03, 0x40], // block, loop: each row
  ...[...get(I), ...get(N), 0x4f, 0x0d, 1], // i >= n: done
  ...[...simd(0x0c, ...new Array<number>(16).fill(0)), ...set(ACC), ...i32(0), ...set(J)],
  ...[0x02, 0x40, 0x03, 0x40], // block, loop: four floats at a time
  ...[...get(J), ...get(ROW_BYTES), 0x4f, 0x0d, 1],
  ...get(ACC),
  ...LOAD([...get(ROW), ...get(J), 0x6a]),
  ...LOAD([...get(QUERY), ...get(J), 0x6a]),
  ...[...simd(0xe6, 1), ...simd(0xe4, 1), ...set(ACC)], // f32x4.mul, f32x4.add (LEB 230, 228)
  ...[...get(J), ...i32(16), 0x6a, ...set(J), 0x0c, 0, 0x0b, 0x0b],
  ...[...get(OUT), ...get(I), ...i32(3), 0x74, 0x6a], // &out[i]
  ...[...LANE(0), ...LANE(1), 0x92, ...LANE(2), 0x92, ...LANE(3), 0x92, 0xbb, 0x39, 3, 0], // f64.store
  ...[...get(ROW), ...get(ROW_BYTES), 0x6a, ...set(ROW)],
  ...[...get(I), ...i32(1), 0x6a, ...set(I), 0x0c, 0, 0x0b, 0x0b],
  0x0b,
];

const MODULE_BYTES = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
  ...section(1, [1, 0x60, 5, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0]),
  ...section(2, [1, ...name('e'), ...name('m'), 0x02, 0x00, 1]), // imports its memory
  ...section(3, [1, 0]),
  ...section(7, [1, ...name('s'), 0x00, 0]),
  ...section(10, [1, ...leb(BODY.length), ...BODY]),
]);

const compiled = ((): object | null => {
  try {
    return new wasm.Module(MODULE_BYTES);
  } catch {
    return null;
  }
})();

/** Whether this runtime has WebAssembly SIMD (Node ≥ 16.4 does). */
export const denseSupported = compiled !== null;

const PAGE = 65_536;

export class DenseRows {
  private readonly memory = new wasm.Memory({ initial: 1 });
  private readonly kernel: Kernel;
  private readonly width: number;
  private readonly rowBytes: number;
  private n = 0;

  constructor(readonly dims: number) {
    if (!compiled) throw new Error('WebAssembly SIMD is not available');
    this.kernel = new wasm.Instance(compiled, { e: { m: this.memory } }).exports['s'] as Kernel;
    this.width = Math.ceil(dims / 4) * 4;
    this.rowBytes = this.width * 4;
  }

  get size(): number {
    return this.n;
  }

  /** Room for the query, `rows` vectors and their scores. */
  private ensure(rows: number): void {
    const need = this.rowBytes * (rows + 1) + rows * 8;
    const have = this.memory.buffer.byteLength;
    if (need > have) this.memory.grow(Math.ceil((need - have) / PAGE));
  }

  private row(i: number): Float32Array {
    return new Float32Array(this.memory.buffer, this.rowBytes * i, this.width);
  }

  /** Appends `v` (of `dims` floats) as row n. */
  push(v: Float32Array): void {
    this.ensure(this.n + 1);
    const row = this.row(this.n + 1);
    row.set(v);
    row.fill(0, v.length); // the scores of an earlier call may lie here
    this.n++;
  }

  /** Replaces row `to` by row `from` (a swap-remove's move). */
  move(from: number, to: number): void {
    const f32 = new Float32Array(this.memory.buffer);
    f32.copyWithin((to + 1) * this.width, (from + 1) * this.width, (from + 2) * this.width);
  }

  /** Drops the last row. */
  pop(): void {
    this.n--;
  }

  /** The dot product of every row with `q` (of `dims` floats), in row order. */
  scores(q: Float32Array): Float64Array {
    this.ensure(this.n);
    const query = this.row(0);
    query.set(q);
    query.fill(0, q.length);
    const out = this.rowBytes * (this.n + 1);
    this.kernel(0, this.rowBytes, this.n, this.rowBytes, out);
    return new Float64Array(this.memory.buffer, out, this.n).slice();
  }
}
