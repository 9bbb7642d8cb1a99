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
 *
 * A browser's fetch (Obsidian's page) answers a manual redirect with an opaque one: no status, no Location.
 * Letting it follow instead would send the headers to the target before the target could be checked, so
 * the target stays unknown and only one guess is made, on the origin that already had the request: the
 * same address with the trailing slash added or removed, which is what `/mcp` → `/mcp/` servers want.
 * If that answers, the answer is used and the path remembered for the session (later requests go straight
 * there); otherwise the redirect is refused as one to an unknown address.
 */
export function sameOriginRedirects(fetch: FetchLike): FetchLike {
  /** origin + path asked for → the path that answered instead of its opaque redirect. */
  const learned = new Map<string, string>();
  return async (input, init) => {
    if (typeof input !== "string" && !(input instanceof URL)) return fetch(input, { ...init, redirect: "manual" });
    const asked = new URL(input);
    const key = asked.origin + asked.pathname;
    const remembered = learned.get(key);
    let url = remembered === undefined ? asked : withPath(asked, remembered);
    let current: RequestInit = { ...init, redirect: "manual" };
    let guessed = false;
    for (let hop = 0; ; hop++) {
      let response = await fetch(url.href, current);
      if (hop === 0 && remembered !== undefined && response.status === 404 && replayable(current.body)) {
        // The remembered path is gone (the server was reconfigured): forget it, ask the configured one.
        learned.delete(key);
        void response.body?.cancel().catch(() => {});
        url = asked;
        response = await fetch(url.href, current);
      }
      if (response.type === "opaqueredirect") {
        const slashed = guessed ? null : toggledSlash(url);
        if (slashed === null) throw refused(url, null);
        // The body went out with the first request: a stream cannot be sent again.
        if (!replayable(current.body)) throw unresendable(url, null);
        guessed = true;
        // Same method and body, as a 307/308 would (what slash redirects use): the origin already had both.
        response = await fetch(slashed.href, current);
        // Still redirected, or nothing there: the redirect led somewhere else.
        if (response.type === "opaqueredirect" || response.status === 404) {
          void response.body?.cancel().catch(() => {});
          throw refused(url, null, `; ${slashed.pathname} did not answer instead`);
        }
        if (hop === 0 && slashed.pathname === asked.pathname) learned.delete(key);
        else if (hop === 0) learned.set(key, slashed.pathname);
        url = slashed;
      }
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
      } else if (!replayable(current.body)) {
        throw unresendable(url, next);
      }
      url = next;
    }
  };
}

/** The same address with the trailing slash added or removed; null for the root, which has no other form. */
function toggledSlash(url: URL): URL | null {
  if (url.pathname === "/") return null;
  return withPath(url, url.pathname.endsWith("/") ? url.pathname.slice(0, -1) : `${url.pathname}/`);
}

function withPath(url: URL, pathname: string): URL {
  const copy = new URL(url.href);
  copy.pathname = pathname;
  return copy;
}

/** Strings, bytes, Blob, FormData and URLSearchParams can be sent twice; a stream is read as it goes out. */
function replayable(body: RequestInit["body"]): boolean {
  return !(typeof body === "object" && body !== null && ("getReader" in body || Symbol.asyncIterator in body));
}

function refused(from: URL, to: URL | null, detail = ""): ProviderError {
  const target = to ? `to ${to.origin}${to.pathname}` : `for ${from.pathname} to an address the app cannot see`;
  return new ProviderError(
    "bad-response",
    `${from.origin} redirected the request ${target}${detail}. Krypton does not send your keys or headers on to another address: if that is the right server, put its address in settings.`,
  );
}

function unresendable(from: URL, to: URL | null): ProviderError {
  const where = to ? `to ${to.pathname}` : `for ${from.pathname} (the address may need or lose a trailing slash)`;
  return new ProviderError("bad-response", `${from.origin} redirected the request ${where}, and its body cannot be sent a second time: put the address it redirects to in settings.`);
}
