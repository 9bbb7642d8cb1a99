import type { Chunk, ChunkMeta } from "./chunk";
import { embeddingText } from "./markdown-chunker";
import { ownString } from "../util/own-string";

/** What the index knows about one note: enough to tell whether it changed, and its chunks. */
export interface NoteRecord {
  path: string;
  /** hashText of the whole note. */
  hash: string;
  mtime: number;
  size: number;
  title: string;
  aliases: string[];
  tags: string[];
  chunks: ChunkRecord[];
  /** Persistence partition the note lives in. */
  shard: number;
  /** Set when the note is over a per-note limit and only its beginning is indexed: what was left out. */
  limited?: string;
  /** Vectors of this note's chunks saved on disk but not loaded (a reader without an embedder never uses them). */
  vectorsOnDisk?: number;
}

/**
 * A chunk as the index keeps it in memory: one object holding only what is the chunk's own. Its path,
 * title, aliases and tags are its note's, and its id is derived from the path and its position (chunkId),
 * so half a million chunks hold no copy of them: a chunk object and an id string per chunk were ~100 MB
 * of a 100,000-note index. Searches hand out ChunkMeta objects made for their hits (chunkMetaOf).
 *
 * Its text is held only until the chunk is saved in its shard file, then read back on demand
 * (IndexStore.textsOf), so a 100k-note vault does not hold half a gigabyte of text.
 */
export interface ChunkRecord {
  /** The note the chunk belongs to. */
  readonly note: NoteRecord;
  /** Its position in the note (0-based). */
  readonly k: number;
  /** Its heading trail as one string (encodeTrail; headingsOf gives the list back). */
  readonly trail: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly textHash: string;
  /** The chunk's text until it is saved, then undefined. */
  text: string | undefined;
  /** VectorStore slot, or -1 while the chunk has no vector yet. */
  slot: number;
  /** Position of the chunk in its saved shard file, or -1 while it is not saved. */
  at: number;
  /** Its document slot in the text index, or -1 before it is added. */
  textSlot: number;
  /** Set when the chunk left the index (its note was removed or changed). */
  detached: boolean;
}

/** What a note record is made from: the note as read and indexed (noteRecord adds its chunks and shard). */
export type NoteFacts = Pick<NoteRecord, "path" | "hash" | "mtime" | "size" | "title" | "aliases" | "tags" | "limited">;

/**
 * A new note record with room for `chunkCount` chunks (every record is made here, every field written in
 * one order: one object shape for all of them). Spreading a note's facts into a literal instead gave each
 * of 100,000 notes a shape of its own once the spread went megamorphic: ~45 MB of shapes in a large vault.
 */
export function noteRecord(facts: NoteFacts, chunkCount: number, shard: number): NoteRecord {
  return {
    path: facts.path,
    hash: facts.hash,
    mtime: facts.mtime,
    size: facts.size,
    title: facts.title,
    aliases: facts.aliases,
    tags: facts.tags,
    chunks: new Array<ChunkRecord>(chunkCount),
    shard,
    limited: facts.limited,
    vectorsOnDisk: undefined,
  };
}

/** A new record of chunk `k` of `note` (every record is made here: one object shape for all of them). */
export function chunkRecord(
  note: NoteRecord,
  k: number,
  trail: string,
  chunk: Pick<ChunkMeta, "startLine" | "endLine" | "textHash">,
  text: string | undefined,
  at = -1,
): ChunkRecord {
  return { note, k, trail, startLine: chunk.startLine, endLine: chunk.endLine, textHash: chunk.textHash, text, slot: -1, at, textSlot: -1, detached: false };
}

/**
 * A heading trail as one flat string, each heading after a line break ([] is "", [""] is "\n"): a heading
 * is one line, so the list comes back exactly. One string per trail instead of an array and a string per
 * heading: in a 100,000-note index the trails were 650,000 arrays and 1.2 million strings (~90 MB).
 * Callers share one string between the chunks of a trail.
 */
export function encodeTrail(headings: readonly string[]): string {
  // Concatenation makes a rope of every piece: one flat string is one object to keep.
  return ownString(trailKey(headings));
}

/** encodeTrail's text before it is flattened: a key to find a trail already encoded (equal keys, equal trails). */
export function trailKey(headings: readonly string[]): string {
  let trail = "";
  for (const h of headings) trail += `\n${h}`;
  return trail;
}

export function headingsOf(rec: ChunkRecord): string[] {
  return rec.trail === "" ? [] : rec.trail.slice(1).split("\n");
}

/** The id of chunk `k` of the note at `path` (the chunker's ids, and every record's). */
export function chunkIdOf(path: string, k: number): string {
  return `${path}#${k}`;
}

export function chunkId(rec: ChunkRecord): string {
  return chunkIdOf(rec.note.path, rec.k);
}

/** The chunk as searches and callers see it (a fresh object: the index keeps none per chunk). */
export function chunkMetaOf(rec: ChunkRecord): ChunkMeta {
  const { note } = rec;
  return {
    id: chunkId(rec),
    path: note.path,
    title: note.title,
    aliases: note.aliases,
    tags: note.tags,
    headings: headingsOf(rec),
    startLine: rec.startLine,
    endLine: rec.endLine,
    textHash: rec.textHash,
  };
}

/** The chunk with its text. */
export function chunkOf(rec: ChunkRecord, text: string): Chunk {
  return { ...chunkMetaOf(rec), text };
}

/**
 * The text sent to the embedder for a chunk (Chunk.textHash covers it: same hash, same vector), from its
 * record and text: no ChunkMeta (an id string, a copy of the note's fields) is made for each of the
 * half-million chunks a large vault embeds.
 */
export function embeddingInput(rec: ChunkRecord, text: string): string {
  return embeddingText({ title: rec.note.title, headings: headingsOf(rec), text });
}
