import type { Chunk, ChunkMeta } from "../indexing/chunk";
import { analyzeQuery, stemsOf } from "../indexing/text-analyzer";
import type { ChunkHit, FusionMethod, NoteHit, SearchOptions } from "./search-types";
import { makeSnippet } from "./snippet";
import { throwIfAborted } from "../util/errors";

/**
 * Hybrid ranking, the one place scores are made. Each candidate (top keyword hits ∪ top vector hits) is
 * scored on both signals, each first put on a 0..1 scale that means the same for every query:
 *
 *   keyword = BM25 / best BM25 among the candidates × the best candidate's coverage (the share of the
 *             query's IDF it contains: a query whose rare words occur nowhere cannot score high)
 *   vector  = (cosine − mean) / (1 − mean), 0..1, where mean is the query's mean cosine to the vault's
 *             chunks outside the candidates: each model puts unrelated texts at its own level (about 0.1
 *             for USE Lite, higher for others), so the raw cosine meant something different per model
 *   score   = (w × vector + (1 − w) × keyword + TITLE_WEIGHT × titleMatch) / (1 + TITLE_WEIGHT)
 *
 * w is the semanticWeight setting (0.7 by default, the first version's 0.7/0.3 split); without vectors
 * score = (keyword + TITLE_WEIGHT × titleMatch) / (1 + TITLE_WEIGHT). titleMatch = share of the query's
 * words in the note's title, aliases or file name. `npm run bench -- --only quality` measures this against
 * reciprocal rank fusion and the first version's raw mix on a real model.
 *
 * A note (searchNotes) is scored by the same formula over note-level signals: meaning = its best chunk's,
 * keyword = its best chunk's + NOTE_KEYWORD_SHARE × its second-best chunk's (at most 1). A note whose
 * sections each hold some of the query's words is better evidence than one lucky paragraph; the meaning
 * side gets no such share, because every chunk has some cosine and long notes would win by length.
 */
export const DEFAULT_SEMANTIC_WEIGHT = 0.7;
export const TITLE_WEIGHT = 0.1;
/** Reciprocal rank fusion's damping constant (the usual 60). */
const RRF_K = 60;
/** Matching chunks listed per note in searchNotes (the best ones). */
export const CHUNKS_PER_NOTE = 8;
/**
 * Share of a note's second-best keyword chunk added to its best (searchNotes). Chosen by 2-fold
 * cross-validation over the benchmark's questions (both halves pick 0.8 from 0, 0.1 … 1);
 * `npm run bench -- --only quality` reports the held-out figure beside the full-set one.
 */
export const NOTE_KEYWORD_SHARE = 0.8;
/**
 * The most chunk candidates searchNotes gathers when one long note's chunks fill its pool (a journal with a
 * hundred entries on the query's word): past one note at the per-note limit (2,000 chunks) and then some.
 */
const MAX_NOTE_CANDIDATES = 6_400;

export interface VectorCandidates {
  hits: { chunk: ChunkMeta; cosine: number }[];
  /** The query's mean cosine and its standard deviation over every vector in the index (`count` of them). */
  mean: number;
  std: number;
  count: number;
}

export interface SearchSource {
  /** Keyword hits, best first, only of chunks the search may show. */
  textSearch(query: string, limit: number): Promise<KeywordHit[]>;
  /** The chunks with their texts (read only for the hits a search returns). */
  withTexts(chunks: readonly ChunkMeta[]): Promise<Chunk[]>;
  /** Null when there are no usable vectors or the query could not be embedded (keyword-only then). */
  queryVector(query: string, signal?: AbortSignal): Promise<Float32Array | null>;
  /** Top k chunks (of notes whose path `accept`s) by cosine to a normalized query vector, with the query's cosine statistics. */
  vectorSearch(query: Float32Array, k: number, accept: (path: string) => boolean): Promise<VectorCandidates>;
  /** Cosine of one chunk to the query, or null when the chunk has no vector. */
  cosineOf(chunk: ChunkMeta, query: Float32Array): number | null;
}

/** A chunk found by its words: BM25 score, distinct query words in it, share of the query's IDF it holds (0..1). */
export interface KeywordHit {
  chunk: ChunkMeta;
  score: number;
  matched: number;
  coverage: number;
}

/** A ranked hit before its text is read. */
type RankedHit = Omit<ChunkHit, "chunk"> & { chunk: ChunkMeta };

