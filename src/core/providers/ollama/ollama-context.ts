import type { ModelCapabilities } from "../../ports/chat-model";
import { MIN_MODEL_WINDOW, type ContextWindow } from "../context-fit";
import { formatCount } from "../../util/text";

/** Ollama's own default window on current versions; requests that fit get exactly this (no model reload). */
export const OLLAMA_MIN_CONTEXT = MIN_MODEL_WINDOW;
export const DEFAULT_OLLAMA_MAX_CONTEXT = 16_384;

/**
 * `options.num_ctx` for a request. Without it Ollama uses its default window (4k, 2k on older versions)
 * and silently cuts a longer prompt FROM THE FRONT: the system prompt and the tool list go first. Sizes
 * are powers of two from 4096 so consecutive requests rarely change the window (a change reloads the
 * model); bounded by the model's context length when known and by the user's `ollamaMaxContext`. The
 * request has been fitted to that bound first (ollamaWindow, fitRequest), so the window holds all of it.
 * `needed`: the request's estimateTokens (fitRequest's `tokens`).
 */
export function numCtxFor(needed: number, maxContext: number, contextLength?: number): number {
  let size = OLLAMA_MIN_CONTEXT;
  while (size < needed) size *= 2;
  return Math.min(size, windowLimit(maxContext, contextLength));
}

function windowLimit(maxContext: number, contextLength?: number): number {
  return Math.min(Math.max(512, Math.floor(maxContext)), contextLength && contextLength > 0 ? contextLength : Infinity);
}

/** The window an Ollama request must fit: the setting or the model's own maximum, whichever is smaller, and how to raise it. */
export function ollamaWindow(model: string, maxContext: number, contextLength?: number): ContextWindow {
  const tokens = windowLimit(maxContext, contextLength);
  // The model's own maximum is the bound when it is no larger than the setting.
  const byModel = tokens === contextLength;
  return {
    tokens,
    model: `ollama:${model}`,
    remedy: byModel
      ? `use a model with a longer context (${formatCount(tokens)} tokens is this model's own maximum), or shorten the input`
      : "raise Ollama context limit (Settings → Models; KRYPTON_OLLAMA_MAX_CONTEXT for the command line) if the machine running Ollama has the memory, or shorten the input",
  };
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
