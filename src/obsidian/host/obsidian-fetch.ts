import type { RequestUrlParam, RequestUrlResponse } from "obsidian";
import { untilAborted } from "../../core/ports/clock";
import { AbortedError, isAbortError } from "../../core/util/errors";
import type { FetchLike } from "../../core/ports/http";
import { sameOriginRedirects } from "../../core/providers/redirect-policy";

export interface ObsidianFetchOptions {
  /** The page's fetch (window.fetch): streams and cancels, but obeys CORS. */
  pageFetch: FetchLike;
  /** Obsidian's requestUrl: no CORS, but no streaming and no cancel. */
  requestUrl: (request: RequestUrlParam) => Promise<RequestUrlResponse>;
  /** The page's origin ("app://obsidian.md" on desktop); requests to it are never CORS failures. */
  pageOrigin: string;
  /** Called once per server origin the first time it refuses CORS and the fallback answers instead. */
  onCorsFallback?: (origin: string) => void;
  /** Clock for the re-check below; injectable for tests. */
  now?: () => number;
  /** How long an origin that refused CORS is sent straight to requestUrl before the page's fetch is tried again. */
  recheckAfterMs?: number;
}

/** After this long, a refusing origin is tried with streaming again (the user may have set OLLAMA_ORIGINS). */
const CORS_RECHECK_MS = 60_000;

/** Obsidian's host fetch: the CORS-safe fetch below under the redirect policy every host uses. */
export function createObsidianHttp(options: ObsidianFetchOptions): FetchLike {
  return sameOriginRedirects(createObsidianFetch(options));
}

/**
 * The host's HTTP: the page's fetch, so model tokens stream as they come. A server that refuses the app's
 * origin (older Ollama versions, remote hosts without OLLAMA_ORIGINS) makes Chromium throw a bare
 * TypeError before any response is visible. When that happens on a cross-origin request, the same request
 * is sent again through requestUrl: if the server answers, it was CORS, the answer is returned as a
 * Response (whole, not streamed) and later requests to that origin go straight to requestUrl. If
 * requestUrl cannot reach it either, the server is down and the original error is rethrown.
 * The user hears about it once per origin; the page's fetch is tried again now and then, so streaming
 * comes back without a restart of Obsidian once the user has followed the advice. Redirects on that path
 * are requestUrl's business, not the redirect policy's: see viaRequestUrl.
 */
export function createObsidianFetch(options: ObsidianFetchOptions): FetchLike {
  const now = options.now ?? (() => Date.now());
  const recheckAfterMs = options.recheckAfterMs ?? CORS_RECHECK_MS;
  /** Origins that refused the app's origin, and when that was last seen. */
  const corsOrigins = new Map<string, number>();
  const announced = new Set<string>();

  return async (input, init) => {
    const request = await describeRequest(input, init);
    const origin = originOf(request.url);
    const crossOrigin = origin !== null && origin !== options.pageOrigin;

    const refusedAt = crossOrigin ? corsOrigins.get(origin) : undefined;
    if (refusedAt !== undefined && now() - refusedAt < recheckAfterMs) return viaRequestUrl(options, request);
    try {
      const response = await options.pageFetch(input, init);
      if (crossOrigin) corsOrigins.delete(origin); // the origin is allowed now: streaming again
      return response;
    } catch (err) {
      if (!crossOrigin || !isTypeError(err) || request.signal?.aborted) throw err;
      let response: Response;
      try {
        response = await viaRequestUrl(options, request);
      } catch (fallbackErr) {
        if (isAbortError(fallbackErr)) throw fallbackErr;
        throw err; // unreachable for requestUrl too: a network failure, not CORS
      }
      corsOrigins.set(origin, now());
      if (!announced.has(origin)) {
        announced.add(origin);
        options.onCorsFallback?.(origin);
      }
      return response;
    }
  };
}

interface PlainRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string | ArrayBuffer;
  signal?: AbortSignal;
}

async function describeRequest(input: string | URL | Request, init?: RequestInit): Promise<PlainRequest> {
  const isRequest = typeof input !== "string" && !(input instanceof URL);
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const method = (init?.method ?? (isRequest ? input.method : "GET")).toUpperCase();
  const headers: Record<string, string> = {};
  new Headers(isRequest ? input.headers : undefined).forEach((v, k) => (headers[k] = v));
  new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
  let body: string | ArrayBuffer | undefined;
  const rawBody = init?.body ?? (isRequest && input.body ? await input.clone().arrayBuffer() : undefined);
  if (typeof rawBody === "string") body = rawBody;
  else if (rawBody instanceof ArrayBuffer) body = rawBody;
  else if (ArrayBuffer.isView(rawBody)) body = copyBytes(rawBody);
  else if (rawBody !== undefined && rawBody !== null) body = await new Response(rawBody).arrayBuffer();
  return { url, method, headers, body, signal: init?.signal ?? (isRequest ? input.signal : undefined) };
}

/**
 * Outside the redirect policy: requestUrl follows redirects by itself, to other origins too, with whatever
 * headers and body it carries on. RequestUrlParam has no redirect option (the policy's `redirect: "manual"`
 * is lost here) and RequestUrlResponse (status, headers, body) tells neither that it was redirected nor
 * where, so nothing here can refuse such a redirect or detect one afterwards. A redirect sent without CORS
 * headers lands here too: Chromium fails it like a refused origin. README ("API keys", Troubleshooting) says so.
 */
async function viaRequestUrl(options: ObsidianFetchOptions, request: PlainRequest): Promise<Response> {
  if (request.signal?.aborted) throw new AbortedError("Aborted");
  const { "content-type": contentType, "content-length": _length, ...headers } = request.headers;
  const pending = options.requestUrl({
    url: request.url,
    method: request.method,
    headers,
    contentType,
    body: request.body,
    throw: false,
  });
  // requestUrl cannot be cancelled: on abort the caller gets an AbortError and the late answer is dropped.
  const answer = await untilAborted(pending, request.signal);
  const status = answer.status;
  const nullBody = status === 101 || status === 204 || status === 205 || status === 304;
  return new Response(nullBody ? null : answer.arrayBuffer, { status, headers: answer.headers });
}

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/** By name too: a fetch from another realm (a popout window, Node in tests) throws its own TypeError class. */
function isTypeError(err: unknown): boolean {
  return err instanceof TypeError || (typeof err === "object" && err !== null && (err as { name?: string }).name === "TypeError");
}

function copyBytes(view: ArrayBufferView): ArrayBuffer {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  return bytes.slice().buffer;
}

/** The one-time notice shown when Ollama refuses the app's origin. Plain words, ready to act on. */
export function ollamaCorsNotice(origin: string, pageOrigin = "app://obsidian.md"): string {
  return (
    `Krypton: Ollama at ${origin} does not allow Obsidian's origin, so answers arrive all at once instead of ` +
    `streaming. To stream, set the environment variable OLLAMA_ORIGINS=${pageOrigin}* for Ollama and ` +
    `restart it (see "How can I allow additional web origins" in the Ollama FAQ).`
  );
}
