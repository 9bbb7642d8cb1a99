import { Ollama } from "ollama/browser";
import type { ChatRequest as OllamaChatRequest } from "ollama/browser";
import type { ChatEvent, ChatModel, ChatRequest, ModelCapabilities } from "../../ports/chat-model";
import { ThinkSplitter } from "../../util/think-blocks";
import { guardedCall, guardedStream, type GuardedConnection } from "../guarded-stream";
import { isAbortError } from "../../util/errors";
import { NO_RETRY } from "../retry";
import { isNoAnswer } from "../provider-error";
import { collectTurnText, textDeltas, withCapOnCut } from "../turn-views";
import { estimateTokens, fitRequest, needsModelWindow, promptTokens, type ContextWindow } from "../context-fit";
import { OLLAMA_REASONING_ROOM, withReasoningRoom } from "../answer-room";
import { capabilitiesFromShow, DEFAULT_OLLAMA_MAX_CONTEXT, numCtxFor, ollamaWindow } from "./ollama-context";
import { checkedNdjsonFetch } from "./ndjson-check";
import { ollamaError, ollamaFetch } from "./ollama-errors";
import { applyToolChoice, finishReasonOf, ToolCallCollector, usageOf, type OllamaWireChunk } from "./ollama-wire";

export interface OllamaChatModelOptions extends GuardedConnection {
  /** "http://localhost:11434" */
  baseUrl: string;
  model: string;
  /** Upper bound for `options.num_ctx` (settings.ollamaMaxContext). */
  maxContext?: number;
}

export function normalizeBaseUrl(url: string): string {
  return url.trim().replace(/\/+$/, "");
}

/**
 * What each model can do, per Ollama server and model, for the life of the process: `/api/show` is asked
 * once, a model that answered "does not support tools" is remembered as such, and one whose answer
 * reasoned (a leading `<think>` block, `message.thinking`) as thinking, whatever `/api/show` said: Ollama
 * before 0.9 lists no "thinking", and deepseek-r1 or qwq pulls there still think in their content.
 */
interface CapabilityEntry {
  show?: ModelCapabilities;
  noTools?: boolean;
  thinks?: boolean;
}
const capabilityCache = new Map<string, CapabilityEntry>();

function remember(key: string, entry: CapabilityEntry): void {
  capabilityCache.set(key, { ...capabilityCache.get(key), ...entry });
}

/** Chat through Ollama's /api/chat, streamed, via `ollama/browser` with the host's fetch. */
export class OllamaChatModel implements ChatModel {
  readonly id: string;
  private readonly baseUrl: string;
  private readonly cacheKey: string;

  constructor(private readonly options: OllamaChatModelOptions) {
    this.id = `ollama:${options.model}`;
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.cacheKey = `${this.baseUrl}|${options.model}`;
  }

  async *turn(asked: ChatRequest): AsyncGenerator<ChatEvent> {
    const maxContext = this.options.maxContext ?? DEFAULT_OLLAMA_MAX_CONTEXT;
    // Measured once and passed along: every attempt below sends these messages (only a cut changes them).
    const prompt = promptTokens(asked);
    const caps = await this.capabilitiesFor(asked, prompt);
    const contextLength = caps?.contextLength;
    const window = ollamaWindow(this.options.model, maxContext, contextLength);
    // The room to think takes only what the window has left: it never fails or cuts a request that fits without it.
    const roomy = withReasoningRoom(asked, Math.min(OLLAMA_REASONING_ROOM, window.tokens - estimateTokens(asked, prompt)));
    // The cap a large enough window would allow: a cut below it can be given more room.
    const fullRoom = withReasoningRoom(asked, OLLAMA_REASONING_ROOM).maxTokens;
    if (caps?.thinking || capabilityCache.get(this.cacheKey)?.thinks) {
      // Kept with thinking switched off (noThinking): the num_ctx of the request it retries, so no model reload.
      yield* this.send(roomy, prompt, window, maxContext, contextLength, fullRoom);
      return;
    }
    // Not known to reason. If it does, it learns so here; a capped answer cut while still thinking (no text
    // yet) is asked again once with the room it lacked, so that request is not lost too. Its thinking is
    // held until the answer begins, so a caller sees one attempt, never both.
    const retry = roomy !== asked;
    const held: ChatEvent[] = [];
    let answering = !retry;
    for await (const event of this.send(asked, prompt, window, maxContext, contextLength, asked.maxTokens)) {
      if (event.type === "thinking" && !capabilityCache.get(this.cacheKey)?.thinks) remember(this.cacheKey, { thinks: true });
      if (!answering && event.type === "thinking") {
        held.push(event);
        continue;
      }
      if (!answering && event.type === "end" && event.finishReason === "length" && held.length > 0) {
        yield* this.send(roomy, prompt, window, maxContext, contextLength, fullRoom);
        return;
      }
      if (!answering && event.type !== "fitted") {
        answering = true;
        yield* held;
      }
      yield event;
    }
  }

