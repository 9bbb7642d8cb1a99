import { isNoteRefusedError } from "./read-policy";
import type { VaultIndexApi } from "../indexing/vault-index-api";
import type { ChatMessage, ChatModel, ContextFit } from "../ports/chat-model";
import { fitNotice, mergeFits } from "../providers/context-fit";
import { reportingFits } from "../providers/turn-views";
import type { Host } from "../ports/host";
import { NoteNotFoundError } from "../ports/vault";
import type { KryptonSettings } from "../settings";
import { AgentError, noNotesMatch } from "./agent-error";
import {
  combineSummariesPrompt,
  createNotePrompt,
  summarizeNotePrompt,
  summarizePartPrompt,
  summarizeTopicPrompt,
} from "./note-prompts";
import { errorMessage, isAbortError, throwIfAborted } from "../util/errors";
import { firstHeading, mentioningTopic, previewOf, readableNote, significantWords, splitIntoParts, truncateWords } from "./note-text";
import { askModel } from "../model/ask-model";
import { checkGeneratedNote, generatedNoteRepair } from "./generated-note";
import { ANSWER_BUDGET } from "../model/answer-budget";
import type { NoteCreated, NoteOperations, SearchResults, Summary } from "./note-operations";
import { createUniqueNote, normalizeVaultPath, slugify } from "./note-paths";
import { noteCreatedText, searchResultsText, summaryText } from "./result-text";
import { countOf, formatCount } from "../util/text";

export interface NoteOperationsDeps {
  host: Host;
  settings: () => KryptonSettings;
  index: VaultIndexApi;
  chatModel: () => ChatModel | null;
}

/** The agent names results carry (and the chat agents use). */
export const AGENT_NAMES = { create: "create-note", search: "search-notes", summarize: "summarize" } as const;

/** Size limits, tuned for small local models (8B, a few thousand tokens of context). */
export const LIMITS = {
  /** Longest topic or query accepted. */
  topicChars: 200,
  /** A note longer than this is summarized in parts of at most this many characters, then combined. */
  summaryPartChars: 6000,
  /**
   * At most this many parts are summarized (one model call each, ~120,000 characters): a book-length
   * note would otherwise cost hundreds of calls. The rest is left out and the summary says so.
   */
  summaryMaxParts: 20,
  /** Chunks retrieved for a topic summary before keeping those that mention the topic. */
  topicRetrieve: 24,
  /** Chunks (and words per chunk) that go into a topic summary prompt. */
  topicChunks: 6,
  topicChunkWords: 800,
  /** Search results by default, and at most. */
  searchDefault: 10,
  searchMax: 50,
  /** Suffixes tried for a free file name ("x-1.md" … "x-999.md"). */
  nameAttempts: 1000,
  /** How long createNote (or a search right after it) waits, once, for the index to take in the new note. */
  newNoteIndexWaitMs: 5000,
};

