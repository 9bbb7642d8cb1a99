import type { Chunk } from "./chunk";
import { analyzeQuery, detectLanguage, forEachTerm, type Language } from "./text-analyzer";
import { PACKED_SPAN, packPosting, pickCompletions, PREFIX_KEY, scoreQuery, ScoringScratch, type PostingRun, type WordPostings } from "./text-scoring";
import { resized } from "../util/typed-arrays";

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
 * with a shard or sealed, which stay in their block as runs (block, from, to, base), `base` being the
 * document the run's packed offsets count from. The first run is kept in the object itself (most words
 * are in one shard only: a typed array of runs per word was ~45 MB of a 100,000-note index), the others
 * in `more` as quadruples.
 */
interface Postings {
  docs: Int32Array;
  weights: Float32Array;
  length: number;
  /** Runs in blocks, the first one included. */
  segmentCount: number;
  block0: number;
  from0: number;
  to0: number;
  base0: number;
  more: Int32Array | null;
}

/** A loaded shard's or a seal's postings, term-major and packed (packPosting): each word's are one or more runs. */
interface Block {
  packed: Uint32Array;
}

/**
 * The list of a word with no postings added one by one: shared, grown into its own arrays by the first
 * append. A word that only ever lives in blocks (every word of a loaded index) then costs no arrays: two
 * small typed arrays per word were ~60 MB of heap objects at 164,000 words.
 */
const NO_DOCS = new Int32Array(0);
const NO_WEIGHTS = new Float32Array(0);

function newPostings(): Postings {
  return { docs: NO_DOCS, weights: NO_WEIGHTS, length: 0, segmentCount: 0, block0: 0, from0: 0, to0: 0, base0: 0, more: null };
}

/** A word's posting list, resolved once per shard dictionary when loading (opaque outside this file). */
export type TermRef = Postings;

