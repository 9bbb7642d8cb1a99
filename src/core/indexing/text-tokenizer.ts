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
