import type { Chunk } from "./chunk";
import { analyzeQuery, detectLanguage, forEachTerm, type Language } from "./text-analyzer";

/**
 * Full-text search over chunks: an inverted index with BM25 scoring and field boosts (BM25F-style: a word
 * in the title counts as several occurrences in the body). Only text lives here; vectors are in the
 * VectorStore, chunk texts in the chunk records (this index keeps no copy of them).
 *
 * Why not Orama: Orama 3.1 with text fields only, on the same chunks with the same field boosts, inserts many
 * times slower, takes tens of times more heap, and answers questions full of common words in hundreds of
 * milliseconds to seconds at 30k chunks. `npm run bench -- --only fulltext` measures both side by side.
 *
 * Removal is lazy: a removed document is marked dead and its postings are dropped when a search reads that
 * word's list (or by compact()), so deleting a note never scans long posting lists.
 *
 * Documents are numbered slots, each with an owner (the index store's chunk record): no map from chunk id
 * strings, which at 500k chunks cost seconds to build at every load.
 */
export const FIELD_BOOST = { title: 3, aliases: 3, tags: 2, headings: 2, path: 1.5, content: 1 } as const;

const K1 = 1.2;
/** Letters a half-typed last word needs before its completions are searched, and how much they count. */
const PREFIX_KEY = 3;
const PREFIX_FACTOR = 0.7;
const MAX_COMPLETIONS = 24;
const B = 0.75;

export interface TextHit<T> {
  owner: T;
  /** The document's slot (stable until clear()). */
  slot: number;
  /** BM25 score (unbounded, ≥ 0). */
  score: number;
  /** How many distinct query words the chunk contains. */
  matched: number;
  /**
   * Share of the query's information the chunk holds: the IDF of the query words it contains over the IDF
   * of all query words (a word found nowhere counts as the rarest). 0..1, comparable across queries.
   */
  coverage: number;
}

/**
 * A word's postings: the ones added one by one (docs/weights/length, in slot order), and the ones loaded
 * with a shard, which stay in that shard's block: `segments` holds (block, from, to) triples.
 */
interface Postings {
  docs: Int32Array;
  weights: Float32Array;
  length: number;
  segments: Int32Array | null;
  segmentCount: number;
}

/** A loaded shard's postings, term-major: each word's documents are one run of docs/weights. */
interface Block {
  docs: Int32Array;
  weights: Float32Array;
}

function newPostings(): Postings {
  return { docs: new Int32Array(2), weights: new Float32Array(2), length: 0, segments: null, segmentCount: 0 };
}

/** A word's posting list, resolved once per shard dictionary when loading (opaque outside this file). */
export type TermRef = Postings;

/** A chunk's distinct words with their boosted counts, and its boosted length: what shard files store. */
export interface AnalyzedChunk {
  terms: string[];
  weights: number[];
  length: number;
}

/** The words of a chunk's fields with field boosts applied (the same analysis add() performs). */
export function analyzeChunk(chunk: Chunk): AnalyzedChunk {
  const weights = new Map<string, number>();
  const length = forEachChunkWord(chunk, (w, boost) => weights.set(w, (weights.get(w) ?? 0) + boost));
  return { terms: [...weights.keys()], weights: [...weights.values()], length };
}

/**
 * Every word of a chunk's fields with its field boost, in order (the analysis add() and analyzeChunk
 * perform), without building arrays or maps. Returns the chunk's boosted length.
 */
export function forEachChunkWord(chunk: Chunk, visit: (word: string, boost: number) => void): number {
  let length = 0;
  let boost = 1;
  const each = (word: string) => visit(word, boost);
  const lang = chunkLanguage(chunk);
  forEachField(chunk, (text, fieldBoost) => {
    boost = fieldBoost;
    length += forEachTerm(text, lang, each) * fieldBoost;
  });
  return length;
}

