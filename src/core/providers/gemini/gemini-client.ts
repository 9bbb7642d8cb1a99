import { GoogleGenAI } from "@google/genai/web";
import type { FetchLike } from "../../ports/http";

export const DEFAULT_GEMINI_BASE_URL = "https://generativelanguage.googleapis.com";

/**
 * A GoogleGenAI client bound to one guarded request: the SDK's `httpOptions.fetch` is the host's fetch
 * (wrapped with our timeout and Stop), `baseUrl` comes from settings (tests point it at a local server).
 * The SDK's own retries and timeouts stay off: ours apply to every provider alike.
 */
export function geminiClient(apiKey: string, baseUrl: string, fetch: FetchLike): GoogleGenAI {
  return new GoogleGenAI({
    apiKey,
    httpOptions: { baseUrl: normalizeGeminiBaseUrl(baseUrl), fetch },
  });
}

export function normalizeGeminiBaseUrl(url: string): string {
  return (url.trim() || DEFAULT_GEMINI_BASE_URL).replace(/\/+$/, "");
}
