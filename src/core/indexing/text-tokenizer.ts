/**
 * Words for the full-text index, snippets and title matching: lower-cased, accents folded, split on
 * anything that is not a letter or digit in any script ("Ümlaut", "日本語" and "naïve" stay words), common
 * English stop words dropped. Queries and documents go through the same function. Hand-written scanner:
 * on 30k chunks it is about twice as fast as a Unicode regex, and it is the hot loop of indexing.
 */
const STOP_WORDS = new Set(
  (
    "a an and are as at be but by for from has have he her his i if in into is it its me my no not of on or our " +
    "she so that the their them then there these they this to was we were what when which who will with you your"
  ).split(" "),
);

/** The longest token kept: longer runs are hashes, base64 or junk, never searched for. */
const MAX_TOKEN_LENGTH = 40;

const ASCII_WORD = new Uint8Array(128);
for (let c = 48; c <= 57; c++) ASCII_WORD[c] = 1;
for (let c = 97; c <= 122; c++) ASCII_WORD[c] = 1;
ASCII_WORD[95] = 1; // "_"

const otherWordChars = new Map<number, boolean>();
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

function isWordChar(c: number): boolean {
  if (c < 128) return ASCII_WORD[c] === 1;
  let known = otherWordChars.get(c);
  if (known === undefined) {
    // Surrogate halves are judged as a pair would be: letters of astral scripts are rare, treat as word.
    known = (c >= 0xd800 && c <= 0xdfff) || LETTER_OR_DIGIT.test(String.fromCharCode(c));
    if (otherWordChars.size < 65_536) otherWordChars.set(c, known);
  }
  return known;
}

export function tokenizeWords(text: string, keepStopWords = false): string[] {
  const out: string[] = [];
  forEachWord(text, (word) => out.push(word), keepStopWords);
  return out;
}

/**
 * The words of tokenizeWords, handed to `visit` one by one (no array: indexing calls this for every field
 * of every chunk, and the arrays were a large share of what a full build allocates). Returns the count.
 */
export function forEachWord(text: string, visit: (word: string) => void, keepStopWords = false): number {
  let s = text.toLowerCase();
  // eslint-disable-next-line no-control-regex -- the range means "any character outside ASCII"
  if (/[^\u0000-\u007f]/.test(s)) s = s.normalize("NFD").replace(/[\u0300-\u036f]/g, "");
  const n = s.length;
  let count = 0;
  let i = 0;
  while (i < n) {
    while (i < n && !isWordChar(s.charCodeAt(i))) i++;
    const start = i;
    while (i < n && isWordChar(s.charCodeAt(i))) i++;
    const length = i - start;
    if (length === 0 || length > MAX_TOKEN_LENGTH) continue;
    const token = s.slice(start, i);
    if (!keepStopWords && STOP_WORDS.has(token)) continue;
    count++;
    visit(token);
  }
  return count;
}

/** Lower case with accents removed ("Teléfono" → "telefono"). */
export function foldAccents(word: string): string {
  // eslint-disable-next-line no-control-regex -- the range means "any character outside ASCII"
  return /[^\u0000-\u007f]/.test(word) ? word.normalize("NFD").replace(/[\u0300-\u036f]/g, "") : word;
}

/** Han, Hiragana, Katakana and Hangul: scripts written without spaces between words. */
export function isCjk(c: number): boolean {
  return (
    (c >= 0x3040 && c <= 0x30ff) || // Hiragana, Katakana
    (c >= 0x3400 && c <= 0x4dbf) || // CJK extension A
    (c >= 0x4e00 && c <= 0x9fff) || // CJK unified ideographs
    (c >= 0xac00 && c <= 0xd7af) || // Hangul syllables
    (c >= 0xf900 && c <= 0xfaff) || // CJK compatibility ideographs
    (c >= 0xff66 && c <= 0xff9f) // half-width Katakana
  );
}

const COMBINING_MARK = /\p{M}/u;

/**
 * Lower-cased words with their accents (stemmers need them), split like forEachWord and also where a
 * CJK run meets other letters ("東京tower" → "東京", "tower"). `visit` learns whether the whole text is
 * ASCII (then no word needs accent folding) and returns false to stop early.
 */
export function forEachRawWord(text: string, visit: (word: string, ascii: boolean) => boolean): void {
  let s = text.toLowerCase();
  // eslint-disable-next-line no-control-regex -- the range means "any character outside ASCII"
  const ascii = !/[^\u0000-\u007f]/.test(s);
  if (!ascii) s = s.normalize("NFC");
  const n = s.length;
  const wordChar = (c: number) => isWordChar(c) || (c >= 0x300 && !ascii && COMBINING_MARK.test(String.fromCharCode(c)));
  let i = 0;
  while (i < n) {
    while (i < n && !wordChar(s.charCodeAt(i))) i++;
    const start = i;
    if (i >= n) break;
    const cjk = !ascii && isCjk(s.charCodeAt(i));
    while (i < n && wordChar(s.charCodeAt(i)) && (ascii || isCjk(s.charCodeAt(i)) === cjk)) i++;
    if (i > start && !visit(s.slice(start, i), ascii)) return;
  }
}
