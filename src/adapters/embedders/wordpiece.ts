/**
 * BERT uncased WordPiece tokenizer, as used by all-MiniLM-L6-v2 (HF `BertTokenizerFast` with
 * do_lower_case, tokenize_chinese_chars, strip_accents following lowercase).
 *
 * Normalization (HF BertNormalizer order): drop NUL, U+FFFD and control characters, map whitespace to ' ',
 * put spaces around CJK ideographs, strip accents (NFD, drop Mn), lowercase (per code point).
 * Pre-tokenization: split on whitespace, every punctuation character (ASCII punctuation or Unicode P*) is
 * its own token. WordPiece: greedy longest-match-first with `##` continuations; a word longer than 100
 * code points, or one that cannot be fully matched, becomes [UNK].
 *
 * One deliberate difference from HF: special-token text in the input ("[SEP]", "[MASK]"…) is tokenized as
 * ordinary text, never as the special token, so stored content cannot steer the model's segment structure.
 */
import { readFile } from 'node:fs/promises';

export const DEFAULT_MAX_TOKENS = 256;
const MAX_CHARS_PER_WORD = 100;

export interface EncodedBatch {
  readonly batchSize: number;
  readonly seqLen: number;
  /** Row-major [batchSize, seqLen]; padded with [PAD] (id 0 in the BERT vocab). */
  readonly inputIds: BigInt64Array;
  readonly attentionMask: BigInt64Array;
  readonly tokenTypeIds: BigInt64Array;
}

export interface WordPieceOptions {
  /** Total sequence length including [CLS] and [SEP]; default 256 (the sentence-transformers setting). */
  maxTokens?: number;
}

const isCjk = (cp: number): boolean =>
  (cp >= 0x4e00 && cp <= 0x9fff) ||
  (cp >= 0x3400 && cp <= 0x4dbf) ||
  (cp >= 0x20000 && cp <= 0x2a6df) ||
  (cp >= 0x2a700 && cp <= 0x2b73f) ||
  (cp >= 0x2b740 && cp <= 0x2b81f) ||
  (cp >= 0x2b820 && cp <= 0x2ceaf) ||
  (cp >= 0xf900 && cp <= 0xfaff) ||
  (cp >= 0x2f800 && cp <= 0x2fa1f);

const WHITESPACE = /^[\t\n\r \p{Zs}]$/u;
const CONTROL = /^[\p{Cc}\p{Cf}]$/u;
const PUNCT = /^\p{P}$/u;
const COMBINING = /\p{Mn}/gu;

const isWhitespace = (ch: string): boolean => WHITESPACE.test(ch);
const isControl = (ch: string): boolean => ch !== '\t' && ch !== '\n' && ch !== '\r' && CONTROL.test(ch);
const isPunctuation = (ch: string, cp: number): boolean =>
  (cp >= 33 && cp <= 47) ||
  (cp >= 58 && cp <= 64) ||
  (cp >= 91 && cp <= 96) ||
  (cp >= 123 && cp <= 126) ||
  PUNCT.test(ch);

/** Normalizes and splits into words and punctuation marks (the "basic tokenizer"). */
export function basicTokenize(text: string): string[] {
  // Clean, then isolate CJK ideographs with spaces.
  let cleaned = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0 || cp === 0xfffd || isControl(ch)) continue;
    if (isWhitespace(ch)) cleaned += ' ';
    else if (isCjk(cp)) cleaned += ` ${ch} `;
    else cleaned += ch;
  }
  // Strip accents, then lowercase code point by code point (no context-dependent casing such as final sigma).
  const stripped = cleaned.normalize('NFD').replace(COMBINING, '');
  const words: string[] = [];
  let current = '';
  for (const ch of stripped) {
    if (ch === ' ') {
      if (current) words.push(current);
      current = '';
    } else if (isPunctuation(ch, ch.codePointAt(0)!)) {
      if (current) words.push(current);
      current = '';
      words.push(ch.toLowerCase());
    } else {
      current += ch.toLowerCase();
    }
  }
  if (current) words.push(current);
  return words;
}

export class WordPieceTokenizer {
  readonly maxTokens: number;
  readonly clsId: number;
  readonly sepId: number;
  readonly padId: number;
  readonly unkId: number;
  private readonly vocab: ReadonlyMap<string, number>;
  private readonly idToToken: readonly string[];