/** A chunk's language, guessed from its title and the start of its text (all its fields are analysed in it). */
function chunkLanguage(chunk: Chunk): Language {
  return detectLanguage(chunk.text.length > 400 ? `${chunk.title} ${chunk.text.slice(0, 400)}` : `${chunk.title} ${chunk.text}`);
}

function forEachField(chunk: Chunk, visit: (text: string, boost: number) => void): void {
  if (chunk.title) visit(chunk.title, FIELD_BOOST.title);
  for (const alias of chunk.aliases) if (alias) visit(alias, FIELD_BOOST.aliases);
  if (chunk.tags.length > 0) visit(chunk.tags.join(" "), FIELD_BOOST.tags);
  if (chunk.headings.length > 0) visit(chunk.headings.join(" "), FIELD_BOOST.headings);
  visit(chunk.path.replace(/\.md$/i, ""), FIELD_BOOST.path);
  if (chunk.text) visit(chunk.text, FIELD_BOOST.content);
}

export class TextIndex<T> {
  private terms = new Map<string, Postings>();
  private owners: (T | undefined)[] = [];
  private blocks: Block[] = [];
  private lengths = new Float32Array(1024);
  private live = new Uint8Array(1024);
  private liveCount = 0;
  private totalLength = 0;
  private deadPostings = 0;
  private scratch = new Float32Array(0);
  private matchedScratch = new Uint8Array(0);
  private wordMark = new Uint16Array(0);
  private bestScratch = new Float32Array(0);
  private coverageScratch = new Float32Array(0);
  /** Words longer than PREFIX_KEY letters, by their first PREFIX_KEY letters: prefix search as you type. */
  private byPrefix = new Map<string, string[]>();

  get size(): number {
    return this.liveCount;
  }

  clear(): void {
    this.terms = new Map();
    this.owners = [];
    this.blocks = [];
    this.lengths = new Float32Array(1024);
    this.live = new Uint8Array(1024);
    this.liveCount = 0;
    this.totalLength = 0;
    this.deadPostings = 0;
    this.scratch = new Float32Array(0);
    this.matchedScratch = new Uint8Array(0);
    this.wordMark = new Uint16Array(0);
    this.bestScratch = new Float32Array(0);
    this.coverageScratch = new Float32Array(0);
    this.byPrefix = new Map();
  }

  /** Adds a chunk for `owner`; returns its slot (removeSlot takes it). */
  add(chunk: Chunk, owner: T): number {
    {
      const slot = this.owners.length;
      this.owners.push(owner);
      this.ensureCapacity(slot + 1);

      // Postings are appended in slot order, so a word seen again in this chunk is always the list's last entry.
      let length = 0;
      let boost = 1;
      const post = (word: string) => {
        let p = this.terms.get(word);
        if (p === undefined) {
          p = newPostings();
          this.terms.set(word, p);
          this.notePrefix(word);
        } else if (p.length > 0 && p.docs[p.length - 1] === slot) {
          p.weights[p.length - 1] += boost;
          return;
        }
        append(p, slot, boost);
      };
      const lang = chunkLanguage(chunk);
      forEachField(chunk, (text, fieldBoost) => {
        boost = fieldBoost;
        length += forEachTerm(text, lang, post) * fieldBoost;
      });
      this.lengths[slot] = length;
      this.live[slot] = 1;
      this.liveCount++;
      this.totalLength += length;
      return slot;
    }
  }

  /** Posting lists for a shard's dictionary (created when new), for addBlock(). */
  resolveTerms(dictionary: readonly string[]): TermRef[] {
    return dictionary.map((word) => {
      let p = this.terms.get(word);
      if (p === undefined) {
        p = newPostings();
        this.terms.set(word, p);
        this.notePrefix(word);
      }
      return p;
    });
  }

