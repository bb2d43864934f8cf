/**
 * The detection skeleton: what the screen's detectors read instead of the raw text, so that instruction-
 * shaped text or a credential hidden with invisible characters, compatibility forms or look-alike letters is
 * seen as what a reader (or the recall envelope, which also applies NFKC and drops invisibles) will see.
 *
 * Per code point, in order:
 *  - ASCII printable, tab, LF and CR are kept as they are (the fast path: pure-ASCII text without a backslash
 *    is its own skeleton); JSON escapes inside a string read as what they stand for (`\"` `\n` `\r` `\t`),
 *    so JSON quoted in a log line, an error message or a pasted payload is screened as the JSON it is;
 *  - other line breaks (VT, FF, NEL, LS, PS) become "\n"; other control characters are dropped;
 *  - invisible characters are dropped: format characters (zero-width space/joiners, word joiner, BOM, soft
 *    hyphen, bidi embeddings/overrides/isolates/marks, Unicode tag characters), variation selectors, the
 *    combining grapheme joiner and the Hangul fillers;
 *  - NFKD (fullwidth "ｉｇｎｏｒｅ", mathematical "𝐢𝐠𝐧𝐨𝐫𝐞", ligatures, superscripts → ASCII), combining marks
 *    dropped ("ïgnörè" → "ignore");
 *  - a small table of Latin look-alikes from Cyrillic, Greek, Armenian and IPA, plus dash, quote, colon and
 *    slash look-alikes, folded to ASCII. Only non-ASCII characters are folded: ASCII is never rewritten, so
 *    every ASCII credential reads exactly as written.
 *
 * The stored text is never the skeleton (folding would mangle real Cyrillic or Greek): detectors run on the
 * skeleton and every span they find is mapped back to the original through `from`/`to`.
 */

export interface Skeleton {
  /** The text detectors read. */
  readonly text: string;
  /**
   * For each UTF-16 unit of `text`, the [from, to) UTF-16 range of the original code point it came from.
   * Absent when `text` is the original (pure ASCII), i.e. the identity map.
   */
  readonly from?: readonly number[];
  readonly to?: readonly number[];
}

/** Text the fast path returns unchanged: printable ASCII, tab, LF, CR (and no backslash, see ESCAPES). */
const PLAIN = /^[\t\n\r\x20-\x7e]*$/;
const LINE_BREAKS = /^[\v\f\u0085\u2028\u2029]$/;
/** Same invisible set as the recall envelope (src/recall/envelope.ts), plus every control character. */
const INVISIBLE =
  /^(?:\p{Cc}|\p{Cf}|[\u034F\u115F\u1160\u3164\uFFA0\uFE00-\uFE0F]|[\u{E0100}-\u{E01EF}]|[\u{E0000}-\u{E007F}])$/u;
const MARKS = /\p{M}/gu;
const LONE_SURROGATE = /^[\uD800-\uDFFF]$/;

