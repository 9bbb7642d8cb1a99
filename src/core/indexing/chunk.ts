/** One indexed piece of a note: the unit of search and of embedding. */
export interface Chunk {
  /** Unique across the vault: derived from the note path and the chunk's position, never from content alone. */
  id: string;
  /** Vault-relative note path. */
  path: string;
  /** Frontmatter title, else the first H1, else the file name without ".md". */
  title: string;
  aliases: string[];
  tags: string[];
  /** Heading trail from the top, e.g. ["Setup", "Ollama"]. Empty before the first heading. */
  headings: string[];
  /** 1-based, inclusive line range in the note (frontmatter lines count). */
  startLine: number;
  endLine: number;
  /** The chunk's markdown text. */
  text: string;
  /** Hash of what gets embedded; an unchanged hash means the stored vector is reused. */
  textHash: string;
}

/** A chunk without its text: what ranking needs (the index keeps texts on disk once saved). */
export type ChunkMeta = Omit<Chunk, "text">;