/** The agents' actions (see note-operations.ts): one implementation for chat, commands, CLI and MCP. */
export function createNoteOperations(deps: NoteOperationsDeps): NoteOperations {
  const { host } = deps;

  function requireModel(): ChatModel {
    const model = deps.chatModel();
    if (!model) throw new AgentError("No chat model is configured. Choose a chat provider and model in Krypton's settings.", "no-model");
    return model;
  }

  /** An index that is still (re)building is searchable once it has chunks; only a missing one is refused. */
  function requireIndex(): void {
    const status = deps.index.status();
    if (status.state === "ready" || (status.state === "indexing" && status.chunks > 0)) return;
    const progress = status.progress ? ` (${formatCount(status.progress.done)} of ${countOf(status.progress.total, "note")})` : "";
    const message =
      status.state === "indexing"
        ? `The index is not ready yet: indexing${progress}. Try again when it finishes.`
        : status.state === "loading"
          ? "The index is not ready yet: it is still loading. Try again in a moment."
          : status.state === "error"
            ? "The index is not ready: it failed to build. Rebuild the index, then try again."
            : "The index is not ready: the vault has not been indexed yet. Index the vault first.";
    throw new AgentError(message, "index-not-ready");
  }

  function requireText(value: string | undefined, name: string): string {
    const text = (value ?? "").replace(/\s+/g, " ").trim();
    if (!text) throw new AgentError(`Missing required parameter: ${name}`, "invalid-input");
    if (text.length > LIMITS.topicChars) {
      throw new AgentError(`The ${name} is too long (at most ${LIMITS.topicChars} characters).`, "invalid-input");
    }
    return text;
  }

  /** Set while the index takes in a note created here (see indexNewNote); cleared when done or waited for. */
  let newNoteIndexing: Promise<void> | null = null;

  /**
   * Tells the index about a note created here. The CLI and the MCP server do not watch the vault folder,
   * so without this a created note stays unsearchable until the next full sync (Obsidian's own event for
   * the same file is a harmless repeat). idle() applies it now rather than after the event debounce.
   * While the index is still opening or re-indexing, the event just queues: nobody waits behind that.
   */
  function indexNewNote(path: string): void {
    const settled = deps.index.status().state === "ready";
    deps.index.handleEvent({ type: "create", path });
    if (!settled) return;
    const applied = deps.index.idle().catch(() => undefined);
    newNoteIndexing = applied;
    void applied.then(() => {
      if (newNoteIndexing === applied) newNoteIndexing = null;
    });
  }

  /**
   * Waits (bounded, once) for indexNewNote: "create a note on X" then "find notes about X" finds it, and a
   * one-shot `krypton ask` saves it with the index on close. Searches call it too, for a create still waiting.
   */
  async function untilNewNoteIndexed(): Promise<void> {
    const pending = newNoteIndexing;
    if (!pending) return;
    let cancel: () => void = () => undefined;
    const timeout = new Promise<void>((resolve) => (cancel = host.clock.setTimer(resolve, LIMITS.newNoteIndexWaitMs)));
    await Promise.race([pending, timeout]);
    cancel();
    // A busy index (a first full indexing run) must not delay every later search: wait only once.
    if (newNoteIndexing === pending) newNoteIndexing = null;
  }

  /** Saves under the first free name: x.md, x-1.md, x-2.md … An existing file is never replaced. */
  async function createUnique(folder: string, slug: string, content: string): Promise<string> {
    let path: string | null;
    try {
      path = await createUniqueNote(host.vault, folder, slug, content, LIMITS.nameAttempts);
    } catch (err) {
      throw new AgentError(errorMessage(err), "failed");
    }
    if (path === null) throw new AgentError(`Could not find a free file name for ${slug}.md (tried ${LIMITS.nameAttempts}).`, "failed");
    return path;
  }

  /**
   * One summary of any length of text: directly when it fits, else map (a summary per part) then reduce
   * (combine them, in rounds while they are too long). Past LIMITS.summaryMaxParts parts the rest is left
   * out, and the summary ends with a remark saying how much it covers.
   */
  async function summarizeLong(model: ChatModel, title: string, body: string, signal?: AbortSignal): Promise<string> {
    const ask = async (prompt: ChatMessage[]) => {
      throwIfAborted(signal);
      const out = await askModel(model, prompt, { signal, temperature: 0.2, maxTokens: ANSWER_BUDGET.summary, what: "summarize the note" });
      if (!out) throw new AgentError("The chat model returned an empty summary.", "failed");
      return out;
    };
    const max = LIMITS.summaryPartChars;
    const all = splitIntoParts(body, max);
    if (all.length <= 1) return ask(summarizeNotePrompt(title, all[0] ?? body));
    const parts = all.slice(0, LIMITS.summaryMaxParts);
    let summaries: string[] = [];
    for (let i = 0; i < parts.length; i++) summaries.push(await ask(summarizePartPrompt(title, parts[i], i + 1, parts.length)));
    // Combine in groups while the partial summaries together are still too long for one prompt.
    for (let round = 0; round < 4 && totalChars(summaries) > max; round++) {
      const groups = packGroups(summaries, max);
      if (groups.length === summaries.length) break;
      const next: string[] = [];
      for (const group of groups) next.push(group.length === 1 ? group[0] : await ask(combineSummariesPrompt(title, group)));
      summaries = next;
    }
    if (summaries.length > 1) {
      // Only when combining made no progress (a model that does not shorten): give each summary an equal share.
      if (totalChars(summaries) > max) {
        const share = Math.floor(max / summaries.length);
        summaries = summaries.map((s) => (s.length > share ? `${s.slice(0, share)}…` : s));
      }
      summaries = [await ask(combineSummariesPrompt(title, summaries))];
    }
    return parts.length === all.length ? summaries[0] : `${summaries[0]}\n\n${partialSummaryRemark(parts, all)}`;
  }

  return {
    async createNote(topic, options = {}): Promise<NoteCreated> {
      const subject = requireText(topic, "topic");
      const folder = normalizeVaultPath(options.folder ?? deps.settings().newNoteFolder, host.vault.configDir, "folder", "write");
      const model = requireModel();
      const markdown = await generateNote(model, subject, options.signal);
      throwIfAborted(options.signal);
      const title = firstHeading(markdown) ?? subject;
      const path = await createUnique(folder, slugify(subject), `${markdown}\n`);
      host.logger.info("agents: note created", { path });
      // Searchable when this returns (or after LIMITS.newNoteIndexWaitMs): the CLI closes right after.
      indexNewNote(path);
      await untilNewNoteIndexed();
      const result = { kind: "note-created" as const, agent: AGENT_NAMES.create, path, title, preview: previewOf(markdown) };
      return { ...result, text: noteCreatedText(result) };
    },

    async searchNotes(query, options = {}): Promise<SearchResults> {
      const q = requireText(query, "query");
      requireIndex();
      const limit = Math.min(LIMITS.searchMax, Math.max(1, Math.floor(options.limit ?? LIMITS.searchDefault)));
      await untilNewNoteIndexed();
      let found;
      try {
        // The same relevance floor as chat retrieval, so "find notes about X" does not list unrelated notes.
        found = await deps.index.searchNotesWithReason(q, { limit, minScore: deps.settings().similarityThreshold, signal: options.signal });
      } catch (err) {
        if (isAbortError(err) || options.signal?.aborted) throw err;
        throw new AgentError(`Search failed: ${errorMessage(err)}`, "failed");
      }
      const { hits: notes, keywordOnly } = found;
      if (!notes.length) throw noNotesMatch(q, keywordOnly);
      const hits = notes.map((n) => ({
        path: n.path,
        title: n.title,
        folder: n.folder,
        snippet: n.snippet,
        score: n.score,
        startLine: n.startLine,
      }));
      const result = { kind: "search-results" as const, agent: AGENT_NAMES.search, query: q, hits, ...(keywordOnly ? { keywordOnly } : {}) };
      return { ...result, text: searchResultsText(result) };
    },

    async summarizeNote(path, options = {}): Promise<Summary> {
      if (!path?.trim()) throw new AgentError("Missing required parameter: path", "invalid-input");
      const notePath = normalizeVaultPath(path, host.vault.configDir, "note path", "read");
      if (!/\.md$/i.test(notePath)) throw new AgentError(`Only markdown notes (.md) can be summarized: ${notePath}`, "invalid-input");
      const model = requireModel();
      let content: string;
      try {
        content = await host.vault.readNote(notePath);
      } catch (err) {
        if (err instanceof NoteNotFoundError || (err as Error | null)?.name === "NoteNotFoundError") {
          throw new AgentError(`Note not found: ${notePath}`, "not-found");
        }
        if (isNoteRefusedError(err)) throw new AgentError(err.message, "invalid-input");
        throw new AgentError(`Could not read ${notePath}: ${errorMessage(err)}`, "failed");
      }
      const { title, body } = readableNote(notePath, content);
      if (!body) throw new AgentError(`${notePath} is empty: there is nothing to summarize.`, "invalid-input");
      const summary = await summarizeLong(model, title, body, options.signal);
      const result = { kind: "summary" as const, agent: AGENT_NAMES.summarize, title, summary, sourceFiles: [notePath] };
      return { ...result, text: summaryText(result, `Summary of ${title}`) };
    },

    async summarizeText(title, text, options = {}): Promise<Summary> {
      const body = (text ?? "").trim();
      if (!body) throw new AgentError("Nothing to summarize: the selection is empty.", "invalid-input");
      const name = title?.trim() || "Selection";
      const model = requireModel();
      const summary = await summarizeLong(model, name, body, options.signal);
      const result = { kind: "summary" as const, agent: AGENT_NAMES.summarize, title: name, summary, sourceFiles: [] };
      return { ...result, text: summaryText(result, `Summary of ${name}`) };
    },

    async summarizeTopic(topic, options = {}): Promise<Summary> {
      const subject = requireText(topic, "topic");
      const model = requireModel();
      requireIndex();
      await untilNewNoteIndexed();
      let found;
      try {
        found = await deps.index.searchChunksWithReason(`notes about ${subject}`, { limit: LIMITS.topicRetrieve, signal: options.signal });
      } catch (err) {
        if (isAbortError(err) || options.signal?.aborted) throw err;
        throw new AgentError(`Search failed: ${errorMessage(err)}`, "failed");
      }
      // Retrieval ranks by similarity; keep only chunks that really name the topic (title, headings or text):
      // every word of it when some chunk does, so "machine learning" does not bring in "washing machine".
      const words = significantWords(subject);
      const { hits, keywordOnly } = found;
      const kept = mentioningTopic(hits, (h) => `${h.chunk.title}\n${h.chunk.headings.join("\n")}\n${h.chunk.text}`, words).slice(
        0,
        LIMITS.topicChunks,
      );
      if (!kept.length) throw noNotesMatch(subject, keywordOnly);
      const excerpts = kept.map((h) => ({
        title: h.chunk.title,
        path: h.chunk.path,
        text: truncateWords(h.chunk.text, LIMITS.topicChunkWords),
      }));
      throwIfAborted(options.signal);
      // The excerpts may be shortened to fit the window (the only agent prompt with cuttable parts): say so.
      let fit = null as ContextFit | null; // set in the callback: the assertion keeps TypeScript from narrowing it to null
      const summary = await askModel(reportingFits(model, (f) => (fit = mergeFits(fit, f))), summarizeTopicPrompt(subject, excerpts), {
        signal: options.signal,
        temperature: 0.2,
        maxTokens: ANSWER_BUDGET.summary,
        what: "summarize the notes",
      });
      if (!summary) throw new AgentError("The chat model returned an empty summary.", "failed");
      const sourceFiles = [...new Set(kept.map((h) => h.chunk.path))];
      const fitted = fit ? fitNotice(fit, "this summary").message : undefined;
      const result = {
        kind: "summary" as const,
        agent: AGENT_NAMES.summarize,
        title: subject,
        summary,
        sourceFiles,
        ...(fitted ? { fitted } : {}),
        ...(keywordOnly ? { keywordOnly } : {}),
      };
      return { ...result, text: summaryText(result, `What your notes say about ${subject}`) };
    },
  };
}

