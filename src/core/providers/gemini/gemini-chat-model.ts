import type { GenerateContentResponse, Part } from "@google/genai/web";
import type { ChatEvent, ChatModel, ChatRequest, ModelCapabilities } from "../../ports/chat-model";
import { isAbortError } from "../../util/errors";
import { isNoAnswer } from "../provider-error";
import { guardedCall, guardedStream, type GuardedConnection } from "../guarded-stream";
import { fitRequest, needsModelWindow, promptTokens, type FittedRequest } from "../context-fit";
import { GEMINI_CAPPED_OUTPUT } from "../answer-room";
import { NO_RETRY } from "../retry";
import { collectTurnText, newToolCallId, textDeltas, withCapOnCut } from "../turn-views";
import { geminiClient, normalizeGeminiBaseUrl } from "./gemini-client";
import { geminiError } from "./gemini-errors";
import { finishReasonOf, thinkingConfigOf, toGeminiContents, toolConfigOf, usageOf, type GeminiProviderData } from "./gemini-wire";

export { toGeminiContents };

export interface GeminiOptions extends GuardedConnection {
  apiKey: string;
  baseUrl: string;
}

/**
 * What the models endpoint said, per base URL and model: the context length for the life of the process,
 * or, when asking failed, until when not to ask again (a proxy without the endpoint, or a slow one, would
 * otherwise cost up to the timeout before every chat request).
 */
const modelInfo = new Map<string, { contextLength: number | undefined } | { failedUntil: number }>();

/** How long a failed models endpoint is left alone. */
export const GEMINI_MODEL_INFO_RETRY_MS = 10 * 60_000;

/** Chat through Gemini's streamGenerateContent (SSE) with `@google/genai`'s browser build. */
export class GeminiChatModel implements ChatModel {
  readonly id: string;

  constructor(private readonly options: GeminiOptions & { model: string }) {
    this.id = `gemini:${options.model}`;
  }

  async *turn(asked: ChatRequest): AsyncGenerator<ChatEvent> {
    const { model, apiKey } = this.options;
    const baseUrl = normalizeGeminiBaseUrl(this.options.baseUrl);
    const { request, fit } = await this.fitted(asked);
    if (fit) yield { type: "fitted", fit, messages: request.messages };
    const { system, contents } = toGeminiContents(request.messages);
    // After fitting: the input limit does not count the answer, so the room for reasoning costs nothing there.
    const cap = request.maxTokens !== undefined ? Math.max(request.maxTokens, GEMINI_CAPPED_OUTPUT) : undefined;
    const events = guardedStream<ChatEvent>(this.options, {
      signal: request.signal,
      open: async (guard) => {
        const chunks = await geminiClient(apiKey, baseUrl, guard.fetch).models.generateContentStream({
          model,
          contents,
          config: {
            abortSignal: guard.signal,
            ...(system ? { systemInstruction: system } : {}),
            ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
            ...(request.topP !== undefined ? { topP: request.topP } : {}),
            ...(cap !== undefined ? { maxOutputTokens: cap } : {}),
            ...(request.json || request.jsonSchema ? { responseMimeType: "application/json" } : {}),
            ...(request.jsonSchema ? { responseJsonSchema: request.jsonSchema } : {}),
            ...toolConfigOf(request),
            ...thinkingConfigOf(model, request),
          },
        });
        return eventsOf(chunks);
      },
      mapError: (err, guard) => geminiError(err, guard, baseUrl, apiKey, model),
    });
    yield* withCapOnCut(events, cap);
  }

  /** The request fitted to the model's input limit (from the models endpoint), when the limit is known. */
  private async fitted(request: ChatRequest): Promise<FittedRequest> {
    const prompt = promptTokens(request);
    if (!needsModelWindow(request, prompt)) return { request, fit: null };
    const limit = (await this.capabilities(request.signal)).contextLength;
    if (!limit) return { request, fit: null }; // not known: Gemini itself refuses a prompt over its limit, with an error
    return fitRequest(request, { tokens: limit, model: this.id, remedy: "use a model with a larger input limit, or shorten the input" }, prompt);
  }

  stream(request: ChatRequest): AsyncIterable<string> {
    return textDeltas(this.turn(request), this.id);
  }

  complete(request: ChatRequest): Promise<string> {
    return collectTurnText(this.turn(request), this.id);
  }