  /**
   * One request as sent: fitted to the window, with its num_ctx, streamed as turn events; `prompt` is its
   * promptTokens, `wanted` its cap in a window with room to spare.
   */
  private async *send(capped: ChatRequest, prompt: number, window: ContextWindow, maxContext: number, contextLength: number | undefined, wanted: number | undefined): AsyncGenerator<ChatEvent> {
    // Fitted before num_ctx is chosen: a prompt over the window would lose its start (system prompt, tools).
    const { request, fit, tokens } = fitRequest(capped, window, prompt);
    if (fit) yield { type: "fitted", fit, messages: request.messages };
    const numCtx = numCtxFor(tokens, maxContext, contextLength);
    const events = guardedStream<ChatEvent>(this.options, {
      signal: request.signal,
      open: async (guard) => {
        const client = new Ollama({ host: this.baseUrl, fetch: checkedNdjsonFetch(ollamaFetch(guard.fetch, this.baseUrl)) });
        const parts = await client.chat({ ...this.body(request, numCtx), stream: true });
        return eventsOf(parts as AsyncIterable<OllamaWireChunk>);
      },
      mapError: (err, guard) => {
        const mapped = ollamaError(err, guard, this.baseUrl, this.options.model);
        if (mapped.kind === "tools-unsupported") remember(this.cacheKey, { noTools: true });
        return mapped;
      },
    });
    const lowered = request.maxTokens !== undefined && wanted !== undefined && request.maxTokens < wanted;
    yield* withCapOnCut(events, request.maxTokens, lowered ? window.remedy : undefined);
  }

  stream(request: ChatRequest): AsyncIterable<string> {
    return textDeltas(this.turn(request), this.id);
  }

  complete(request: ChatRequest): Promise<string> {
    return collectTurnText(this.turn(request), this.id);
  }

  /** From POST /api/show, cached; failures (older Ollama, model missing, unreachable) are thrown as ProviderError. */
  async capabilities(signal?: AbortSignal): Promise<ModelCapabilities> {
    const known = () => {
      const entry = capabilityCache.get(this.cacheKey);
      // What real requests showed (tools refused, an answer that reasoned) wins over what /api/show says.
      return entry?.show ? { ...entry.show, ...(entry.noTools ? { tools: false } : {}), ...(entry.thinks ? { thinking: true } : {}) } : null;
    };
    const cached = known();
    if (cached) return cached;
    const { model } = this.options;
    const show = await guardedCall(this.options, {
      signal,
      call: (guard) => new Ollama({ host: this.baseUrl, fetch: ollamaFetch(guard.fetch, this.baseUrl) }).show({ model }),
      mapError: (err, guard) => ollamaError(err, guard, this.baseUrl, model),
    });
    remember(this.cacheKey, { show: capabilitiesFromShow(show) });
    return known() as ModelCapabilities;
  }

  /**
   * What the model can do, asked only when it matters: the request needs more than the window every model
   * has (its maximum bounds num_ctx), or its answer is capped (a reasoning model needs room to think).
   */
  private async capabilitiesFor(request: ChatRequest, prompt: number): Promise<ModelCapabilities | undefined> {
    if (request.maxTokens === undefined && !needsModelWindow(request, prompt)) return undefined;
    try {
      return await this.capabilities(request.signal);
    } catch (err) {
      // A server that did not answer will not answer the chat request either: no second wait.
      if (isAbortError(err) || isNoAnswer(err)) throw err;
      return undefined; // the chat request itself reports what is wrong
    }
  }