// prettier-ignore
/** Non-ASCII letters that read as Latin ones (after NFKD), and punctuation that reads as ASCII punctuation. */
const CONFUSABLES: Readonly<Record<string, string>> = {
  // Cyrillic
  'а': 'a', 'в': 'B', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i',
  'ј': 'j', 'һ': 'h', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'к': 'k', 'м': 'm', 'т': 't', 'ь': 'b',
  'п': 'n', 'г': 'r', 'ү': 'y', 'ɡ': 'g',
  'А': 'A', 'В': 'B', 'С': 'C', 'Е': 'E', 'Н': 'H', 'І': 'I', 'Ј': 'J', 'К': 'K', 'М': 'M', 'О': 'O',
  'Р': 'P', 'Ѕ': 'S', 'Т': 'T', 'Х': 'X', 'У': 'Y', 'Ү': 'Y', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ӏ': 'I', 'Ь': 'b',
  // Greek
  'α': 'a', 'β': 'B', 'γ': 'y', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't',
  'υ': 'u', 'χ': 'x', 'ϲ': 'c', 'ϳ': 'j', 'ω': 'w',
  'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
  'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'Ϲ': 'C',
  // Armenian, IPA and other Latin look-alikes
  'օ': 'o', 'ս': 'u', 'ց': 'g', 'հ': 'h', 'ո': 'n', 'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', 'ɩ': 'i', 'ʏ': 'y',
  'ᴀ': 'A', 'ʙ': 'B', 'ᴄ': 'C', 'ᴅ': 'D', 'ᴇ': 'E', 'ɢ': 'G', 'ʜ': 'H', 'ɪ': 'I', 'ᴊ': 'J', 'ᴋ': 'K',
  'ʟ': 'L', 'ᴍ': 'M', 'ɴ': 'N', 'ᴏ': 'O', 'ᴘ': 'P', 'ʀ': 'R', 'ꜱ': 'S', 'ᴛ': 'T', 'ᴜ': 'U', 'ᴠ': 'V',
  'ᴡ': 'W', 'ᴢ': 'Z',
  // Punctuation
  '\u2010': '-', '\u2011': '-', '\u2012': '-', '\u2013': '-', '\u2014': '-', '\u2015': '-', '\u2212': '-',
  '\u2018': "'", '\u2019': "'", '\u201B': "'", '\u2032': "'", '\u201C': '"', '\u201D': '"', '\u201F': '"',
  '\u2033': '"', '\u2236': ':', '\u02D0': ':', '\u02F8': ':', '\uA789': ':', '\u2044': '/', '\u2215': '/',
  '\u29F8': '/', '\u2039': '<', '\u203A': '>', '\u02C2': '<', '\u02C3': '>',
};

/** Folding cache for non-ASCII code points; bounded so that adversarial input cannot grow it without end. */
const cache = new Map<string, string>();
const CACHE_MAX = 4096;

function foldCodePoint(ch: string): string {
  const hit = cache.get(ch);
  if (hit !== undefined) return hit;
  let out: string;
  if (LINE_BREAKS.test(ch)) out = '\n';
  else if (INVISIBLE.test(ch)) out = '';
  else if (LONE_SURROGATE.test(ch)) out = '\uFFFD';
  else {
    out = '';
    for (const c of ch.normalize('NFKD').replace(MARKS, '')) out += CONFUSABLES[c] ?? c;
  }
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(ch, out);
  return out;
}

/**
 * Escapes read as what they stand for: a run of backslashes before `"`, `n`, `r` or `t` as that character
 * (a quote, LF, CR, tab), so JSON encoded once or several times unwraps; before anything else the run is
 * dropped (a credential with a backslash in it is then found whole, backslash included).
 */
const ESCAPES: Readonly<Record<string, string>> = { '"': '"', n: '\n', r: '\r', t: '\t' };

export function skeleton(original: string): Skeleton {
  if (PLAIN.test(original) && !original.includes('\\')) return { text: original };
  const parts: string[] = [];
  const from: number[] = [];
  const to: number[] = [];
  const emit = (out: string, start: number, end: number): void => {
    parts.push(out);
    for (let k = 0; k < out.length; k++) {
      from.push(start);
      to.push(end);
    }
  };
  for (let i = 0; i < original.length;) {
    const code = original.charCodeAt(i);
    if (code < 0x80) {
      // JSON escaped inside a string (logs, error messages, pasted payloads) reads as the JSON it is.
      if (code === 0x5c) {
        let j = i;
        while (original.charCodeAt(j) === 0x5c) j++;
        const escaped = ESCAPES[original.charAt(j)];
        if (escaped !== undefined) emit(escaped, i, j + 1);
        i = escaped === undefined ? j : j + 1;
        continue;
      }
      // ASCII: kept, except control characters other than tab, LF and CR.
      const keep = code >= 0x20 ? code !== 0x7f : code === 9 || code === 10 || code === 13;
      emit(keep ? original.charAt(i) : code === 0x0b || code === 0x0c ? '\n' : '', i, i + 1);
      i++;
      continue;
    }
    const width = original.codePointAt(i)! > 0xffff ? 2 : 1;
    emit(foldCodePoint(original.slice(i, i + width)), i, i + width);
    i += width;
  }
  return { text: parts.join(''), from, to };
}

/** The original [start, end) of a non-empty skeleton span [start, end). */
export function toOriginal(sk: Skeleton, start: number, end: number): { start: number; end: number } {
  if (!sk.from || !sk.to) return { start, end };
  return { start: sk.from[start] ?? 0, end: sk.to[end - 1] ?? 0 };
}
