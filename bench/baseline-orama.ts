/**
 * Baseline (a): the naive Orama set-up similar plugins use — vectors in an Orama `vector[768]` field,
 * hybrid search done by Orama, the whole database saved and loaded with @orama/plugin-data-persistence
 * (JSON format).
 */
import { create, insertMultiple, search, type AnyOrama } from "@orama/orama";
import { persist, restore } from "@orama/plugin-data-persistence";
import { DIM } from "./bench-kit";
import type { Corpus } from "./corpus";

const SCHEMA = {
  chunkId: "string",
  path: "string",
  title: "string",
  headings: "string",
  content: "string",
  embedding: `vector[${DIM}]`,
} as const;

export async function buildNaiveOrama(corpus: Corpus, count = corpus.chunks.length): Promise<AnyOrama> {
  const db = create({ schema: SCHEMA });
  const batch = 1000;
  for (let start = 0; start < count; start += batch) {
    const docs = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      const c = corpus.chunks[i];
      docs.push({
        chunkId: c.id,
        path: c.path,
        title: c.title,
        headings: c.headings.join(" "),
        content: c.text,
        embedding: Array.from(corpus.vectors.subarray(i * DIM, (i + 1) * DIM)),
      });
    }
    await insertMultiple(db, docs, batch);
  }
  return db;
}

export async function naiveOramaHybrid(db: AnyOrama, term: string, vector: Float32Array, limit = 10): Promise<number> {
  const result = await search(db, {
    mode: "hybrid",
    term,
    vector: { value: Array.from(vector), property: "embedding" },
    similarity: 0.1,
    limit,
    hybridWeights: { text: 0.3, vector: 0.7 },
  });
  return result.hits.length;
}

export async function persistNaiveOrama(db: AnyOrama): Promise<string> {
  const data = await persist(db, "json");
  if (typeof data !== "string") throw new Error("persist(json) did not return a string");
  return data;
}

export async function restoreNaiveOrama(data: string): Promise<AnyOrama> {
  return restore("json", data);
}
