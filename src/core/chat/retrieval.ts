/**
 * Retrieval for one chat turn, in one of four modes:
 *   none   — nothing (conversation history only)
 *   rag    — the vault index (SearchApi.searchChunksWithReason)
 *   web    — Tavily
 *   hybrid — rag and web in parallel, both kept (separate prompt sections)
 * Failures never fail the answer: they become notices and the answer goes on without that part.
 * The knobs that cost LLM calls (query rewriting, multi-query, rerank) are off by default.
 */
import type { IndexStatus } from "../indexing/index-status";
import type { ChatMessage, ChatModel } from "../ports/chat-model";
import type { Logger } from "../ports/logger";
import { z } from "zod";
import { askJson } from "../model/ask-json";
import { ANSWER_BUDGET } from "../model/answer-budget";
import { askModel } from "../model/ask-model";
import { ProviderError } from "../providers/provider-error";
import type { ChunkHit, SearchApi } from "../search/search-types";
import { unsearchableQueryText } from "../search/unsearchable-query";
import type { KryptonSettings, RetrievalMode } from "../settings";
import type { WebSearch, WebSnippet } from "../web/web-search";
import { AbortedError, errorMessage, isAbortError, throwIfAborted } from "../util/errors";
import { countOf, formatCount } from "../util/text";

export interface Notice {
  code: string;
  message: string;
}

export interface RetrievalDeps {
  /** The vault index; `status()` (when present) tells whether it is ready. */
  index: Pick<SearchApi, "searchChunksWithReason"> & { status?(): IndexStatus };
  webSearch: WebSearch | null;
  /** Used for query rewriting, multi-query and chat-model rerank. */
  chatModel: ChatModel | null;
  /** A dedicated reranker (settings.rerankerModel), for rerank "reranker-model". */
  rerankModel: ChatModel | null;
  settings: KryptonSettings;
  logger: Logger;
  /** Where the fix for "not set up" lives: settings in Obsidian, an environment variable in the CLI. */
  hostKind?: "obsidian" | "cli";
}

function webNotSetUp(deps: RetrievalDeps): Notice {
  const how = deps.hostKind === "cli" ? "set TAVILY_API_KEY" : "add a Tavily API key in settings";
  return { code: "web-unavailable", message: `Web search is not set up (${how}), so this answer does not use the web.` };
}

export interface RetrievalResult {
  notes: ChunkHit[];
  web: WebSnippet[];
  notices: Notice[];
  /** The queries actually searched (after rewriting / multi-query). */
  queries: string[];
}

export function usesNotes(mode: RetrievalMode): boolean {
  return mode === "rag" || mode === "hybrid";
}

export function usesWeb(mode: RetrievalMode): boolean {
  return mode === "web" || mode === "hybrid";
}

function plain(err: unknown): string {
  return errorMessage(err).replace(/\.$/, "");
}

export async function retrieve(
  question: string,
  history: ChatMessage[],
  mode: RetrievalMode,
  deps: RetrievalDeps,
  signal?: AbortSignal,
): Promise<RetrievalResult> {
  const result: RetrievalResult = { notes: [], web: [], notices: [], queries: [] };
  if (mode === "none") return result;
  throwIfAborted(signal);

  const { settings } = deps;
  let queries = [question];
  if (usesNotes(mode) && settings.multiQuery && deps.chatModel) {
    queries = await expandQueries(question, history, deps, signal);
  } else if (settings.queryRewrite && deps.chatModel) {
    queries = [await rewriteQuery(question, history, deps, signal)];
  }
  result.queries = queries;

  // In parallel; notices are kept per part so their order does not depend on which finished first.
  const noteNotices: Notice[] = [];
  const webNotices: Notice[] = [];
  const [notes, web] = await Promise.all([
    usesNotes(mode) ? searchNotes(queries, question, deps, noteNotices, signal) : Promise.resolve([]),
    usesWeb(mode) ? searchWeb(queries[0], deps, webNotices, signal) : Promise.resolve([]),
  ]);
  throwIfAborted(signal);
  result.notes = notes;
  result.web = web;
  result.notices.push(...noteNotices, ...webNotices);
  return result;
}

