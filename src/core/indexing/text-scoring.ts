import type { QueryTerm } from "./text-analyzer";
import { TopK } from "./top-k";

/**
 * BM25 over a query's words, the one place keyword scores are made: for the in-memory text index
 * (text-index.ts) and for a one-shot search over the saved shards (saved-index.ts), which hand it their
 * postings through WordPostings.
 *
 * A query word counts once per document: the best of its forms (stems in several languages, and for a
 * half-typed last word its completions, counted a little less), so "photo" does not favour "photographs and
 * photons". A word found nowhere weighs as the rarest word would (coverage).
 */
const K1 = 1.2;
const B = 0.75;
/** Letters a half-typed last word needs before its completions are searched, and how much they count. */
export const PREFIX_KEY = 3;
export const PREFIX_FACTOR = 0.7;
export const MAX_COMPLETIONS = 24;

/**
 * A run of a word's postings, entries [from..to) in ascending document order, in one of two forms: `docs`
 * and `weights` side by side (lists still growing, one-shot searches), or `packed` (a loaded or sealed
 * block: 4 bytes an entry, see packPosting) with the run's `base` document.
 */
export type PostingRun =
  | { docs: Int32Array; weights: Float32Array; packed?: undefined; base?: undefined; from: number; to: number }
  | { packed: Uint32Array; base: number; docs?: undefined; weights?: undefined; from: number; to: number };

/** Documents one packed run can span: its entries hold the document as an offset from the run's base in 16 bits. */
export const PACKED_SPAN = 0x10000;
/**
 * The most a word's boosted count in one chunk counts for, in every form of run (a packed one cannot hold
 * more). Only a chunk far over any sensible chunk size repeats a word that often.
 */
export const MAX_POSTING_WEIGHT = 0xffff / 2;
/**
 * A posting in 4 bytes: the document's offset from its run's base (16 bits) and its boosted count in
 * halves (16 bits). Field boosts are multiples of ½ (FIELD_BOOST), so every count up to MAX_POSTING_WEIGHT
 * is exact. Half of the 8 bytes two parallel arrays take: about 90 MB of a 100,000-note index.
 */
export function packPosting(offset: number, weight: number): number {
  return ((offset << 16) | Math.round(Math.min(weight, MAX_POSTING_WEIGHT) * 2)) >>> 0;
}

export interface WordPostings {
  /** Documents in the index (BM25's N) and their mean boosted length. */
  readonly docCount: number;
  readonly avgLength: number;
  /** One past the highest document number. */
  readonly slotCount: number;
  /** Per document, its boosted length. */
  readonly lengths: Float32Array;
  /** Per document, 1 while it is in the index (removed ones may linger in runs); null when all are. */
  readonly live: Uint8Array | null;
  /** The word's postings (none for a word not in the index). */
  runsOf(word: string): readonly PostingRun[];
  /** Indexed words that start with `prefix` (not the word itself), at most MAX_COMPLETIONS (pickCompletions). */
  completions(prefix: string): string[];
}

export interface ScoredDoc {
  doc: number;
  /** BM25 score (unbounded, ≥ 0). */
  score: number;
  /** Distinct query words in the document. */
  matched: number;
  /** Share of the query's IDF the document holds, 0..1. */
  coverage: number;
}

/** Per-document work arrays, kept between queries by their owner (allocating them per query costs more than scoring). */
export class ScoringScratch {
  scores = new Float32Array(0);
  matched = new Uint8Array(0);
  mark = new Uint16Array(0);
  best = new Float32Array(0);
  covered = new Float32Array(0);

  ensure(size: number): void {
    if (this.scores.length >= size) return;
    const n = Math.max(size, this.scores.length * 2);
    this.scores = new Float32Array(n);
    this.matched = new Uint8Array(n);
    this.mark = new Uint16Array(n);
    this.best = new Float32Array(n);
    this.covered = new Float32Array(n);
  }
}