  constructor(vocab: ReadonlyMap<string, number>, opts: WordPieceOptions = {}) {
    const maxTokens = opts.maxTokens ?? DEFAULT_MAX_TOKENS;
    if (!Number.isInteger(maxTokens) || maxTokens < 2)
      throw new RangeError('maxTokens must be an integer ≥ 2');
    this.maxTokens = maxTokens;
    this.vocab = vocab;
    const special = (t: string): number => {
      const id = vocab.get(t);
      if (id === undefined) throw new Error(`vocabulary lacks ${t}`);
      return id;
    };
    this.clsId = special('[CLS]');
    this.sepId = special('[SEP]');
    this.padId = special('[PAD]');
    this.unkId = special('[UNK]');
    const rev: string[] = [];
    for (const [tok, id] of vocab) rev[id] = tok;
    this.idToToken = rev;
  }

  /** Loads `vocab.txt` (one token per line, id = line number) or `tokenizer.json` (`model.vocab`). */
  static async fromFile(path: string, opts: WordPieceOptions = {}): Promise<WordPieceTokenizer> {
    const text = await readFile(path, 'utf8');
    return path.endsWith('.json')
      ? WordPieceTokenizer.fromTokenizerJson(text, opts)
      : WordPieceTokenizer.fromVocabTxt(text, opts);
  }

  static fromVocabTxt(text: string, opts: WordPieceOptions = {}): WordPieceTokenizer {
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    const vocab = new Map<string, number>();
    lines.forEach((line, i) => {
      const tok = line.endsWith('\r') ? line.slice(0, -1) : line;
      if (!vocab.has(tok)) vocab.set(tok, i);
    });
    return new WordPieceTokenizer(vocab, opts);
  }

  static fromTokenizerJson(text: string, opts: WordPieceOptions = {}): WordPieceTokenizer {
    const parsed = JSON.parse(text) as { model?: { type?: string; vocab?: unknown } };
    const v = parsed.model?.vocab;
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('tokenizer.json has no model.vocab');
    const vocab = new Map<string, number>();
    for (const [tok, id] of Object.entries(v as Record<string, unknown>)) {
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0)
        throw new Error(`bad vocab id for ${tok}`);
      vocab.set(tok, id);
    }
    return new WordPieceTokenizer(vocab, opts);
  }

  get vocabSize(): number {
    return this.idToToken.length;
  }

  tokenId(token: string): number | undefined {
    return this.vocab.get(token);
  }

  idToTokenString(id: number): string | undefined {
    return this.idToToken[id];
  }

  /** WordPiece pieces of one basic-tokenized word. */
  private wordPieces(word: string, out: number[]): void {
    const chars = Array.from(word);
    if (chars.length > MAX_CHARS_PER_WORD) {
      out.push(this.unkId);
      return;
    }
    const start = out.length;
    let i = 0;
    while (i < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (end > i) {
        const sub = (i > 0 ? '##' : '') + chars.slice(i, end).join('');
        found = this.vocab.get(sub);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) {
        out.length = start;
        out.push(this.unkId);
        return;
      }
      out.push(found);
      i = end;
    }
  }

  /** Token ids of `text` without [CLS]/[SEP] and without truncation. */
  tokenizeToIds(text: string): number[] {
    const ids: number[] = [];
    for (const word of basicTokenize(text)) this.wordPieces(word, ids);
    return ids;
  }

  /** Token strings of `text` without [CLS]/[SEP] (for tests and debugging). */
  tokenize(text: string): string[] {
    return this.tokenizeToIds(text).map((id) => this.idToToken[id] ?? '[UNK]');
  }

  /** [CLS] pieces… [SEP], truncated to `maxTokens` in total. */
  encode(text: string): number[] {
    const pieces = this.tokenizeToIds(text);
    const room = this.maxTokens - 2;
    if (pieces.length > room) pieces.length = room;
    return [this.clsId, ...pieces, this.sepId];
  }

  /** Encodes and pads a batch to its longest member. */
  encodeBatch(texts: readonly string[]): EncodedBatch {
    return this.padBatch(texts.map((t) => this.encode(t)));
  }

  /** Pads already-encoded rows (from `encode`) to the longest one. */
  padBatch(rows: readonly (readonly number[])[]): EncodedBatch {
    const seqLen = rows.reduce((m, r) => Math.max(m, r.length), 0);
    const n = rows.length * seqLen;
    const inputIds = new BigInt64Array(n).fill(BigInt(this.padId));
    const attentionMask = new BigInt64Array(n);
    const tokenTypeIds = new BigInt64Array(n);
    rows.forEach((row, b) => {
      const base = b * seqLen;
      for (let j = 0; j < row.length; j++) {
        inputIds[base + j] = BigInt(row[j]!);
        attentionMask[base + j] = 1n;
      }
    });
    return { batchSize: rows.length, seqLen, inputIds, attentionMask, tokenTypeIds };
  }
}
