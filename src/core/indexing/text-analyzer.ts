import { newStemmer, type SnowballStemmer } from "snowball-stemmers";
import { STOP_WORDS } from "./stop-words";
import { foldAccents, forEachRawWord, isCjk } from "./text-tokenizer";
import { ownString } from "../util/own-string";

/**
 * Language-aware analysis for the full-text index: what a chunk's words become in the index, and what a
 * query's words are looked up as.
 *
 * Documents: each chunk's language is guessed from its function words (Cyrillic text is Russian); its
 * words are stemmed with that language's Snowball stemmer (`snowball-stemmers`), then accents are folded,
 * so "verificaciones", "verificación" and "Verificacion" meet, as do "Hotkeys" and "hotkey". Function words
 * of the chunk's language (and English ones) are dropped. CJK runs become overlapping character bigrams
 * ("東京タワー" → 東京 京タ タワ ワー), so a two-character query finds a Japanese or Chinese note.
 *
 * Queries are too short to guess a language reliably, so every query word is looked up under each
 * supported language's stem (a few variants, one index entry per document: the index does not grow);
 * a document scores the best of the variants it holds.
 *
 * ANALYZER_VERSION goes into the index manifest: changing anything here means bumping it, and an index
 * analysed with another version is re-analysed on load (vectors are kept).
 */
export const ANALYZER_VERSION = 2;

export type Language = "en" | "es" | "fr" | "de" | "pt" | "it" | "ru";
export const LANGUAGES: readonly Language[] = ["en", "es", "fr", "de", "pt", "it", "ru"];

const SNOWBALL_NAME: Record<Language, string> = {
  en: "english",
  es: "spanish",
  fr: "french",
  de: "german",
  pt: "portuguese",
  it: "italian",
  ru: "russian",
};

/** A query word: its index terms (one per language's stem, deduplicated) and, for the last word, the prefix typed so far. */
export interface QueryTerm {
  variants: string[];
  /** The folded surface word, for completion of a half-typed last word. */
  surface: string;
}

/** Words of each language's stop list, with a bit per language (LANGUAGES order); a word can be in several. */
const STOP_MASK = new Map<string, number>();
LANGUAGES.forEach((lang, i) => {
  for (const w of STOP_WORDS[lang]) STOP_MASK.set(w, (STOP_MASK.get(w) ?? 0) | (1 << i));
});
const LANG_BIT = new Map<Language, number>(LANGUAGES.map((lang, i) => [lang, 1 << i]));
const ENGLISH_BIT = 1;

const stemmers = new Map<Language, SnowballStemmer>();
/** Stems by language and word: the same words come back all the time, and a Snowball run costs microseconds. */
const stemCache = new Map<Language, Map<string, string>>();
const STEM_CACHE_LIMIT = 100_000;

/** The folded stem of a lower-cased word in `lang`. */
export function stemWord(word: string, lang: Language): string {
  let cache = stemCache.get(lang);
  if (!cache) {
    cache = new Map();
    stemCache.set(lang, cache);
  }
  let out = cache.get(word);
  if (out === undefined) {
    let stemmer = stemmers.get(lang);
    if (!stemmer) {
      stemmer = newStemmer(SNOWBALL_NAME[lang]);
      stemmers.set(lang, stemmer);
    }
    // Digits, codes and mixed tokens ("v2", "snake_case") are kept as they are.
    word = ownString(word);
    out = ownString(/^[\p{L}\p{M}]+$/u.test(word) && word.length > 2 ? foldAccents(stemmer.stem(word)) : foldAccents(word));
    if (cache.size >= STEM_CACHE_LIMIT) cache.clear();
    cache.set(word, out);
  }
  return out;
}

/** How many words detectLanguage looks at: enough for a clear vote, cheap for long chunks. */
const DETECT_WORDS = 50;

/** The likely language of a text, from its function words; English when nothing points elsewhere. */
export function detectLanguage(text: string): Language {
  const votes = new Int32Array(LANGUAGES.length);
  let seen = 0;
  let cyrillic = 0;
  let latin = 0;
  forEachRawWord(text, (word, ascii) => {
    if (seen++ >= DETECT_WORDS) return false;
    if (ascii) latin++;
    else {
      const c = word.charCodeAt(0);
      if (c >= 0x400 && c <= 0x4ff) cyrillic++;
      else if (c < 0x250) latin++;
    }
    const mask = STOP_MASK.get(ascii ? word : foldAccents(word));
    if (mask !== undefined) for (let i = 0; i < votes.length; i++) if (mask & (1 << i)) votes[i]++;
    return true;
  });
  if (cyrillic > latin) return "ru";
  let best = 0;
  // Ties go to English (index 0): many short words are shared. Russian is decided by script above.
  for (let i = 1; i < LANGUAGES.length; i++) if (LANGUAGES[i] !== "ru" && votes[i] > votes[best]) best = i;
  return LANGUAGES[best];
}

