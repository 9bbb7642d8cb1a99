import type { NoteCreated, SearchResults, Summary } from "./note-operations";
import { noteLink } from "./note-paths";
import { countOf } from "../util/text";

/**
 * Markdown renderings of the agents' results: the `text` field every host can show as is (the chat view
 * renders it when it has no purpose-built block, the CLI prints it, MCP returns it as text content).
 */

export function noteCreatedText(r: Omit<NoteCreated, "text">): string {
  const preview = r.preview ? `\n\n> ${r.preview}` : "";
  return `Created ${noteLink(r.path, r.title)} (\`${r.path}\`).${preview}`;
}

export function searchResultsText(r: Omit<SearchResults, "text">): string {
  const count = countOf(r.hits.length, "note");
  const lines = r.hits.map((hit, i) => {
    const where = hit.folder ? ` · ${hit.folder}` : "";
    const snippet = hit.snippet.replace(/\s+/g, " ").trim();
    return `${i + 1}. ${noteLink(hit.path, hit.title)}${where} · ${hit.score.toFixed(2)}${snippet ? `\n   ${snippet}` : ""}`;
  });
  return [`Found ${count} for "${r.query}":`, "", ...lines, ...(r.keywordOnly ? ["", `_${r.keywordOnly}_`] : [])].join("\n");
}

export function summaryText(r: Omit<Summary, "text">, heading: string): string {
  const sources = r.sourceFiles.length ? `\n\nSources: ${r.sourceFiles.map((p) => noteLink(p)).join(", ")}` : "";
  const remarks = summaryRemarks(r).map((remark) => `\n\n_${remark}_`);
  return `**${heading}**\n\n${r.summary}${sources}${remarks.join("")}`;
}

/**
 * The sentences a summary carries under it, in the order every host shows them: what fitting the model's
 * window cut, then why its notes were matched by keywords only. summarize_notes's text uses it too.
 */
export function summaryRemarks(r: Pick<Summary, "fitted" | "keywordOnly">): string[] {
  return [r.fitted, r.keywordOnly].filter((remark): remark is string => Boolean(remark));
}

/** How a chat message shows that its search matched by keywords only: the reason under it, in italics. */
export function keywordOnlyRemark(keywordOnly: string): string {
  return `\n\n_${keywordOnly}_`;
}

/** A message's text without its keyword-only remark, for hosts that say the remark elsewhere (the CLI: once, on stderr). */
export function withoutKeywordOnlyRemark(text: string, keywordOnly: string | undefined): string {
  const remark = keywordOnly ? keywordOnlyRemark(keywordOnly) : "";
  return remark && text.endsWith(remark) ? text.slice(0, -remark.length) : text;
}