async function searchNotes(queries: string[], question: string, deps: RetrievalDeps, notices: Notice[], signal?: AbortSignal): Promise<ChunkHit[]> {
  const { settings, index } = deps;
  const status = currentStatus(index);
  if (status && status.chunks === 0 && status.state !== "ready") {
    const why = status.state === "error" ? "the index failed to load" : "they are not indexed yet";
    notices.push({ code: "rag-unavailable", message: `Your notes could not be searched (${why}), so this answer does not use them.` });
    return [];
  }
  try {
    const perQuery = await Promise.all(
      queries.map((q) => index.searchChunksWithReason(q, { limit: settings.maxK, minScore: settings.similarityThreshold, signal })),
    );
    let hits = mergeHits(perQuery.map((r) => r.hits)).slice(0, settings.maxK);
    if (status?.state === "indexing") {
      const progress = status.progress ? ` (${formatCount(status.progress.done)} of ${countOf(status.progress.total, "note")})` : "";
      notices.push({ code: "rag-partial", message: `Indexing is still running${progress}: some notes may be missing from this answer.` });
    }
    // Said whatever was found: an answer from no notes is one the user most needs to know this about.
    const keywordOnly = perQuery.find((r) => r.keywordOnly)?.keywordOnly;
    if (keywordOnly) notices.push({ code: "rag-keyword-only", message: keywordOnly });
    // Nothing found because search ignores every word searched ("the and of"): why, where the search dialog says it.
    const unsearchable = hits.length === 0 && queries.every((q) => unsearchableQueryText(q)) ? unsearchableQueryText(queries[0]) : null;
    if (unsearchable) notices.push({ code: "rag-unsearchable", message: unsearchable });
    if (settings.rerank !== "off" && hits.length > 1) hits = await rerank(question, hits, deps, signal);
    return hits.slice(0, settings.displayK);
  } catch (err) {
    if (isAbortError(err) || signal?.aborted) throw new AbortedError();
    deps.logger.warn("Note search failed; answering without notes", { error: plain(err) });
    notices.push({ code: "rag-unavailable", message: `Your notes could not be searched (${plain(err)}), so this answer does not use them.` });
    return [];
  }
}

function currentStatus(index: RetrievalDeps["index"]): IndexStatus | undefined {
  try {
    return index.status?.();
  } catch {
    return undefined;
  }
}

/** One list from several queries' results: each chunk once, at its best score, best first. */
export function mergeHits(lists: ChunkHit[][]): ChunkHit[] {
  const best = new Map<string, ChunkHit>();
  for (const list of lists) {
    for (const hit of list) {
      const seen = best.get(hit.chunk.id);
      if (!seen || hit.score > seen.score) best.set(hit.chunk.id, hit);
    }
  }
  return [...best.values()].sort((a, b) => b.score - a.score);
}

async function searchWeb(query: string, deps: RetrievalDeps, notices: Notice[], signal?: AbortSignal): Promise<WebSnippet[]> {
  if (!deps.webSearch) {
    notices.push(webNotSetUp(deps));
    return [];
  }
  try {
    return await deps.webSearch.search(query, signal);
  } catch (err) {
    if (isAbortError(err) || signal?.aborted) throw new AbortedError();
    const notSetUp = err instanceof ProviderError && err.kind === "not-configured";
    deps.logger.warn("Web search failed; answering without web results", { error: plain(err) });
    notices.push(notSetUp ? webNotSetUp(deps) : { code: "web-unavailable", message: `Web search failed (${plain(err)}), so this answer does not use the web.` });
    return [];
  }
}

function recentTurns(history: ChatMessage[]): string {
  return history
    .filter((m) => m.role !== "system")
    .slice(-6)
    .map((m) => `${m.role === "user" ? "User" : "Assistant"}: ${m.content.slice(0, 500)}`)
    .join("\n");
}