  /**
   * Every Gemini chat model calls functions; the context length comes from the models endpoint (once; after
   * a failure, again after GEMINI_MODEL_INFO_RETRY_MS). A stop by the user is not a failure of the endpoint.
   */
  async capabilities(signal?: AbortSignal): Promise<ModelCapabilities> {
    const { model, apiKey, clock } = this.options;
    const baseUrl = normalizeGeminiBaseUrl(this.options.baseUrl);
    const key = `${baseUrl}|${model}`;
    let known = modelInfo.get(key);
    if (!known || ("failedUntil" in known && clock.now() >= known.failedUntil)) {
      try {
        const info = await guardedCall({ ...this.options, retry: NO_RETRY }, {
          signal,
          call: (guard) => geminiClient(apiKey, baseUrl, guard.fetch).models.get({ model, config: { abortSignal: guard.signal } }),
          mapError: (err, guard) => geminiError(err, guard, baseUrl, apiKey, model),
        });
        known = { contextLength: typeof info.inputTokenLimit === "number" && info.inputTokenLimit > 0 ? info.inputTokenLimit : undefined };
      } catch (err) {
        // Nor is a server that never answered: the chat request would only wait for it again (isNoAnswer).
        if (isAbortError(err) || signal?.aborted || isNoAnswer(err)) throw err;
        known = { failedUntil: clock.now() + GEMINI_MODEL_INFO_RETRY_MS }; // not known; the chat request itself reports what is wrong
      }
      modelInfo.set(key, known);
    }
    const contextLength = "contextLength" in known ? known.contextLength : undefined;
    return { tools: true, ...(contextLength ? { contextLength } : {}) };
  }
}

/**
 * One streamed answer as turn events: thought parts are thinking, text parts text, functionCall parts
 * tool calls (with Gemini's id, else one made up), then the end event with the finish reason, usage and
 * every part of the answer verbatim (a thoughtSignature may come in a last part without text); a stop for
 * safety, recitation or a blocked prompt says which in the end event's detail.
 */
async function* eventsOf(chunks: AsyncIterable<GenerateContentResponse>): AsyncGenerator<ChatEvent | null> {
  const parts: Part[] = [];
  let calls = 0;
  let finishReason: string | undefined;
  let blockReason: string | undefined;
  let last: GenerateContentResponse | undefined;
  for await (const chunk of chunks) {
    last = chunk;
    if (chunk.promptFeedback?.blockReason) blockReason = chunk.promptFeedback.blockReason;
    const candidate = chunk.candidates?.[0];
    if (candidate?.finishReason) finishReason = candidate.finishReason;
    let produced = false;
    for (const part of candidate?.content?.parts ?? []) {
      parts.push(part);
      if (part.functionCall) {
        calls += 1;
        produced = true;
        yield { type: "tool-call", call: { id: part.functionCall.id || newToolCallId(), name: part.functionCall.name ?? "", arguments: part.functionCall.args ?? {} } };
      } else if (part.text) {
        produced = true;
        yield part.thought ? { type: "thinking", text: part.text } : { type: "text", text: part.text };
      }
    }
    if (!produced) yield null;
  }
  const usage = usageOf(last);
  const providerData: GeminiProviderData = { provider: "gemini", parts };
  // A blocked prompt comes back without candidates: an answer that did not happen, not an empty one.
  const reason = blockReason && !finishReason ? "BLOCKED" : finishReason;
  const detail = blockReason && !finishReason ? `prompt blocked: ${blockReason}` : finishReason;
  const finish = finishReasonOf(reason, calls);
  yield { type: "end", finishReason: finish, ...(usage ? { usage } : {}), providerData, ...(finish === "other" && detail ? { detail } : {}) };
}

/** Model ids ("gemini-2.5-flash") that can chat or embed, for the settings dropdowns. */
export function listGeminiModels(options: GeminiOptions, purpose: "chat" | "embedding", signal?: AbortSignal): Promise<string[]> {
  const baseUrl = normalizeGeminiBaseUrl(options.baseUrl);
  return guardedCall(options, {
    signal,
    call: async (guard) => {
      const names: string[] = [];
      const pager = await geminiClient(options.apiKey, baseUrl, guard.fetch).models.list({ config: { abortSignal: guard.signal } });
      for await (const m of pager) {
        const methods = m.supportedActions ?? [];
        const wanted = purpose === "chat" ? "generateContent" : "embedContent";
        if (methods.length === 0 || methods.includes(wanted)) names.push((m.name ?? "").replace(/^models\//, ""));
      }
      return names.filter(Boolean);
    },
    mapError: (err, guard) => geminiError(err, guard, baseUrl, options.apiKey),
  });
}
