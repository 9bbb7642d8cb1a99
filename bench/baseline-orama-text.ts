/**
 * Comparison row (informational, not a target): Orama as the full-text engine only, no vectors — the
 * alternative to Krypton's own BM25 index (src/core/indexing/text-index.ts). Same chunks, same fields,
 * same field boosts as Krypton's FIELD_BOOST.
 */
import { create, insertMultiple, search, type AnyOrama } from "@orama/orama";
import type { Chunk } from "../src/core/indexing/chunk";
import { FIELD_BOOST } from "../src/core/indexing/text-index";

const SCHEMA = {
  title: "string",
  aliases: "string",
  tags: "string",
  headings: "string",
  path: "string",
  content: "string",
} as const;

const PROPERTIES = ["title", "aliases", "tags", "headings", "path", "content"] as const;

export async function buildOramaText(chunks: readonly Chunk[]): Promise<AnyOrama> {
  const db = create({ schema: SCHEMA });
  const batch = 1000;
  for (let start = 0; start < chunks.length; start += batch) {
    const docs = chunks.slice(start, start + batch).map((c) => ({
      id: c.id,
      title: c.title,
      aliases: c.aliases.join(" "),
      tags: c.tags.join(" "),
      headings: c.headings.join(" "),
      path: c.path.replace(/\.md$/i, ""),
      content: c.text,
    }));
    await insertMultiple(db, docs, batch);
  }
  return db;
}

export async function oramaTextSearch(db: AnyOrama, term: string, limit = 10): Promise<number> {
  const result = await search(db, { term, properties: [...PROPERTIES], boost: { ...FIELD_BOOST }, limit });
  return result.hits.length;
}
