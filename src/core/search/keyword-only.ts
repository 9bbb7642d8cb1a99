import type { IndexStatus } from "../indexing/index-status";
import type { ChunkHit, NoteHit } from "./search-types";

/**
 * Why a search that should have used meaning matched by keywords only, as a sentence to show beside its
 * results, or null. One rule for every result built from a search on every host (chat retrieval, the
 * search tools, the search dialog, a topic summary, flashcards and a quiz from a topic, a goal's plan): the
 * embedder is down (status.embedderError), or the notes have vectors but this search got none
 * (status.queryEmbedError, read after the search). A vault without an embedder by choice gets nothing:
 * keyword search is what the user set up.
 *
 * `hits`: the search's hits; when one has a meaning score the query was embedded, whatever the status says
 * now. [] for the reason alone, before any search (the CLI warns with it once).
 */
export function keywordOnlyReason(status: IndexStatus | undefined, hits: readonly (ChunkHit | NoteHit)[]): string | null {
  if (!status || hits.some(hasMeaningScore)) return null;
  if (status.keywordOnly && status.embedderError) {
    return `Semantic search is unavailable (${trimStop(status.embedderError)}): notes were matched by keywords only.`;
  }
  if (!status.keywordOnly && status.embedded > 0 && status.queryEmbedError) {
    return `Semantic search failed (${trimStop(status.queryEmbedError)}): notes were matched by keywords only.`;
  }
  return null;
}

function hasMeaningScore(hit: ChunkHit | NoteHit): boolean {
  return "chunks" in hit ? hit.chunks.some((c) => c.vectorScore > 0) : hit.vectorScore > 0;
}

function trimStop(text: string): string {
  return text.replace(/\.$/, "");
}
