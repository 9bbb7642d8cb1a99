import type { Manifest, ShardEntry } from "./index-persistence";
import type { StoredText } from "./shard-codec";
import { countOf } from "../util/text";

/**
 * Structure checks for what is read back from .krypton/index. Checksums prove a file is the one that was
 * written; these prove its contents are possible (a bug, a foreign tool or a hand edit can write a file
 * with a valid checksum and impossible values). A failed check is reported like corruption: the shard's
 * notes are re-indexed, the manifest repaired, and the status says so.
 */

/** Why a shard's stored note list is impossible, or null. `raw` is the parsed JSON of the shard's notes. */
export function storedNotesProblemV2(raw: unknown): string | null {
  const fields = 6;
  if (!Array.isArray(raw)) return "its note list is not a list";
  for (const n of raw as unknown[]) {
    if (!n || typeof n !== "object") return "a note entry is not an object";
    const note = n as Record<string, unknown>;
    if (typeof note.p !== "string" || note.p === "") return "a note has no path";
    if (typeof note.h !== "string") return `note ${note.p} has no content hash`;
    if (!isFiniteNumber(note.m) || !isFiniteNumber(note.s)) return `note ${note.p} has an invalid time or size`;
    if (typeof note.t !== "string" || !isStringList(note.a) || !isStringList(note.g)) return `note ${note.p} has a malformed title, aliases or tags`;
    if (!Array.isArray(note.c)) return `note ${note.p} has no chunk list`;
    let previousStart = 0;
    for (const c of note.c as unknown[]) {
      if (!Array.isArray(c) || c.length < fields) return `a chunk of ${note.p} is malformed`;
      const [id, headings, startLine, endLine] = c as unknown[];
      const text = (c as unknown[])[4];
      const textHash = (c as unknown[])[fields - 1];
      if (typeof id !== "string" || id === "") return `a chunk of ${note.p} has no id`;
      if (!Array.isArray(headings) || !headings.every((x) => typeof x === "string")) return `a chunk of ${note.p} has malformed headings`;
      if (typeof text !== "string") return `a chunk of ${note.p} has text of the wrong type (${typeof text})`;
      if (typeof textHash !== "string") return `a chunk of ${note.p} has no text hash`;
      if (!isLine(startLine) || !isLine(endLine) || endLine < startLine) return `a chunk of ${note.p} has an impossible line range`;
      if (startLine < previousStart) return `the chunks of ${note.p} are out of order (line ${startLine} after ${previousStart})`;
      previousStart = startLine;
    }
  }
  return null;
}

/**
 * Why a shard's note listing (paths, mtimes, sizes, chunk counts; shard-codec.ts) is impossible, or null.
 * `count`: the shard's chunk count, which the chunk counts must add up to (null: not known here).
 */
export function storedListingProblem(raw: unknown, count: number | null): string | null {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return "its note list is not a list";
  const { p, m, s, n, l } = raw as Record<string, unknown>;
  if (!Array.isArray(p) || !Array.isArray(m) || !Array.isArray(s) || !Array.isArray(n)) return "its note list is not a list";
  if (m.length !== p.length || s.length !== p.length || n.length !== p.length) return "its note list columns differ in length";
  let chunks = 0;
  for (let k = 0; k < p.length; k++) {
    const path = p[k] as unknown;
    if (typeof path !== "string" || path === "") return "a note has no path";
    if (!isFiniteNumber(m[k]) || !isFiniteNumber(s[k])) return `note ${path} has an invalid time or size`;
    if (!isCount(n[k])) return `note ${path} has no chunk count`;
    chunks += n[k] as number;
  }
  if (count !== null && chunks !== count) return "its notes' chunk counts do not add up to its chunks";
  if (l !== undefined && (!Array.isArray(l) || !l.every((e) => Array.isArray(e) && isCount(e[0]) && (e[0]) < p.length && typeof e[1] === "string"))) {
    return "its list of notes indexed in part is malformed";
  }
  return null;
}

/** Why a shard's notes and chunk columns (the meta part) are impossible, or null. `paths`/`counts`: from its listing. */
export function storedShardMetaProblem(raw: unknown, paths: readonly string[], counts: readonly number[]): string | null {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return "its note list is not a list";
  const { trails, notes } = raw as { trails?: unknown; notes?: unknown };
  if (!Array.isArray(trails) || !trails.every(isStringList)) return "its heading trails are malformed";
  if (!Array.isArray(notes)) return "its note list is not a list";
  if (notes.length !== paths.length) return "its notes and its note listing differ";
  for (let k = 0; k < notes.length; k++) {
    const n = notes[k] as unknown;
    const path = paths[k];
    if (!n || typeof n !== "object") return "a note entry is not an object";
    const note = n as Record<string, unknown>;
    if (typeof note.h !== "string") return `note ${path} has no content hash`;
    if (typeof note.t !== "string" || !isStringList(note.a) || !isStringList(note.g)) return `note ${path} has a malformed title, aliases or tags`;
    const count = counts[k];
    const { hd, ln, x, i } = note;
    if (!Array.isArray(hd) || hd.length !== count || !hd.every((t) => Number.isInteger(t) && t >= 0 && t < trails.length)) return `a chunk of ${path} has malformed headings`;
    if (typeof x !== "string" || x.length !== count * 16) return `a chunk of ${path} has no text hash`;
    if (i !== undefined && (!isStringList(i) || i.length !== count || i.some((id) => id === ""))) return `a chunk of ${path} has no id`;
    if (!Array.isArray(ln) || ln.length !== 2 * count) return `a chunk of ${path} has an impossible line range`;
    let previousStart = 0;
    for (let c = 0; c < count; c++) {
      const startLine = ln[2 * c] as unknown;
      const endLine = ln[2 * c + 1] as unknown;
      if (!isLine(startLine) || !isLine(endLine) || endLine < startLine) return `a chunk of ${path} has an impossible line range`;
      if (startLine < previousStart) return `the chunks of ${path} are out of order (line ${startLine} after ${previousStart})`;
      previousStart = startLine;
    }
  }
  return null;
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((x) => typeof x === "string");
}

