import { queryWordKind } from "../indexing/text-analyzer";
import { oneLine } from "../util/text";

/**
 * Why a query that found nothing could not find anything by keywords, or null: the analyser the search uses
 * dropped every word of it (only function words, or no word at all). One sentence for every host that says
 * "No notes match"; the query is named on one short line.
 */
export function unsearchableQueryText(query: string): string | null {
  const kind = queryWordKind(query);
  if (kind === "content") return null;
  const named = `"${oneLine(query.trim(), 60)}"`;
  return kind === "common"
    ? `${named} has only common words, which search ignores; add a word that names the topic.`
    : `${named} has no words to search for; type a word that names the topic.`;
}
