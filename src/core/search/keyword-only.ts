import type { IndexStatus } from "../indexing/index-status";

/**
 * Why a search that should have used meaning matched by keywords only, as a sentence to show beside its
 * results, or null. One rule for chat retrieval and the search tools (chat agent, MCP, agent mode): the
 * embedder is down (status.embedderError), or the notes have vectors but this search got none
 * (status.queryEmbedError, read after the search). A vault without an embedder by choice gets nothing:
 * keyword search is what the user set up.
 *
 * `usedMeaning`: some hit has a meaning score (then the query was embedded, whatever the status says now).
 */
export function keywordOnlyReason(status: IndexStatus | undefined, usedMeaning: boolean): string | null {
  if (!status || usedMeaning) return null;
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
