import type { IndexStatus } from "../indexing/index-status";

/**
 * Why searches that should use meaning match by keywords only, as a sentence to show beside their results,
 * or null. One rule for every result built from a search on every host (chat retrieval, the search tools,
 * the search dialog, a topic summary, flashcards and a quiz from a topic, a goal's plan), found or not:
 * the embedder is down (status.embedderError), or the notes have vectors but a search got no query vector
 * (status.queryEmbedError, read after that search). A vault without an embedder by choice gets nothing:
 * keyword search is what the user set up.
 *
 * Whether one search went without meaning is that search's to say: the index asks this only for a search
 * that had no query vector, and hands the sentence back with its hits (SearchResult.keywordOnly). Called on
 * its own, it is the reason before any search (the CLI warns with it once).
 */
export function keywordOnlyReason(status: IndexStatus | undefined): string | null {
  if (!status) return null;
  if (status.keywordOnly && status.embedderError) {
    return `Semantic search is unavailable (${trimStop(status.embedderError)}): notes were matched by keywords only.`;
  }
  if (!status.keywordOnly && status.embedded > 0 && status.queryEmbedError) {
    return `Semantic search failed (${trimStop(status.queryEmbedError)}): notes were matched by keywords only.`;
  }
  return null;
}

function trimStop(text: string): string {
  return text.replace(/\.$/, "");
}