/** The closing line of a capped map-reduce summary: how much of the text it covers ("first 20 of 31 parts (about 65%)"). */
export function partialSummaryRemark(summarized: string[], all: string[]): string {
  const share = Math.min(99, Math.round((100 * totalLength(summarized)) / Math.max(1, totalLength(all))));
  return (
    `_This text is too long to summarize in full: the summary covers its first ${summarized.length} of ${all.length} parts ` +
    `(about ${share}% of it)._`
  );
}

function totalLength(texts: string[]): number {
  return texts.reduce((n, t) => n + t.length, 0);
}

function totalChars(texts: string[]): number {
  return texts.reduce((n, t) => n + t.length + 12, 0);
}

/** Consecutive groups whose combined length fits in max (a text longer than max forms its own group). */
function packGroups(texts: string[], max: number): string[][] {
  const groups: string[][] = [];
  let current: string[] = [];
  for (const text of texts) {
    if (current.length && totalChars([...current, text]) > max) {
      groups.push(current);
      current = [];
    }
    current.push(text);
  }
  if (current.length) groups.push(current);
  return groups;
}

/**
 * The note's markdown from the model: an answer that is not a note (a refusal, a chat reply) gets one
 * repair request, then fails, so nothing is saved (generated-note.ts says what counts as a note).
 */
async function generateNote(model: ChatModel, subject: string, signal: AbortSignal | undefined): Promise<string> {
  const prompt = createNotePrompt(subject);
  const ask = (messages: ChatMessage[]) => askModel(model, messages, { signal, maxTokens: ANSWER_BUDGET.note, what: "generate the note" });
  const first = await ask(prompt);
  if (!first) throw new AgentError("The chat model returned an empty note, so nothing was saved.", "failed");
  let checked = checkGeneratedNote(first);
  if (checked.ok) return checked.markdown;
  const retry = await ask([...prompt, { role: "assistant", content: first }, { role: "user", content: generatedNoteRepair(checked.problem) }]);
  checked = checkGeneratedNote(retry);
  if (checked.ok) return checked.markdown;
  throw new AgentError(`No note was saved: ${checked.problem}.`, "failed");
}
