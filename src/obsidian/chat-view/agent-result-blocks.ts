// Purpose-built blocks for what an agent did: a created note (link, preview, Open), search results
// (clickable list with snippets and scores) and a summary with its source notes. A "message" result
// (a missing prerequisite) is plain text.
import type { AgentResult } from "../../core/agents/agent";
import { countOf } from "../../core/util/text";

export interface AgentBlockHandlers {
  /** line: 1-based, as search results count lines. */
  openNote(path: string, line: number | undefined, newTab: boolean): void;
  /** Renders a Markdown string (summary text, preview) the way answers are rendered. */
  renderMarkdown(markdown: string, el: HTMLElement): void;
}

function noteTitle(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/i, "");
}

function noteLinkEl(parent: HTMLElement, path: string, label: string, line: number | undefined, handlers: AgentBlockHandlers): HTMLElement {
  const link = parent.createEl("a", { cls: "krypton-note-link", text: label, href: "#", attr: { "data-path": path, title: path } });
  link.addEventListener("click", (ev) => {
    ev.preventDefault();
    handlers.openNote(path, line, ev.ctrlKey || ev.metaKey);
  });
  return link;
}

export function renderAgentResult(parent: HTMLElement, result: AgentResult, handlers: AgentBlockHandlers): HTMLElement {
  const block = parent.createDiv({ cls: ["krypton-agent-block", `krypton-agent-${result.kind}`] });
  switch (result.kind) {
    case "note-created": {
      const head = block.createDiv({ cls: "krypton-agent-head" });
      head.createSpan({ cls: "krypton-agent-label", text: "Note created" });
      noteLinkEl(head, result.path, result.title || noteTitle(result.path), undefined, handlers);
      block.createDiv({ cls: "krypton-agent-path", text: result.path });
      const preview = block.createDiv({ cls: "krypton-agent-preview" });
      handlers.renderMarkdown(result.preview, preview);
      const open = block.createEl("button", { cls: "krypton-agent-open", text: "Open", attr: { "aria-label": `Open ${result.path}` } });
      open.addEventListener("click", (ev) => handlers.openNote(result.path, undefined, ev.ctrlKey || ev.metaKey));
      break;
    }
    case "search-results": {
      const head = block.createDiv({ cls: "krypton-agent-head" });
      head.createSpan({
        cls: "krypton-agent-label",
        text: result.hits.length === 0 ? `No notes found for "${result.query}"` : `${countOf(result.hits.length, "note")} for "${result.query}"`,
      });
      const list = block.createEl("ol", { cls: "krypton-search-hits" });
      for (const hit of result.hits) {
        const item = list.createEl("li", { cls: "krypton-search-hit" });
        const top = item.createDiv({ cls: "krypton-search-hit-top" });
        noteLinkEl(top, hit.path, hit.title || noteTitle(hit.path), hit.startLine, handlers);
        top.createSpan({ cls: "krypton-search-score", text: hit.score.toFixed(2), attr: { title: "Relevance score" } });
        if (hit.folder) item.createDiv({ cls: "krypton-search-folder", text: hit.folder });
        if (hit.snippet) item.createDiv({ cls: "krypton-search-snippet", text: hit.snippet });
      }
      if (result.keywordOnly) block.createDiv({ cls: "krypton-search-keyword-only", text: result.keywordOnly });
      break;
    }
    case "summary": {
      const head = block.createDiv({ cls: "krypton-agent-head" });
      head.createSpan({ cls: "krypton-agent-label", text: `Summary: ${result.title}` });
      handlers.renderMarkdown(result.summary, block.createDiv({ cls: "krypton-agent-summary-text" }));
      if (result.sourceFiles.length > 0) {
        const sources = block.createDiv({ cls: "krypton-agent-sources" });
        sources.createSpan({ cls: "krypton-agent-sources-label", text: result.sourceFiles.length === 1 ? "Source note:" : "Source notes:" });
        const list = sources.createEl("ul");
        for (const path of result.sourceFiles) noteLinkEl(list.createEl("li"), path, noteTitle(path), undefined, handlers);
      }
      if (result.fitted) block.createDiv({ cls: "krypton-agent-remark", text: result.fitted });
      if (result.keywordOnly) block.createDiv({ cls: "krypton-search-keyword-only", text: result.keywordOnly });
      break;
    }
    case "message":
      handlers.renderMarkdown(result.text, block.createDiv({ cls: "krypton-agent-message" }));
      break;
  }
  return block;
}