interface Candidate {
  chunk: ChunkMeta;
  bm25: number;
  /** Distinct query words in the chunk (from the text index). */
  matched: number;
  coverage: number;
  cosine: number;
  keywordRank: number;
  vectorRank: number;
}

/**
 * A search's hits, and whether it went without meaning though meaning was asked for (a semantic weight
 * above 0, but no query vector: no usable vectors, or the query could not be embedded). The caller says
 * why (keywordOnlyReason): with no hits, the hits cannot tell.
 */
export interface Ranking<T> {
  hits: T[];
  withoutMeaning: boolean;
}

export async function searchChunks(source: SearchSource, query: string, options: SearchOptions = {}): Promise<Ranking<ChunkHit>> {
  const limit = clampLimit(options.limit);
  const ranked = await rankChunks(source, query, options, Math.max(limit * 5, 50));
  const hits = await withTexts(source, ranked.hits.slice(0, limit));
  return { hits: withSnippets(hits, query.trim()), withoutMeaning: ranked.withoutMeaning };
}

export async function searchNotes(source: SearchSource, query: string, options: SearchOptions = {}): Promise<Ranking<NoteHit>> {
  const limit = clampLimit(options.limit);
  // Several chunks of one note compete for the same slot: fetch generously, then group. When a few long
  // notes' chunks still fill the pool, fetch more: the other matching notes must not be crowded out.
  let candidates = Math.max(limit * 10, 100);
  let ranked = await rankChunks(source, query, options, candidates);
  // Crowded: as many chunks as asked for scored, yet from fewer notes than wanted (few qualifying chunks: no).
  while (ranked.hits.length >= candidates && candidates < MAX_NOTE_CANDIDATES && new Set(ranked.hits.map((h) => h.chunk.path)).size < limit) {
    candidates = Math.min(candidates * 4, MAX_NOTE_CANDIDATES);
    ranked = await rankChunks(source, query, options, candidates);
  }
  const share = options.noteKeywordShare ?? NOTE_KEYWORD_SHARE;
  const byNote = new Map<string, RankedHit[]>();
  for (const hit of ranked.hits) {
    const list = byNote.get(hit.chunk.path);
    if (list) list.push(hit);
    else byNote.set(hit.chunk.path, [hit]);
  }
  // Scored on all of a note's hits (not only the listed ones); texts are read only for the notes returned.
  const scored: { path: string; score: number; chunks: RankedHit[] }[] = [];
  for (const [path, all] of byNote) {
    const chunks = all.slice(0, CHUNKS_PER_NOTE);
    scored.push({ path, score: ranked.noteScore ? ranked.noteScore(all, share) : chunks[0].score, chunks });
  }
  scored.sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const kept = scored.slice(0, limit);
  const texts = await withTexts(source, kept.flatMap((n) => n.chunks));
  const notes: NoteHit[] = [];
  let at = 0;
  for (const { path, score, chunks: rankedChunks } of kept) {
    const chunks = texts.slice(at, at + rankedChunks.length);
    at += rankedChunks.length;
    const best = chunks[0];
    const slash = path.lastIndexOf("/");
    notes.push({
      path,
      title: best.chunk.title,
      folder: slash >= 0 ? path.slice(0, slash) : "",
      score,
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
  return { hits: top, withoutMeaning: ranked.withoutMeaning };
}

/** What a note's score is made of: its chunk hits' two signals (any of its hits, not only the listed ones). */
type NoteEvidence = Pick<ChunkHit, "keywordScore" | "vectorScore"> & { chunk: TitleSource };
type TitleSource = Pick<Chunk, "path" | "title" | "aliases">;

interface Ranked {
  hits: RankedHit[];
  /**
   * A note's score from its chunk hits (best first): the chunk formula over note-level signals (see the
   * top of this file). Null for rank fusion, whose notes keep their best chunk's score.
   */
  noteScore: ((hits: readonly NoteEvidence[], keywordShare: number) => number) | null;
  /** Meaning was asked for (weight above 0) but the query had no vector. */
  withoutMeaning: boolean;
}

async function rankChunks(source: SearchSource, query: string, options: SearchOptions, candidates: number): Promise<Ranked> {
  const trimmed = query.trim();
  if (!trimmed) return { hits: [], noteScore: null, withoutMeaning: false };
  const prefix = options.pathPrefix ?? "";
  const accept = (path: string) => path.startsWith(prefix);
  // A path filter throws most keyword hits away: ask for more.
  const textLimit = prefix ? candidates * 4 : candidates;
  const weight = clamp01(options.semanticWeight ?? DEFAULT_SEMANTIC_WEIGHT);
  const fusion: FusionMethod = options.fusion ?? "calibrated";

  const [allTextHits, queryVector] = await Promise.all([
    source.textSearch(trimmed, textLimit),
    weight > 0 ? source.queryVector(trimmed, options.signal) : Promise.resolve(null),
  ]);
  // A stopped search is stopped, not empty: "no notes match" would be a wrong answer.
  throwIfAborted(options.signal);
  // Meaning only, when there is meaning to rank by; without vectors the keywords still answer.
  const meaningOnly = weight >= 1 && queryVector !== null;
  const textHits = meaningOnly ? [] : allTextHits;

  const pool = new Map<string, Candidate>();
  for (const hit of textHits) {
    const chunk = hit.chunk;
    if (!accept(chunk.path)) continue;
    pool.set(chunk.id, { chunk, bm25: hit.score, matched: hit.matched, coverage: hit.coverage, cosine: 0, keywordRank: 0, vectorRank: 0 });
  }
  let mean = 0;
  let std = 0;
  if (queryVector) {
    const found = await source.vectorSearch(queryVector, candidates, accept);
    // "Unrelated" is the mean over the chunks that are not candidates: in a small vault the relevant
    // chunks themselves would otherwise raise the baseline (with no such chunks, the baseline is 0).
    const rest = found.count - found.hits.length;
    let candidateSum = 0;
    for (const hit of found.hits) candidateSum += hit.cosine;
    mean = rest > 0 ? Math.max(0, (found.mean * found.count - candidateSum) / rest) : 0;
    std = found.std;
    for (const { chunk, cosine } of found.hits) {
      const existing = pool.get(chunk.id);
      if (existing) existing.cosine = cosine;
      else pool.set(chunk.id, { chunk, bm25: 0, matched: 0, coverage: 0, cosine, keywordRank: 0, vectorRank: 0 });
    }
    for (const c of pool.values()) {
      if (c.cosine === 0) c.cosine = source.cosineOf(c.chunk, queryVector) ?? 0;
    }
  }

  const queryTerms = analyzeQuery(trimmed);
  const wordCount = queryTerms.length;
  // BM25 alone lets a short chunk with one query word beat a chunk holding all of them: weigh by coverage.
  if (wordCount > 1) {
    for (const c of pool.values()) if (c.bm25 > 0) c.bm25 *= 0.5 + (0.5 * Math.min(c.matched, wordCount)) / wordCount;
  }
  let maxBm25 = 0;
  let bestCoverage = 0;
  for (const c of pool.values()) {
    if (c.bm25 > maxBm25) maxBm25 = c.bm25;
    if (c.coverage > bestCoverage) bestCoverage = c.coverage;
  }
  if (fusion === "rrf") assignRanks([...pool.values()]);
  let minCos = Infinity;
  let maxCos = -Infinity;
  for (const c of pool.values()) {
    if (c.cosine < minCos) minCos = c.cosine;
    if (c.cosine > maxCos) maxCos = c.cosine;
  }
  const titleCache = new Map<string, Set<string>>();
  const minScore = options.minScore ?? 0;

  // One formula for a chunk and for a note (over its note-level signals).
  const fuse = (keywordScore: number, vectorScore: number, title: number): number => {
    const base = queryVector ? weight * vectorScore + (1 - weight) * keywordScore : keywordScore;
    return clamp01((base + TITLE_WEIGHT * title) / (1 + TITLE_WEIGHT));
  };
  const hits: RankedHit[] = [];
  for (const c of pool.values()) {
    const keywordScore = maxBm25 > 0 ? (c.bm25 / maxBm25) * (fusion === "calibrated" ? bestCoverage : 1) : 0;
    const vectorScore = queryVector
      ? fusion === "calibrated"
        ? calibratedCosine(c.cosine, mean, std)
        : fusion === "minmax"
          ? (maxCos > minCos ? (c.cosine - minCos) / (maxCos - minCos) : 0)
          : clamp01(c.cosine)
      : 0;
    const title = meaningOnly ? 0 : titleMatch(c.chunk, queryTerms, titleCache);
    const score =
      queryVector && fusion === "rrf"
        ? clamp01(((RRF_K + 1) * ((c.vectorRank > 0 ? weight / (RRF_K + c.vectorRank) : 0) + (c.keywordRank > 0 ? (1 - weight) / (RRF_K + c.keywordRank) : 0)) + TITLE_WEIGHT * title) / (1 + TITLE_WEIGHT))
        : fuse(keywordScore, vectorScore, title);
    if (score < minScore || score <= 0) continue;
    hits.push({ chunk: c.chunk, score, keywordScore, vectorScore, snippet: "" });
  }
  hits.sort((a, b) => b.score - a.score || (a.chunk.id < b.chunk.id ? -1 : a.chunk.id > b.chunk.id ? 1 : 0));
  const noteScore =
    queryVector && fusion === "rrf"
      ? null
      : (noteHits: readonly NoteEvidence[], keywordShare: number): number => {
          // The best two keyword scores and the best meaning score among the note's chunks (any of them).
          let kw1 = 0;
          let kw2 = 0;
          let vec = 0;
          for (const h of noteHits) {
            if (h.keywordScore > kw1) [kw1, kw2] = [h.keywordScore, kw1];
            else if (h.keywordScore > kw2) kw2 = h.keywordScore;
            if (h.vectorScore > vec) vec = h.vectorScore;
          }
          const title = meaningOnly ? 0 : titleMatch(noteHits[0].chunk, queryTerms, titleCache);
          return fuse(Math.min(1, kw1 + clamp01(keywordShare) * kw2), vec, title);
        };
  return { hits: hits.slice(0, candidates), noteScore, withoutMeaning: weight > 0 && queryVector === null };
}

/**
 * A cosine as the share of the way from this query's typical cosine (its mean over the vault: what
 * "unrelated" looks like for this model and query) to identical, 0..1. Removes each model's offset (USE
 * Lite's unrelated texts sit near 0.1, other models' near 0.4) while keeping absolute differences, which
 * tell a real match from the best of a poor lot better than a z-score does.
 */
function calibratedCosine(cosine: number, mean: number, std: number): number {
  if (!(std > 1e-6) || mean >= 1) return clamp01(cosine);
  return clamp01((cosine - mean) / (1 - mean));
}

/** 1-based ranks of each candidate in the keyword list and in the vector list (0 = not in that list). */
function assignRanks(pool: Candidate[]): void {
  pool.filter((c) => c.bm25 > 0).sort((a, b) => b.bm25 - a.bm25).forEach((c, i) => (c.keywordRank = i + 1));
  pool.filter((c) => c.cosine !== 0).sort((a, b) => b.cosine - a.cosine).forEach((c, i) => (c.vectorRank = i + 1));
}

/** The hits with their chunks' texts. */
async function withTexts(source: SearchSource, hits: RankedHit[]): Promise<ChunkHit[]> {
  if (hits.length === 0) return [];
  const chunks = await source.withTexts(hits.map((h) => h.chunk));
  return hits.map((h, i) => ({ ...h, chunk: chunks[i] }));
}

/** Snippets scan chunk text: made only for the hits that are returned. */
function withSnippets(hits: ChunkHit[], query: string): ChunkHit[] {
  for (const hit of hits) if (!hit.snippet) hit.snippet = makeSnippet(hit.chunk.text, query);
  return hits;
}

function titleMatch(chunk: TitleSource, queryTerms: ReturnType<typeof analyzeQuery>, cache: Map<string, Set<string>>): number {
  if (queryTerms.length === 0) return 0;
  let stems = cache.get(chunk.path);
  if (!stems) {
    const file = chunk.path.slice(chunk.path.lastIndexOf("/") + 1).replace(/\.md$/i, "");
    stems = stemsOf([chunk.title, file, ...chunk.aliases].join(" \n "));
    cache.set(chunk.path, stems);
  }
  let found = 0;
  for (const term of queryTerms) if (term.variants.some((v) => stems.has(v))) found++;
  return found / queryTerms.length;
}

function clampLimit(limit: number | undefined): number {
  return Math.max(1, Math.min(500, Math.floor(limit ?? 10) || 10));
}

function clamp01(x: number): number {
  // NaN (a damaged vector) counts as no similarity, never as a score.
  return x > 0 ? (x < 1 ? x : 1) : 0;
}