  private body(request: ChatRequest, numCtx: number): OllamaChatRequest {
    const { tools, messages } = applyToolChoice(request);
    const options: Record<string, number> = { num_ctx: numCtx };
    if (request.temperature !== undefined) options.temperature = request.temperature;
    if (request.topP !== undefined) options.top_p = request.topP;
    if (request.maxTokens !== undefined) options.num_predict = request.maxTokens;
    // Only to a model /api/show lists as thinking: Ollama 0.9 to 0.12.4 answer any `think` for another
    // model (one seen thinking in its content too) with 400 "does not support thinking".
    const thinkOff = request.noThinking === true && capabilityCache.get(this.cacheKey)?.show?.thinking === true;
    return {
      model: this.options.model,
      messages: messages as OllamaChatRequest["messages"],
      ...(thinkOff ? { think: false } : {}),
      ...(tools ? { tools: tools } : {}),
      ...(request.jsonSchema ? { format: request.jsonSchema } : request.json ? { format: "json" } : {}),
      options,
    };
  }
}

/**
 * One streamed answer as turn events: `message.thinking` and a leading `<think>` block in the content are
 * thinking, the rest of the content is text, tool calls are merged and come out at the end, then the end
 * event with done_reason and token counts. null marks a chunk without content (progress for the timeout).
 */
async function* eventsOf(parts: AsyncIterable<OllamaWireChunk>): AsyncGenerator<ChatEvent | null> {
  const splitter = new ThinkSplitter();
  const calls = new ToolCallCollector();
  let last: OllamaWireChunk = {};
  for await (const part of parts) {
    let produced = false;
    if (part.message?.thinking) {
      produced = true;
      yield { type: "thinking", text: part.message.thinking };
    }
    if (part.message?.content) {
      const split = splitter.push(part.message.content);
      if (split.thinking) {
        produced = true;
        yield { type: "thinking", text: split.thinking };
      }
      if (split.text) {
        produced = true;
        yield { type: "text", text: split.text };
      }
    }
    calls.add(part.message?.tool_calls);
    if (part.done) last = part;
    if (!produced) yield null;
  }
  const rest = splitter.end();
  if (rest.thinking) yield { type: "thinking", text: rest.thinking };
  if (rest.text) yield { type: "text", text: rest.text };
  const toolCalls = calls.done();
  for (const call of toolCalls) yield { type: "tool-call", call };
  const usage = usageOf(last);
  const finishReason = finishReasonOf(last.done_reason, toolCalls.length);
  yield { type: "end", finishReason, ...(usage ? { usage } : {}), ...(finishReason === "other" && last.done_reason ? { detail: last.done_reason } : {}) };
}

/** Installed model names from /api/tags ("llama3.1:8b", "nomic-embed-text:latest"). */
export function listOllamaModels(options: Omit<OllamaChatModelOptions, "model">, signal?: AbortSignal): Promise<string[]> {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  return guardedCall(options, {
    signal,
    call: async (guard) => {
      const client = new Ollama({ host: baseUrl, fetch: ollamaFetch(guard.fetch, baseUrl) });
      const tags = await client.list();
      return tags.models.map((m) => m.name);
    },
    mapError: (err, guard) => ollamaError(err, guard, baseUrl),
  });
}

/** The running Ollama's version string (for "Test connection"). */
export function ollamaVersion(options: Omit<OllamaChatModelOptions, "model">, signal?: AbortSignal): Promise<string> {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  return guardedCall({ ...options, retry: NO_RETRY }, {
    signal,
    call: async (guard) => (await new Ollama({ host: baseUrl, fetch: ollamaFetch(guard.fetch, baseUrl) }).version()).version,
    mapError: (err, guard) => ollamaError(err, guard, baseUrl),
  });
}

/** True when `wanted` is among the installed names ("llama3.1" means "llama3.1:latest", as in Ollama). */
export function ollamaHasModel(installed: string[], wanted: string): boolean {
  const norm = (n: string) => (n.includes(":") ? n : `${n}:latest`);
  return installed.some((m) => norm(m) === norm(wanted));
}