  /**
   * Adds a whole shard's chunks from their stored analysis in one step: chunk i (owner owners[i], undefined
   * for one to leave out) has words terms[termIdx[e]] with weights[e] for e in termStart[i]..termStart[i+1].
   * The postings are sorted by word into one block (a counting sort inside the shard), instead of half a
   * million chunks' words being appended to a hundred thousand growing lists. Returns the first slot
   * (chunk i is slot first + i).
   */
  addBlock(owners: readonly (T | undefined)[], terms: readonly TermRef[], termStart: Uint32Array, termIdx: Uint32Array, weights: Float32Array, lengths: Float32Array): number {
    const first = this.owners.length;
    const count = owners.length;
    this.ensureCapacity(first + count);
    for (let i = 0; i < count; i++) {
      const owner = owners[i];
      this.owners.push(owner);
      this.lengths[first + i] = lengths[i];
      if (owner === undefined) continue;
      this.live[first + i] = 1;
      this.liveCount++;
      this.totalLength += lengths[i];
    }
    const entries = termStart[count];
    const starts = new Uint32Array(terms.length + 1);
    for (let e = 0; e < entries; e++) starts[termIdx[e] + 1]++;
    for (let t = 0; t < terms.length; t++) starts[t + 1] += starts[t];
    const cursor = starts.slice(0, terms.length);
    const block: Block = { docs: new Int32Array(entries), weights: new Float32Array(entries) };
    for (let i = 0; i < count; i++) {
      for (let e = termStart[i]; e < termStart[i + 1]; e++) {
        const at = cursor[termIdx[e]]++;
        block.docs[at] = first + i;
        block.weights[at] = weights[e];
      }
    }
    const id = this.blocks.length;
    this.blocks.push(block);
    for (let t = 0; t < terms.length; t++) if (starts[t + 1] > starts[t]) addSegment(terms[t], id, starts[t], starts[t + 1]);
    return first;
  }

  removeSlot(slot: number): void {
    if (slot < 0 || slot >= this.owners.length || this.live[slot] === 0) return;
    this.owners[slot] = undefined;
    this.live[slot] = 0;
    this.liveCount--;
    this.totalLength -= this.lengths[slot];
    // Rough count of postings left behind; compact() runs when they pile up.
    this.deadPostings += 64;
  }

  /** True when enough removed documents linger in posting lists that compact() is worth it. */
  get needsCompaction(): boolean {
    return this.deadPostings > 200_000 && this.deadPostings > this.liveCount * 16;
  }

  /**
   * Drops the postings of removed documents from every list. Works through the dictionary in steps of
   * `termsPerStep` words, calling `between` after each step (the caller yields to the UI there).
   */
  async compact(between: () => Promise<void>, termsPerStep = 20_000): Promise<void> {
    let n = 0;
    for (const [word, p] of [...this.terms]) {
      this.compactList(word, p);
      if (++n % termsPerStep === 0) await between();
    }
    this.byPrefix = new Map();
    for (const word of this.terms.keys()) this.notePrefix(word);
    this.deadPostings = 0;
  }

  /** Chunks containing any of the query's words, best first. */
  async search(query: string, limit: number): Promise<TextHit<T>[]> {
    return Promise.resolve(this.searchNow(query, limit));
  }