/** A function word ("the", "sobre", "über", "о") in any supported language; `word` lower-cased. */
export function isFunctionWord(word: string): boolean {
  return STOP_MASK.has(foldAccents(word));
}

function isStopWord(folded: string, lang: Language): boolean {
  const mask = STOP_MASK.get(folded);
  return mask !== undefined && (mask & ((LANG_BIT.get(lang) ?? 0) | ENGLISH_BIT)) !== 0;
}

/** Per language: a document word → its index term, or "" for a function word (one lookup per word when indexing). */
const termCache = new Map<Language, Map<string, string>>();

/** Maximum length of an index term; longer runs are hashes, base64 or junk. */
const MAX_TERM_LENGTH = 40;

/**
 * The index terms of a text in `lang`, handed to `visit` one by one (indexing calls this for every field
 * of every chunk: no arrays). Returns the number of terms.
 */
export function forEachTerm(text: string, lang: Language, visit: (term: string) => void): number {
  let cache = termCache.get(lang);
  if (!cache) {
    cache = new Map();
    termCache.set(lang, cache);
  }
  const terms = cache;
  let count = 0;
  forEachRawWord(text, (word, ascii) => {
    if (!ascii && isCjk(word.charCodeAt(0))) {
      count += forEachBigram(word, visit);
      return true;
    }
    if (word.length > MAX_TERM_LENGTH) return true;
    let term = terms.get(word);
    if (term === undefined) {
      term = isStopWord(ascii ? word : foldAccents(word), lang) ? "" : stemWord(word, lang);
      if (terms.size >= STEM_CACHE_LIMIT) terms.clear();
      terms.set(ownString(word), term);
    }
    if (term === "") return true;
    visit(term);
    count++;
    return true;
  });
  return count;
}

/** The query's words, each with its index-term variants. Stop words are dropped when the query has other words. */
export function analyzeQuery(query: string): QueryTerm[] {
  const { all, content } = queryWords(query);
  return content.length > 0 ? content : all;
}

/**
 * What keyword search keeps of a query: "content" when some word counts, "common" when every word is a
 * function word ("the and of"), "none" when it has no word at all ("?!..."). Function words are never indexed.
 */
export function queryWordKind(query: string): "content" | "common" | "none" {
  const { all, content } = queryWords(query);
  return content.length > 0 ? "content" : all.length > 0 ? "common" : "none";
}

/** Every distinct word of a query (`all`) and those that are not function words (`content`). */
function queryWords(query: string): { all: QueryTerm[]; content: QueryTerm[] } {
  const lang = detectLanguage(query);
  const all: QueryTerm[] = [];
  const content: QueryTerm[] = [];
  const seen = new Set<string>();
  forEachRawWord(query, (word) => {
    if (isCjk(word.charCodeAt(0))) {
      forEachBigram(word, (bigram) => {
        if (seen.has(bigram)) return;
        seen.add(bigram);
        const term = { variants: [bigram], surface: bigram };
        all.push(term);
        content.push(term);
      });
      return true;
    }
    if (word.length > MAX_TERM_LENGTH) return true;
    const folded = foldAccents(word);
    if (seen.has(folded)) return true;
    seen.add(folded);
    const variants = new Set<string>();
    for (const l of LANGUAGES) variants.add(stemWord(word, l));
    const term = { variants: [...variants], surface: folded };
    all.push(term);
    if (!isStopWord(folded, lang)) content.push(term);
    return true;
  });
  return { all, content };
}

/** The distinct folded stems of a short text under every language (title matching). */
export function stemsOf(text: string): Set<string> {
  const out = new Set<string>();
  forEachRawWord(text, (word) => {
    if (isCjk(word.charCodeAt(0))) forEachBigram(word, (b) => out.add(b));
    else for (const l of LANGUAGES) out.add(stemWord(word, l));
    return true;
  });
  return out;
}

/**
 * Whether two short names are the same words but for their endings ("приливам" and "приливы", "Gezeiten" and
 * "gezeit"): word for word the same stem under one supported language, as a search would meet them. A deck or
 * topic named in a request keeps the request's grammatical case; this finds it among names saved in another.
 */
export function sameWordsByStem(a: string, b: string): boolean {
  const wordsA = wordsOf(a);
  const wordsB = wordsOf(b);
  if (!wordsA.length || wordsA.length !== wordsB.length) return false;
  return LANGUAGES.some((lang) => wordsA.every((word, i) => stemWord(word, lang) === stemWord(wordsB[i], lang)));
}

function wordsOf(text: string): string[] {
  const words: string[] = [];
  forEachRawWord(text, (word) => {
    words.push(word);
    return true;
  });
  return words;
}

/** Overlapping character pairs of a CJK run (a single character stays itself). */
function forEachBigram(run: string, visit: (term: string) => void): number {
  if (run.length === 1) {
    visit(run);
    return 1;
  }
  for (let i = 0; i + 1 < run.length; i++) visit(run.slice(i, i + 2));
  return run.length - 1;
}
