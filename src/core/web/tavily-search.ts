import type { Host } from "../ports/host";
import { guardedCall, type GuardedConnection } from "../providers/guarded-stream";
import { ProviderError } from "../providers/provider-error";
import { transportError, type RequestGuard } from "../providers/request-guard";
import { redact } from "../util/redact";
import { serviceWaitText, type RetryPolicy } from "../providers/retry";
import type { KryptonSettings } from "../settings";
import type { WebSearch, WebSnippet } from "./web-search";

export const DEFAULT_TAVILY_BASE_URL = "https://api.tavily.com";
/** Longest snippet text kept per result: the prompt stays small for 8B models. */
const MAX_SNIPPET_CHARS = 1500;

export interface TavilyOptions extends GuardedConnection {
  apiKey: string;
  baseUrl: string;
  maxResults: number;
}

/**
 * Tavily's REST search: one JSON POST through the host's fetch. (`@tavily/core` is avoided on purpose:
 * 5.5 MB, reads `process.env` unguarded on mobile and uses XHR in Electron.)
 */
export class TavilySearch implements WebSearch {
  readonly name = "Tavily";

  constructor(private readonly options: TavilyOptions) {}

  async search(query: string, signal?: AbortSignal): Promise<WebSnippet[]> {
    const { apiKey, clock, maxResults } = this.options;
    if (!apiKey.trim()) throw new ProviderError("not-configured", "Web search is not set up: add a Tavily API key in settings.");
    const baseUrl = (this.options.baseUrl.trim() || DEFAULT_TAVILY_BASE_URL).replace(/\/+$/, "");
    return guardedCall(this.options, {
      signal,
      call: async (guard) => {
        const response = await guard.fetch(`${baseUrl}/search`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Authorization: `Bearer ${apiKey.trim()}` },
          body: JSON.stringify({ query, max_results: maxResults, search_depth: "basic", include_answer: false }),
          signal: guard.signal,
        });
        const text = await response.text();
        if (!response.ok) throw statusError(response.status, text, apiKey, retryAfterMs(response.headers.get("retry-after"), clock.now()));
        let body: { results?: { title?: unknown; url?: unknown; content?: unknown }[] };
        try {
          body = JSON.parse(text) as typeof body;
        } catch {
          throw new ProviderError("bad-response", "Tavily sent an answer that is not valid JSON.");
        }
        if (!Array.isArray(body.results)) throw new ProviderError("bad-response", "Tavily's answer has no results list.");
        return body.results
          .filter((r) => typeof r.url === "string" && r.url)
          .slice(0, maxResults)
          .map((r) => ({
            title: typeof r.title === "string" && r.title ? r.title : String(r.url),
            url: String(r.url),
            content: typeof r.content === "string" ? r.content.slice(0, MAX_SNIPPET_CHARS) : "",
          }));
      },
      mapError: (err, guard) => tavilyError(err, guard, baseUrl),
    });
  }
}

/** A Retry-After header (seconds or an HTTP date) as milliseconds from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (!header?.trim()) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(header)) return Math.ceil(Number(header) * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function statusError(status: number, text: string, apiKey: string, retryAfter?: number): ProviderError {
  let detail = "";
  try {
    const body = JSON.parse(text) as { detail?: { error?: string } | string; error?: string };
    detail = typeof body.detail === "string" ? body.detail : (body.detail?.error ?? body.error ?? "");
  } catch {
    detail = text.slice(0, 200);
  }
  detail = redact(detail, [apiKey]);
  const suffix = detail ? ` (${detail})` : "";
  if (status === 401 || status === 403) return new ProviderError("unauthorized", `${status}: the Tavily API key was rejected${suffix}`, status);
  const wait = serviceWaitText("Tavily", retryAfter);
  if (status === 429) return new ProviderError("rate-limited", `429: Tavily rate limit reached${wait ? `; ${wait}` : ""}${suffix}`, status, retryAfter);
  if (status === 432 || status === 433) return new ProviderError("rate-limited", `${status}: the Tavily plan's usage limit is reached${suffix}`, status);
  if (status >= 500) return new ProviderError("server", `Tavily failed (${status})${suffix}`, status, retryAfter);
  return new ProviderError("bad-response", `Tavily rejected the search (${status})${suffix}`, status);
}

function tavilyError(err: unknown, guard: RequestGuard, baseUrl: string): ProviderError {
  if (err instanceof ProviderError) return err;
  return transportError(err, guard, { service: "Tavily", url: baseUrl });
}

/** Tavily from settings, through the host's fetch. Always returns a WebSearch; without a key it throws "not-configured". */
export function createWebSearch(settings: KryptonSettings, host: Host, retry?: RetryPolicy): WebSearch {
  return new TavilySearch({
    apiKey: settings.tavilyApiKey,
    baseUrl: settings.tavilyBaseUrl,
    maxResults: settings.webMaxResults,
    fetch: host.fetch,
    clock: host.clock,
    timeoutMs: settings.requestTimeoutMs,
    retry,
  });
}