  searchNow(query: string, limit: number): TextHit<T>[] {
    if (this.liveCount === 0 || limit <= 0) return [];
    const groups = analyzeQuery(query).slice(0, 255);
    if (groups.length === 0) return [];
    const slots = this.owners.length;
    if (this.scratch.length < slots) {
      this.scratch = new Float32Array(Math.max(slots, this.scratch.length * 2));
      this.matchedScratch = new Uint8Array(this.scratch.length);
      this.wordMark = new Uint16Array(this.scratch.length);
      this.bestScratch = new Float32Array(this.scratch.length);
      this.coverageScratch = new Float32Array(this.scratch.length);
    }
    const scores = this.scratch;
    const matched = this.matchedScratch;
    const mark = this.wordMark;
    const covered = this.coverageScratch;
    const touched: number[] = [];
    const avgLength = this.totalLength / this.liveCount || 1;
    const n = this.liveCount;
    const idfOf = (df: number) => Math.log(1 + (n - df + 0.5) / (df + 0.5));

    // A query word counts once per chunk: the best of its forms (stems in several languages, and for a
    // half-typed last word its completions, counted a little less), so "photo" does not favour
    // "photographs and photons".
    const best = this.bestScratch;
    let groupTouched: number[] = [];
    const live = this.live;
    const lengths = this.lengths;
    const score = (word: string, p: Postings, wordNo: number, factor: number): number => {
      this.compactList(word, p);
      const df = this.liveDocs(p);
      if (df === 0) return 0;
      const idf = factor * idfOf(df);
      // Removed documents may linger in loaded blocks: they are skipped, never scored.
      this.forEachRun(p, (docs, weights, from, to) => {
        for (let i = from; i < to; i++) {
          const slot = docs[i];
          if (live[slot] === 0) continue;
          const tf = weights[i];
          const norm = K1 * (1 - B + (B * lengths[slot]) / avgLength);
          const s = (idf * tf * (K1 + 1)) / (tf + norm);
          if (mark[slot] !== wordNo) {
            mark[slot] = wordNo;
            if (matched[slot] === 0) touched.push(slot);
            matched[slot]++;
            groupTouched.push(slot);
          }
          if (s > best[slot]) best[slot] = s;
        }
      });
      return df;
    };

    let totalIdf = 0;
    groups.forEach((group, g) => {
      const wordNo = g + 1;
      groupTouched = [];
      let df = 0;
      for (const variant of group.variants) {
        const p = this.terms.get(variant);
        if (p) df = Math.max(df, score(variant, p, wordNo, 1));
      }
      if (g === groups.length - 1) {
        for (const completion of this.completions(group.surface)) {
          if (group.variants.includes(completion)) continue;
          const p = this.terms.get(completion) as Postings;
          df = Math.max(df, score(completion, p, wordNo, PREFIX_FACTOR));
        }
      }
      // A word found nowhere weighs as the rarest word would.
      const weight = idfOf(df);
      totalIdf += weight;
      for (const slot of groupTouched) {
        scores[slot] += best[slot];
        best[slot] = 0;
        covered[slot] += weight;
      }
    });

    const hits = topSlots(touched, scores, limit).map((slot) => ({
      owner: this.owners[slot] as T,
      slot,
      score: scores[slot],
      matched: matched[slot],
      coverage: totalIdf > 0 ? Math.min(1, covered[slot] / totalIdf) : 0,
    }));
    for (const slot of touched) {
      scores[slot] = 0;
      matched[slot] = 0;
      mark[slot] = 0;
      covered[slot] = 0;
    }
    // Ties in document order (the order notes were indexed in).
    return hits.sort((a, b) => b.score - a.score || a.slot - b.slot);
  }

  /** Indexed words that start with `prefix` (not the word itself), the most common first, at most MAX_COMPLETIONS. */
  private completions(prefix: string): string[] {
    if (prefix.length < PREFIX_KEY) return [];
    const bucket = this.byPrefix.get(prefix.slice(0, PREFIX_KEY));
    if (!bucket) return [];
    const found = new Set<string>();
    for (const word of bucket) if (word !== prefix && word.startsWith(prefix) && this.terms.has(word)) found.add(word);
    const list = [...found];
    if (list.length <= MAX_COMPLETIONS) return list;
    return list.sort((a, b) => postingCount(this.terms.get(b)) - postingCount(this.terms.get(a))).slice(0, MAX_COMPLETIONS);
  }

  private notePrefix(word: string): void {
    if (word.length <= PREFIX_KEY) return;
    const key = word.slice(0, PREFIX_KEY);
    const bucket = this.byPrefix.get(key);
    if (bucket) bucket.push(word);
    else this.byPrefix.set(key, [word]);
  }

