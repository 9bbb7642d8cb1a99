import type { Chunk } from "../indexing/chunk";
import type { TextHit } from "../indexing/text-index";
import { tokenizeWords } from "../indexing/text-tokenizer";
import type { ChunkHit, NoteHit, SearchOptions } from "./search-types";
import { makeSnippet } from "./snippet";

/**
 * Hybrid ranking, the one place scores are made:
 *   score = (0.7 × vector + 0.3 × keyword + 0.1 × titleMatch) / 1.1            (with vectors)
 *   score = (keyword + 0.1 × titleMatch) / 1.1                                  (keyword-only)
 * keyword = BM25 × (0.5 + 0.5 × share of query words in the chunk), divided by the best such value among
 * the candidates (0..1); vector = cosine clamped to 0..1;
 * titleMatch = share of the query's words found in the note's title or file name (0..1). Candidates are
 * the top keyword hits and the top vector hits; every candidate is scored on both signals.
 */
export const VECTOR_WEIGHT = 0.7;
export const KEYWORD_WEIGHT = 0.3;
export const TITLE_WEIGHT = 0.1;
/** Matching chunks listed per note in searchNotes (the best ones). */
export const CHUNKS_PER_NOTE = 8;

export interface SearchSource {
  textSearch(query: string, limit: number): Promise<TextHit[]>;
  chunkById(id: string): Chunk | undefined;
  /** Null when there are no usable vectors or the query could not be embedded (keyword-only then). */
  queryVector(query: string, signal?: AbortSignal): Promise<Float32Array | null>;
  /** Top k chunks by cosine to a normalized query vector. */
  vectorSearch(query: Float32Array, k: number, accept: (chunk: Chunk) => boolean): { chunk: Chunk; cosine: number }[];
  /** Cosine of one chunk to the query, or null when the chunk has no vector. */
  cosineOf(chunk: Chunk, query: Float32Array): number | null;
}

interface Candidate {
  chunk: Chunk;
  bm25: number;
  /** Distinct query words in the chunk (from the text index). */
  matched: number;
  cosine: number;
}

export async function searchChunks(source: SearchSource, query: string, options: SearchOptions = {}): Promise<ChunkHit[]> {
  const limit = clampLimit(options.limit);
  return withSnippets((await rankChunks(source, query, options, Math.max(limit * 5, 50))).slice(0, limit), query.trim());
}

export async function searchNotes(source: SearchSource, query: string, options: SearchOptions = {}): Promise<NoteHit[]> {
  const limit = clampLimit(options.limit);
  // Several chunks of one note compete for the same slot: fetch generously, then group.
  const hits = await rankChunks(source, query, options, Math.max(limit * 10, 100));
  const byNote = new Map<string, ChunkHit[]>();
  for (const hit of hits) {
    const list = byNote.get(hit.chunk.path);
    if (list) list.push(hit);
    else byNote.set(hit.chunk.path, [hit]);
  }
  const notes: NoteHit[] = [];
  for (const [path, all] of byNote) {
    const chunks = all.slice(0, CHUNKS_PER_NOTE);
    const best = chunks[0];
    const slash = path.lastIndexOf("/");
    notes.push({
      path,
      title: best.chunk.title,
      folder: slash >= 0 ? path.slice(0, slash) : "",
      score: best.score,
      snippet: best.snippet,
      headings: best.chunk.headings,
      startLine: best.chunk.startLine,
      endLine: best.chunk.endLine,
      chunks,
    });
  }
  const top = notes.sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).slice(0, limit);
  const trimmed = query.trim();
  for (const note of top) {
    withSnippets(note.chunks, trimmed);
    note.snippet = note.chunks[0].snippet;
  }
  return top;
}

