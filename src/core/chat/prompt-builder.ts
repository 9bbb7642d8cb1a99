/**
 * Builds the messages for one answer: system instructions, the bounded history, one user message with
 * numbered context blocks in labelled sections ("Current note", "Local notes", "Web results") and the
 * question, and last the answer-language instruction, as agent mode sends it (small models follow it there,
 * not at the top). The numbers are continuous across sections, and `sources[n-1]` is block [n], so the
 * view can turn "[2]" in the answer into a link to the note (path, heading, lines) or the URL.
 */
import { languageInstruction } from "../model/answer-language";
import type { ChatMessage } from "../ports/chat-model";
import { asEarlierTurns } from "../providers/context-fit";
import type { ChunkHit } from "../search/search-types";
import { makeSnippet } from "../search/snippet";
import type { RetrievalMode } from "../settings";
import type { WebSnippet } from "../web/web-search";
import type { Source } from "./chat-types";

export interface ActiveNoteContext {
  path: string;
  title: string;
  text: string;
  /** 1-based last line of `text` in the note. */
  endLine: number;
  truncated: boolean;
}

export interface PromptInput {
  question: string;
  /** Already bounded by the ConversationMemoryPolicy. */
  history: ChatMessage[];
  mode: RetrievalMode;
  notes: ChunkHit[];
  web: WebSnippet[];
  activeNote?: ActiveNoteContext;
}

export interface BuiltPrompt {
  messages: ChatMessage[];
  sources: Source[];
}

export const SECTION_CURRENT_NOTE = "Current note";
export const SECTION_NOTES = "Local notes";
export const SECTION_WEB = "Web results";

const SNIPPET_CHARS = 240;

function snippetOf(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > SNIPPET_CHARS ? `${flat.slice(0, SNIPPET_CHARS - 1)}…` : flat;
}

function lineRange(start: number, end: number): string {
  return start === end ? `line ${start}` : `lines ${start}-${end}`;
}

export function systemInstructions(mode: RetrievalMode, hasContext: boolean): string {
  const lines = ["You are Krypton, an assistant inside the user's Obsidian vault. Answer concisely, using Markdown."];
  if (hasContext) {
    const what = mode === "web" ? "web results" : mode === "hybrid" ? "the user's notes and web results" : "the user's notes";
    lines.push(
      `Numbered context blocks from ${what} come with the question. Use them when they are relevant.`,
      "Cite the blocks you use right after the statement they support, like [1] or [2][3]. Cite only numbers that exist.",
      "If the context does not answer the question, say so plainly, then answer from general knowledge and say which part is not from the context.",
      "Never invent note names, quotes or URLs.",
    );
  } else if (mode !== "none") {
    lines.push("No relevant context was found for this question: say so if the question is about the user's notes or the web, and never invent note names, quotes or URLs.");
  }
  return lines.join("\n");
}

export function buildPrompt(input: PromptInput): BuiltPrompt {
  const sources: Source[] = [];
  const sections: string[] = [];

  if (input.activeNote) {
    const note = input.activeNote;
    const n = sources.length + 1;
    sources.push({ n, kind: "note", path: note.path, title: note.title, headings: [], startLine: 1, endLine: note.endLine, snippet: makeSnippet(note.text, "", SNIPPET_CHARS) });
    const cut = note.truncated ? " (beginning only)" : "";
    sections.push(`## ${SECTION_CURRENT_NOTE}\n[${n}] ${note.path}${cut}\n${note.text.trim()}`);
  }

  if (input.notes.length > 0) {
    const blocks = input.notes.map((hit) => {
      const c = hit.chunk;
      const n = sources.length + 1;
      sources.push({
        n,
        kind: "note",
        path: c.path,
        title: c.title,
        headings: [...c.headings],
        startLine: c.startLine,
        endLine: c.endLine,
        snippet: hit.snippet || makeSnippet(c.text, "", SNIPPET_CHARS),
      });
      const trail = c.headings.length ? ` › ${c.headings.join(" › ")}` : "";
      return `[${n}] ${c.path}${trail} (${lineRange(c.startLine, c.endLine)})\n${c.text.trim()}`;
    });
    sections.push(`## ${SECTION_NOTES}\n${blocks.join("\n\n")}`);
  }

  if (input.web.length > 0) {
    const blocks = input.web.map((w) => {
      const n = sources.length + 1;
      sources.push({ n, kind: "web", title: w.title, url: w.url, snippet: snippetOf(w.content) });
      return `[${n}] ${w.title} — ${w.url}\n${w.content.trim()}`;
    });
    sections.push(`## ${SECTION_WEB}\n${blocks.join("\n\n")}`);
  }

  const hasContext = sources.length > 0;
  const lead = "Context:\n\n";
  const context = sections.join("\n\n");
  // The context blocks may be shortened to fit the model's window; the question never is.
  const user: ChatMessage = hasContext
    ? { role: "user", content: `${lead}${context}\n\nQuestion: ${input.question}`, quoted: { start: lead.length, end: lead.length + context.length, kind: "excerpts" } }
    : { role: "user", content: input.question };
  return {
    messages: [
      { role: "system", content: systemInstructions(input.mode, hasContext) },
      ...asEarlierTurns(input.history),
      user,
      { role: "system", content: languageInstruction(input.question) },
    ],
    sources,
  };
}

/** The citation numbers used in an answer ("see [1] and [3][4]" → [1, 3, 4]) that exist in `sources`. */
export function citedNumbers(answer: string, sources: Source[]): number[] {
  const found = new Set<number>();
  for (const m of answer.matchAll(/\[(\d{1,3})\]/g)) {
    const n = Number(m[1]);
    if (n >= 1 && n <= sources.length) found.add(n);
  }
  return [...found].sort((a, b) => a - b);
}
