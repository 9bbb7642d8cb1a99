import type { FetchLike } from "../ports/http";
import { ProviderError } from "./provider-error";

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

/**
 * Every host's fetch goes through this. fetch follows redirects by itself and, crossing to another origin,
 * drops only `Authorization`: Gemini's `x-goog-api-key`, an MCP server's custom headers and the request
 * body would go to whatever host a (misconfigured, hijacked or malicious) base URL points at. So redirects
 * are followed here, and only within the same origin (an MCP endpoint's `/mcp` → `/mcp/`); a redirect to
 * another origin fails before anything is sent there, naming the address to put in settings instead.
 */
export function sameOriginRedirects(fetch: FetchLike): FetchLike {
  return async (input, init) => {
    if (typeof input !== "string" && !(input instanceof URL)) return fetch(input, { ...init, redirect: "manual" });
    let url = new URL(input);
    let current: RequestInit = { ...init, redirect: "manual" };
    for (let hop = 0; ; hop++) {
      const response = await fetch(url.href, current);
      // A browser hides the target of a manual redirect: it cannot be checked, so it is not followed.
      if (response.type === "opaqueredirect") throw refused(url, null);
      const location = REDIRECTS.has(response.status) ? response.headers.get("location") : null;
      if (location === null) return response;
      const next = new URL(location, url);
      void response.body?.cancel().catch(() => {});
      if (next.origin !== url.origin) throw refused(url, next);
      if (hop >= MAX_REDIRECTS) throw new ProviderError("bad-response", `${url.origin} redirected more than ${MAX_REDIRECTS} times.`);
      const method = (current.method ?? "GET").toUpperCase();
      // As fetch does: 303 (and 301/302 after a POST) continue as a GET without a body.
      if ((response.status === 303 && method !== "GET" && method !== "HEAD") || ((response.status === 301 || response.status === 302) && method === "POST")) {
        current = { ...current, method: "GET", body: undefined };
      }
      url = next;
    }
  };
}

function refused(from: URL, to: URL | null): ProviderError {
  // The browser does not say where: often the same path with or without a trailing slash.
  const target = to ? `to ${to.origin}${to.pathname}` : "elsewhere (the address may need or lose a trailing slash)";
  return new ProviderError(
    "bad-response",
    `${from.origin} redirected the request ${target}. Krypton does not send your keys or headers on to another address: if that is the right server, put its address in settings.`,
  );
}