async function rankChunks(source: SearchSource, query: string, options: SearchOptions, candidates: number): Promise<ChunkHit[]> {
  const trimmed = query.trim();
  if (!trimmed) return [];
  const prefix = options.pathPrefix ?? "";
  const accept = (chunk: Chunk) => chunk.path.startsWith(prefix);
  // A path filter throws most keyword hits away: ask Orama for more.
  const textLimit = prefix ? candidates * 4 : candidates;

  const [textHits, queryVector] = await Promise.all([
    source.textSearch(trimmed, textLimit),
    source.queryVector(trimmed, options.signal),
  ]);
  if (options.signal?.aborted) return [];

  const pool = new Map<string, Candidate>();
  for (const hit of textHits) {
    const chunk = source.chunkById(hit.id);
    if (!chunk || !accept(chunk)) continue;
    pool.set(chunk.id, { chunk, bm25: hit.score, matched: hit.matched, cosine: 0 });
  }
  if (queryVector) {
    for (const { chunk, cosine } of source.vectorSearch(queryVector, candidates, accept)) {
      const existing = pool.get(chunk.id);
      if (existing) existing.cosine = cosine;
      else pool.set(chunk.id, { chunk, bm25: 0, matched: 0, cosine });
    }
    for (const c of pool.values()) {
      if (c.cosine === 0) c.cosine = source.cosineOf(c.chunk, queryVector) ?? 0;
    }
  }

  const queryWords = [...new Set(tokenizeWords(trimmed))];
  // BM25 alone lets a short chunk with one query word beat a chunk holding all of them: weigh by coverage.
  if (queryWords.length > 1) {
    for (const c of pool.values()) if (c.bm25 > 0) c.bm25 *= 0.5 + (0.5 * Math.min(c.matched, queryWords.length)) / queryWords.length;
  }
  let maxBm25 = 0;
  for (const c of pool.values()) if (c.bm25 > maxBm25) maxBm25 = c.bm25;
  const titleWordsCache = new Map<string, Set<string>>();
  const minScore = options.minScore ?? 0;

  const hits: ChunkHit[] = [];
  for (const c of pool.values()) {
    const keywordScore = maxBm25 > 0 ? c.bm25 / maxBm25 : 0;
    const vectorScore = queryVector ? clamp01(c.cosine) : 0;
    const title = titleMatch(c.chunk, queryWords, titleWordsCache);
    const base = queryVector ? VECTOR_WEIGHT * vectorScore + KEYWORD_WEIGHT * keywordScore : keywordScore;
    const score = clamp01((base + TITLE_WEIGHT * title) / (1 + TITLE_WEIGHT));
    if (score < minScore || score <= 0) continue;
    hits.push({ chunk: c.chunk, score, keywordScore, vectorScore, snippet: "" });
  }
  hits.sort((a, b) => b.score - a.score || (a.chunk.id < b.chunk.id ? -1 : a.chunk.id > b.chunk.id ? 1 : 0));
  return hits.slice(0, candidates);
}

/** Snippets scan chunk text: made only for the hits that are returned. */
function withSnippets(hits: ChunkHit[], query: string): ChunkHit[] {
  for (const hit of hits) if (!hit.snippet) hit.snippet = makeSnippet(hit.chunk.text, query);
  return hits;
}

function titleMatch(chunk: Chunk, queryWords: string[], cache: Map<string, Set<string>>): number {
  if (queryWords.length === 0) return 0;
  let words = cache.get(chunk.path);
  if (!words) {
    const file = chunk.path.slice(chunk.path.lastIndexOf("/") + 1).replace(/\.md$/i, "");
    words = new Set([...tokenizeWords(chunk.title), ...tokenizeWords(file), ...chunk.aliases.flatMap((a) => tokenizeWords(a))]);
    cache.set(chunk.path, words);
  }
  let found = 0;
  for (const w of queryWords) if (words.has(w)) found++;
  return found / queryWords.length;
}

function clampLimit(limit: number | undefined): number {
  return Math.max(1, Math.min(500, Math.floor(limit ?? 10) || 10));
}

function clamp01(x: number): number {
  // NaN (a damaged vector) counts as no similarity, never as a score.
  return x > 0 ? (x < 1 ? x : 1) : 0;
}