/** A shard's stored words as addBlock takes them (StoredText in shard-codec.ts). */
export interface StoredWords {
  lengths: Float32Array;
  postingStart: Uint32Array;
  /** Interleaved (chunk, weight) pairs: chunk at 2e, its weight at 2e + 1 (of pairWeights, a view of the same words). */
  pairs: Uint32Array;
  pairWeights: Float32Array;
}

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
  /** Postings in the words' one-by-one lists (not in blocks): what seal() would move. */
  private listPostings = 0;
  private scratch = new ScoringScratch();
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
    this.listPostings = 0;
    this.scratch = new ScoringScratch();
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
        this.listPostings++;
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

  /** Postings added one by one since the last seal(). */
  get unsealedPostings(): number {
    return this.listPostings;
  }

  /**
   * Moves every word's postings added one by one into one new block, term-major, as a loaded shard's are:
   * a large build then holds exact-size arrays (and no pair of growing arrays per word) instead of lists
   * grown by half again at every overflow. Each word moves whole, so a search between two steps sees all
   * of its postings; `between` is called every `wordsPerStep` words (the caller yields there). Scores do
   * not change: runs are read in document order either way (runsOf). `between` is cheap when it does not
   * yield (WorkSlicer.tick): every 2,000 words held the thread for up to a quarter of a second at 100,000 notes.
   */
  async seal(between: () => Promise<void>, wordsPerStep = 64): Promise<void> {
    if (this.listPostings === 0) return;
    const id = this.blocks.length;
    const block: Block = { packed: new Uint32Array(this.listPostings) };
    this.blocks.push(block);
    let at = 0;
    let n = 0;
    // The live map, not a copy of its values (insertion order: the words there now come first, and a word
    // added between steps stays in its list, like postings appended to a word already moved).
    const words = this.terms.size;
    for (const p of this.terms.values()) {
      if (n >= words) break;
      const length = p.length;
      if (length > 0) {
        // Lists only grow here between steps if a caller adds meanwhile: make room rather than fail.
        if (at + length > block.packed.length) resizeBlock(block, Math.max(at + length, Math.ceil(block.packed.length * 1.25)));
        // A plain loop: two subarray views per word were 300,000 allocations per seal at 164,000 words.
        const { docs, weights } = p;
        const packed = block.packed;
        let start = at;
        let base = docs[0];
        for (let i = 0; i < length; i++) {
          const doc = docs[i];
          if (doc - base >= PACKED_SPAN) {
            addSegment(p, id, start, at + i, base);
            start = at + i;
            base = doc;
          }
          packed[at + i] = packPosting(doc - base, weights[i]);
        }
        addSegment(p, id, start, at + length, base);
        at += length;
        this.listPostings -= length;
        p.docs = NO_DOCS;
        p.weights = NO_WEIGHTS;
        p.length = 0;
      }
      if (++n % wordsPerStep === 0) await between();
    }
    // Searches compact lists between steps (dropping removed documents): the block may have room left.
    if (at < block.packed.length) resizeBlock(block, at);
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
   * for one to leave out) with its stored length, and each word's postings, which shards store term-major
   * (shard-codec.ts), become one run of one block. Returns the first slot (chunk i is slot first + i).
   */
  addBlock(owners: readonly (T | undefined)[], terms: readonly TermRef[], words: StoredWords): number {
    const first = this.owners.length;
    const count = owners.length;
    this.ensureCapacity(first + count);
    const { lengths, postingStart, pairs, pairWeights } = words;
    for (let i = 0; i < count; i++) {
      const owner = owners[i];
      this.owners.push(owner);
      this.lengths[first + i] = lengths[i];
      if (owner === undefined) continue;
      this.live[first + i] = 1;
      this.liveCount++;
      this.totalLength += lengths[i];
    }
    const packed = new Uint32Array(postingStart[terms.length]);
    const id = this.blocks.length;
    this.blocks.push({ packed });
    // Each word's entries (ascending chunks, checked when the shard was read) as one run, or more in a shard
    // of over PACKED_SPAN chunks (one huge note).
    for (let t = 0; t < terms.length; t++) {
      const from = postingStart[t];
      const to = postingStart[t + 1];
      if (to <= from) continue;
      let start = from;
      let base = first + pairs[2 * from];
      for (let e = from; e < to; e++) {
        const doc = first + pairs[2 * e];
        if (doc - base >= PACKED_SPAN) {
          addSegment(terms[t], id, start, e, base);
          start = e;
          base = doc;
        }
        packed[e] = packPosting(doc - base, pairWeights[2 * e + 1]);
      }
      addSegment(terms[t], id, start, to, base);
    }
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
    return scoreQuery(analyzeQuery(query), this.postings(), limit, this.scratch).map((hit) => ({
      owner: this.owners[hit.doc] as T,
      slot: hit.doc,
      score: hit.score,
      matched: hit.matched,
      coverage: hit.coverage,
    }));
  }

  /** This index as the scorer reads it (text-scoring.ts). */
  private postings(): WordPostings {
    return {
      docCount: this.liveCount,
      avgLength: this.totalLength / this.liveCount || 1,
      slotCount: this.owners.length,
      lengths: this.lengths,
      live: this.live,
      runsOf: (word) => {
        const p = this.terms.get(word);
        if (!p) return [];
        this.compactList(word, p);
        // In document order: blocks hold older documents than the list (added since), in the order they were made.
        const runs: PostingRun[] = [];
        if (p.segmentCount > 0) runs.push({ packed: this.blocks[p.block0].packed, base: p.base0, from: p.from0, to: p.to0 });
        for (let k = 0; k < p.segmentCount - 1; k++) {
          const more = p.more as Int32Array;
          runs.push({ packed: this.blocks[more[4 * k]].packed, base: more[4 * k + 3], from: more[4 * k + 1], to: more[4 * k + 2] });
        }
        if (p.length > 0) runs.push({ docs: p.docs, weights: p.weights, from: 0, to: p.length });
        return runs;
      },
      completions: (prefix) => this.completions(prefix),
    };
  }

  /** Indexed words that start with `prefix` (not the word itself): the most common ones (pickCompletions). */
  private completions(prefix: string): string[] {
    if (prefix.length < PREFIX_KEY) return [];
    const bucket = this.byPrefix.get(prefix.slice(0, PREFIX_KEY));
    if (!bucket) return [];
    const found = new Map<string, number>();
    for (const word of bucket) if (word.startsWith(prefix) && this.terms.has(word)) found.set(word, postingCount(this.terms.get(word)));
    return pickCompletions(prefix, found);
  }

  private notePrefix(word: string): void {
    if (word.length <= PREFIX_KEY) return;
    const key = word.slice(0, PREFIX_KEY);
    const bucket = this.byPrefix.get(key);
    if (bucket) bucket.push(word);
    else this.byPrefix.set(key, [word]);
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
    this.listPostings -= length - out;
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
    this.lengths = resized(this.lengths, capacity);
    this.live = resized(this.live, capacity);
  }
}

/** Adds a run in a block to a word: the first in the word's own fields, later ones in a typed array grown by doubling. */
function addSegment(p: Postings, block: number, from: number, to: number, base: number): void {
  if (p.segmentCount === 0) {
    p.block0 = block;
    p.from0 = from;
    p.to0 = to;
    p.base0 = base;
    p.segmentCount = 1;
    return;
  }
  const at = 4 * (p.segmentCount - 1);
  if (p.more === null) p.more = new Int32Array(8);
  else if (at + 4 > p.more.length) p.more = resized(p.more, p.more.length * 2);
  p.more[at] = block;
  p.more[at + 1] = from;
  p.more[at + 2] = to;
  p.more[at + 3] = base;
  p.segmentCount++;
}

/** Gives a block exactly `size` entries (its first ones kept). */
function resizeBlock(block: Block, size: number): void {
  block.packed = resized(block.packed, size);
}

/** Postings of a word, removed documents included (for ordering completions). */
function postingCount(p: Postings | undefined): number {
  if (!p) return 0;
  let n = p.length;
  if (p.segmentCount > 0) n += p.to0 - p.from0;
  for (let k = 0; k < p.segmentCount - 1; k++) n += (p.more as Int32Array)[4 * k + 2] - (p.more as Int32Array)[4 * k + 1];
  return n;
}

function append(p: Postings, slot: number, weight: number): void {
  if (p.length === p.docs.length) {
    const size = Math.ceil(p.length * 1.5) + 2;
    p.docs = resized(p.docs, size);
    p.weights = resized(p.weights, size);
  }
  p.docs[p.length] = slot;
  p.weights[p.length] = weight;
  p.length++;
}