/** The `limit` best documents for the query's words (analyzeQuery), best first; ties in document order. */
export function scoreQuery(terms: readonly QueryTerm[], index: WordPostings, limit: number, scratch: ScoringScratch): ScoredDoc[] {
  if (index.docCount === 0 || limit <= 0) return [];
  const groups = terms.slice(0, 255);
  if (groups.length === 0) return [];
  scratch.ensure(index.slotCount);
  const { scores, matched, mark, best, covered } = scratch;
  const touched: number[] = [];
  const avgLength = index.avgLength || 1;
  const n = index.docCount;
  const idfOf = (df: number) => Math.log(1 + (n - df + 0.5) / (df + 0.5));
  const live = index.live;
  const lengths = index.lengths;
  let groupTouched: number[] = [];

  const score = (word: string, wordNo: number, factor: number): number => {
    const runs = index.runsOf(word);
    let df = 0;
    for (const run of runs) {
      if (live === null) df += run.to - run.from;
      else if (run.packed) for (let i = run.from; i < run.to; i++) df += live[run.base + (run.packed[i] >>> 16)];
      else for (let i = run.from; i < run.to; i++) df += live[run.docs[i]];
    }
    if (df === 0) return 0;
    const idf = factor * idfOf(df);
    for (const { docs, weights, packed, base, from, to } of runs) {
      for (let i = from; i < to; i++) {
        const doc = packed ? base + (packed[i] >>> 16) : docs[i];
        // Removed documents may linger in runs: they are skipped, never scored.
        if (live !== null && live[doc] === 0) continue;
        const tf = packed ? (packed[i] & 0xffff) * 0.5 : Math.min(weights[i], MAX_POSTING_WEIGHT);
        const norm = K1 * (1 - B + (B * lengths[doc]) / avgLength);
        const s = (idf * tf * (K1 + 1)) / (tf + norm);
        if (mark[doc] !== wordNo) {
          mark[doc] = wordNo;
          if (matched[doc] === 0) touched.push(doc);
          matched[doc]++;
          groupTouched.push(doc);
        }
        if (s > best[doc]) best[doc] = s;
      }
    }
    return df;
  };

  let totalIdf = 0;
  groups.forEach((group, g) => {
    const wordNo = g + 1;
    groupTouched = [];
    let df = 0;
    for (const variant of group.variants) df = Math.max(df, score(variant, wordNo, 1));
    if (g === groups.length - 1) {
      for (const completion of index.completions(group.surface)) {
        if (group.variants.includes(completion)) continue;
        df = Math.max(df, score(completion, wordNo, PREFIX_FACTOR));
      }
    }
    const weight = idfOf(df);
    totalIdf += weight;
    for (const doc of groupTouched) {
      scores[doc] += best[doc];
      best[doc] = 0;
      covered[doc] += weight;
    }
  });

  const hits = topDocs(touched, scores, limit).map((doc) => ({
    doc,
    score: scores[doc],
    matched: matched[doc],
    coverage: totalIdf > 0 ? Math.min(1, covered[doc] / totalIdf) : 0,
  }));
  for (const doc of touched) {
    scores[doc] = 0;
    matched[doc] = 0;
    mark[doc] = 0;
    covered[doc] = 0;
  }
  return hits.sort((a, b) => b.score - a.score || a.doc - b.doc);
}

/**
 * The completions of a half-typed word among `candidates` (words starting with it, the word itself
 * excluded), given with their posting counts: the MAX_COMPLETIONS most common, most common first (ties by word).
 */
export function pickCompletions(prefix: string, candidates: ReadonlyMap<string, number>): string[] {
  const list = [...candidates.keys()].filter((w) => w !== prefix && w.startsWith(prefix));
  const count = (w: string) => candidates.get(w) ?? 0;
  // Always in one order (the in-memory index and the saved shards hold their words in different orders).
  return list.sort((a, b) => count(b) - count(a) || (a < b ? -1 : a > b ? 1 : 0)).slice(0, MAX_COMPLETIONS);
}

/** The `limit` best documents by score, via a small min-heap (a common word can touch every document). */
function topDocs(docs: number[], scores: Float32Array, limit: number): number[] {
  if (docs.length <= limit) return docs;
  const heap = new TopK(limit);
  for (const doc of docs) heap.push(doc, scores[doc]);
  return heap.sorted().slots;
}
