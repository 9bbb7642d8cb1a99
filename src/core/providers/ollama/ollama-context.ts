import type { ChatRequest, ModelCapabilities } from "../../ports/chat-model";

/** Ollama's own default window on current versions; requests that fit get exactly this (no model reload). */
export const OLLAMA_MIN_CONTEXT = 4096;
export const DEFAULT_OLLAMA_MAX_CONTEXT = 16_384;
/** Room for the answer when the request sets no maxTokens. */
const REPLY_BUDGET = 1024;
/** A rough, language-neutral estimate; over-estimating costs a little memory, under-estimating cuts the prompt. */
const CHARS_PER_TOKEN = 3.5;
/** Role markers and template text per message. */
const TOKENS_PER_MESSAGE = 8;

/** Tokens the request will need: every message, the tool list, the output schema and the reply. */
export function estimateTokens(request: ChatRequest): number {
  let chars = 0;
  for (const m of request.messages) {
    chars += m.content.length;
    if (m.toolCalls?.length) chars += JSON.stringify(m.toolCalls).length;
  }
  if (request.tools?.length && request.toolChoice !== "none") chars += JSON.stringify(request.tools).length;
  if (request.jsonSchema) chars += JSON.stringify(request.jsonSchema).length;
  return Math.ceil(chars / CHARS_PER_TOKEN) + request.messages.length * TOKENS_PER_MESSAGE + (request.maxTokens ?? REPLY_BUDGET);
}

/**
 * `options.num_ctx` for a request. Without it Ollama uses its default window (4k, 2k on older versions)
 * and silently cuts a longer prompt FROM THE FRONT: the system prompt and the tool list go first. Sizes
 * are powers of two from 4096 so consecutive requests rarely change the window (a change reloads the
 * model); bounded by the model's context length when known and by the user's `ollamaMaxContext`.
 */
export function numCtxFor(request: ChatRequest, maxContext: number, contextLength?: number): number {
  const needed = estimateTokens(request);
  let size = OLLAMA_MIN_CONTEXT;
  while (size < needed) size *= 2;
  const caps = [Math.max(512, Math.floor(maxContext)), contextLength && contextLength > 0 ? contextLength : Infinity];
  return Math.min(size, ...caps);
}

/** True when the window must be checked against the model's maximum (it exceeds the floor every model has). */
export function needsModelLimit(request: ChatRequest): boolean {
  return estimateTokens(request) > OLLAMA_MIN_CONTEXT;
}

/** What `/api/show` says about a model (`capabilities`, `model_info["<arch>.context_length"]`, the template). */
export function capabilitiesFromShow(show: unknown): ModelCapabilities {
  const s = (show ?? {}) as { capabilities?: unknown; model_info?: Record<string, unknown>; template?: unknown };
  const caps = Array.isArray(s.capabilities) ? s.capabilities.filter((c): c is string => typeof c === "string") : null;
  // Ollama before 0.6.4 has no `capabilities`: a template that renders .Tools means tool support.
  const template = typeof s.template === "string" ? s.template : "";
  const tools = caps ? caps.includes("tools") : /\.Tools\b/.test(template);
  const thinking = caps ? caps.includes("thinking") : undefined;
  const info = s.model_info && typeof s.model_info === "object" ? s.model_info : {};
  const arch = typeof info["general.architecture"] === "string" ? info["general.architecture"] : "";
  let contextLength = arch ? info[`${arch}.context_length`] : undefined;
  if (typeof contextLength !== "number") contextLength = Object.entries(info).find(([k, v]) => k.endsWith(".context_length") && typeof v === "number")?.[1];
  return {
    tools,
    ...(thinking !== undefined ? { thinking } : {}),
    ...(typeof contextLength === "number" && contextLength > 0 ? { contextLength } : {}),
  };
}