/**
 * Why a shard's stored words are impossible (offsets that go backwards, chunks out of range or out of order,
 * zero lengths, NaN weights), or null.
 */
export function storedTextProblem(text: StoredText, count: number): string | null {
  const { postingStart, pairs, pairWeights, lengths, dictionary } = text;
  const words = dictionary.length;
  const offsetsProblem = postingStartProblem(postingStart, words, pairs.length / 2);
  if (offsetsProblem) return offsetsProblem;
  const hasWords = new Uint8Array(count);
  for (let w = 0; w < words; w++) {
    const from = postingStart[w];
    const to = postingStart[w + 1];
    let previous = -1;
    for (let e = from; e < to; e++) {
      const chunk = pairs[2 * e];
      if (chunk >= count || chunk <= previous) return `a posting of word ${w} names chunk ${chunk} out of order or range`;
      previous = chunk;
      hasWords[chunk] = 1;
      const weight = pairWeights[2 * e + 1];
      if (!(weight > 0) || !Number.isFinite(weight)) return `a word weight is impossible (${weight})`;
    }
  }
  for (let i = 0; i < count; i++) {
    // A chunk with words has a positive boosted length (zero only for a chunk without a single word).
    if (!Number.isFinite(lengths[i]) || lengths[i] < 0 || (hasWords[i] === 1 && lengths[i] === 0)) return `chunk ${i} has an impossible length (${lengths[i]})`;
  }
  return null;
}

/** Why a shard's per-word posting offsets are impossible (not from 0 to its posting count, or going backwards), or null. */
export function postingStartProblem(postingStart: Uint32Array, words: number, postings: number): string | null {
  if (postingStart.length !== words + 1 || postingStart[0] !== 0 || postingStart[words] !== postings) return "its word offsets do not match its postings";
  for (let w = 0; w < words; w++) if (postingStart[w + 1] < postingStart[w]) return `its word offsets go backwards at word ${w}`;
  return null;
}

/** Why a shard's stored vectors are impossible, or null. Stored vectors are unit length: anything far off is damage. */
export function storedVectorsProblem(vectors: Float32Array, dim: number): string | null {
  if (dim <= 0) return null;
  const count = vectors.length / dim;
  for (let v = 0; v < count; v++) {
    let norm = 0;
    const from = v * dim;
    for (let i = from; i < from + dim; i++) norm += vectors[i] * vectors[i];
    // NaN and Infinity fail this comparison too.
    if (!(norm > 0.5 && norm < 2)) return `vector ${v} is damaged (${Number.isNaN(norm) ? "NaN" : norm === 0 ? "all zeros" : `length ${Math.sqrt(norm)}`})`;
  }
  return null;
}

/**
 * Why a shard's vector scales are impossible (non-positive or not finite), or null. The codes' lengths are
 * checked once they are in the vector store (VectorStore.lengthProblem, SIMD), which is where they are used.
 */
export function storedScalesProblem(scales: Float32Array): string | null {
  for (let v = 0; v < scales.length; v++) {
    const scale = scales[v];
    if (!(scale > 0) || !Number.isFinite(scale)) return `vector ${v} is damaged (scale ${scale})`;
  }
  return null;
}

/**
 * Checks the manifest's fields and repairs what can be repaired without losing vectors: a generation that is
 * not a non-negative integer is recomputed from the shard names, duplicate shard entries are dropped.
 * Returns the repairs made (empty when none); throws via `fail` for what cannot be repaired.
 */
export function checkManifest(m: Manifest, fail: (message: string) => Error): string[] {
  const repairs: string[] = [];
  for (const s of m.shards) {
    if (!isCount(s.id) || !isCount(s.bytes)) throw fail("the index manifest has an invalid shard entry");
    if ((s.notes !== undefined && !isCount(s.notes)) || (s.chunks !== undefined && !isCount(s.chunks))) throw fail("the index manifest has an invalid shard entry");
  }
  const seenIds = new Set<number>();
  const seenFiles = new Set<string>();
  const unique: ShardEntry[] = [];
  for (const s of m.shards) {
    if (seenIds.has(s.id) || seenFiles.has(s.file)) continue;
    seenIds.add(s.id);
    seenFiles.add(s.file);
    unique.push(s);
  }
  if (unique.length !== m.shards.length) {
    repairs.push(`the index manifest listed ${countOf(m.shards.length - unique.length, "shard")} twice`);
    m.shards = unique;
  }
  if (!isCount(m.generation)) {
    const bad = JSON.stringify(m.generation) ?? "missing";
    m.generation = Math.max(0, ...m.shards.map((s) => Number(/^shard-\d+-(\d+)\.bin$/.exec(s.file)?.[1] ?? 0)));
    repairs.push(`the index manifest had an invalid generation (${bad})`);
  }
  return repairs;
}

function isFiniteNumber(x: unknown): x is number {
  return typeof x === "number" && Number.isFinite(x);
}

function isCount(x: unknown): x is number {
  return typeof x === "number" && Number.isInteger(x) && x >= 0;
}

function isLine(x: unknown): x is number {
  return typeof x === "number" && Number.isInteger(x) && x >= 1;
}