  /** Every run of a word's postings: the ones added one by one, then its runs in loaded blocks. */
  private forEachRun(p: Postings, visit: (docs: Int32Array, weights: Float32Array, from: number, to: number) => void): void {
    if (p.length > 0) visit(p.docs, p.weights, 0, p.length);
    const segments = p.segments;
    for (let k = 0; k < p.segmentCount; k++) {
      const block = this.blocks[(segments as Int32Array)[3 * k]];
      visit(block.docs, block.weights, (segments as Int32Array)[3 * k + 1], (segments as Int32Array)[3 * k + 2]);
    }
  }

  /** Documents that contain the word and are still in the index (its BM25 document frequency). */
  private liveDocs(p: Postings): number {
    let df = p.length;
    if (p.segmentCount === 0) return df;
    const live = this.live;
    this.forEachRun(p, (docs, _weights, from, to) => {
      if (docs === p.docs) return;
      for (let i = from; i < to; i++) df += live[docs[i]];
    });
    return df;
  }

  /** Removes dead documents from one posting list, in place; drops the word when nothing is left. */
  private compactList(word: string, p: Postings): void {
    const { docs, weights, length } = p;
    const live = this.live;
    let out = 0;
    for (let i = 0; i < length; i++) {
      const slot = docs[i];
      if (live[slot] === 1) {
        docs[out] = slot;
        weights[out] = weights[i];
        out++;
      }
    }
    if (out === length) return;
    p.length = out;
    if (out === 0 && p.segmentCount === 0) this.terms.delete(word);
    else if (out < docs.length / 4) {
      p.docs = docs.slice(0, out + 2);
      p.weights = weights.slice(0, out + 2);
    }
  }

  private ensureCapacity(size: number): void {
    if (size <= this.lengths.length) return;
    const capacity = Math.max(size, this.lengths.length * 2);
    const lengths = new Float32Array(capacity);
    lengths.set(this.lengths);
    this.lengths = lengths;
    const live = new Uint8Array(capacity);
    live.set(this.live);
    this.live = live;
  }
}

/** A word's postings in loaded blocks: (block, from, to), in a typed array grown by doubling. */
function addSegment(p: Postings, block: number, from: number, to: number): void {
  const at = 3 * p.segmentCount;
  if (p.segments === null || at + 3 > p.segments.length) {
    const grown = new Int32Array(Math.max(6, (p.segments?.length ?? 0) * 2));
    if (p.segments) grown.set(p.segments);
    p.segments = grown;
  }
  p.segments[at] = block;
  p.segments[at + 1] = from;
  p.segments[at + 2] = to;
  p.segmentCount++;
}

/** Postings of a word, removed documents included (for ordering completions). */
function postingCount(p: Postings | undefined): number {
  if (!p) return 0;
  let n = p.length;
  for (let k = 0; k < p.segmentCount; k++) n += (p.segments as Int32Array)[3 * k + 2] - (p.segments as Int32Array)[3 * k + 1];
  return n;
}

function append(p: Postings, slot: number, weight: number): void {
  if (p.length === p.docs.length) {
    const size = Math.ceil(p.length * 1.5) + 2;
    const docs = new Int32Array(size);
    docs.set(p.docs);
    const weights = new Float32Array(size);
    weights.set(p.weights);
    p.docs = docs;
    p.weights = weights;
  }
  p.docs[p.length] = slot;
  p.weights[p.length] = weight;
  p.length++;
}

/** The `limit` best slots by score, via a small min-heap (a common word can touch every document). */
function topSlots(slots: number[], scores: Float32Array, limit: number): number[] {
  if (slots.length <= limit) return slots;
  const heap: number[] = [];
  const less = (a: number, b: number) => scores[a] < scores[b];
  for (const slot of slots) {
    if (heap.length < limit) {
      heap.push(slot);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!less(heap[i], heap[parent])) break;
        [heap[i], heap[parent]] = [heap[parent], heap[i]];
        i = parent;
      }
    } else if (scores[slot] > scores[heap[0]]) {
      heap[0] = slot;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && less(heap[l], heap[m])) m = l;
        if (r < heap.length && less(heap[r], heap[m])) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
  }
  return heap;
}