/** A standalone search query for the question ("and the second one?" → "second step of the Ollama setup"). */
async function rewriteQuery(question: string, history: ChatMessage[], deps: RetrievalDeps, signal?: AbortSignal): Promise<string> {
  try {
    const answer = await askModel(
      deps.chatModel!,
      [
        {
          role: "system",
          content:
            "Rewrite the user's last question as one standalone search query for their notes, resolving references to the conversation. Answer with the query only, no quotes, no explanation.",
        },
        { role: "user", content: `${history.length ? `Conversation:\n${recentTurns(history)}\n\n` : ""}Question: ${question}` },
      ],
      { signal, temperature: 0, maxTokens: ANSWER_BUDGET.label, what: "rewrite the query" },
    );
    const query = answer.trim().split("\n")[0].replace(/^["'`]|["'`]$/g, "").trim();
    return query && query.length <= 300 ? query : question;
  } catch (err) {
    if (isAbortError(err) || signal?.aborted) throw new AbortedError();
    deps.logger.warn("Query rewriting failed; using the question as is", { error: plain(err) });
    return question;
  }
}

const expansionAnswer = z.object({ queries: z.array(z.string()) });

/** Several phrasings of the question, searched separately and merged; the original always comes first. */
async function expandQueries(question: string, history: ChatMessage[], deps: RetrievalDeps, signal?: AbortSignal): Promise<string[]> {
  const count = Math.max(1, deps.settings.multiQueryCount);
  try {
    const answer = await askJson(
      deps.chatModel!,
      [
        {
          role: "system",
          content: `Write ${count} different search queries that would find notes answering the user's question (synonyms, related terms, standalone wording). Answer with JSON only: {"queries": ["...", "..."]}`,
        },
        { role: "user", content: `${history.length ? `Conversation:\n${recentTurns(history)}\n\n` : ""}Question: ${question}` },
      ],
      expansionAnswer,
      { signal, temperature: 0, maxTokens: ANSWER_BUDGET.list, what: "expand the search query" },
    );
    const extra = answer.queries.map((q) => q.trim()).filter(Boolean);
    return [...new Set([question, ...extra])].slice(0, count + 1);
  } catch (err) {
    if (isAbortError(err) || signal?.aborted) throw new AbortedError();
    deps.logger.warn("Multi-query expansion failed; using the question as is", { error: plain(err) });
    return [question];
  }
}

/**
 * Reorders hits by a model's 0–10 relevance score, in one call for all passages (one call per passage
 * would cost maxK round trips on a local model). A failed or unparsable answer keeps the search order.
 */
async function rerank(question: string, hits: ChunkHit[], deps: RetrievalDeps, signal?: AbortSignal): Promise<ChunkHit[]> {
  const model = deps.settings.rerank === "reranker-model" ? deps.rerankModel : deps.chatModel;
  if (!model) return hits;
  try {
    const passages = hits.map((h, i) => `[${i + 1}] ${h.chunk.title}: ${h.chunk.text.slice(0, 600).replace(/\s+/g, " ")}`).join("\n");
    const scoresAnswer = z.object({ scores: z.array(z.number()).length(hits.length) });
    const { scores } = await askJson(
      model,
      [
        {
          role: "system",
          content: `Rate how well each passage helps answer the question, from 0 (useless) to 10 (answers it). Answer with JSON only: {"scores": [${hits.map(() => "n").join(", ")}]} with exactly ${hits.length} numbers, in passage order.`,
        },
        { role: "user", content: `Question: ${question}\n\nPassages:\n${passages}` },
      ],
      scoresAnswer,
      { signal, temperature: 0, maxTokens: ANSWER_BUDGET.list, what: "rerank the passages" },
    );
    return hits
      .map((hit, i) => ({ hit, i, score: scores[i] }))
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .map((x) => x.hit);
  } catch (err) {
    if (isAbortError(err) || signal?.aborted) throw new AbortedError();
    deps.logger.warn("Rerank failed; keeping search order", { error: plain(err) });
    return hits;
  }
}
