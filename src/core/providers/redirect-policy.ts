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
 * A request with a body (a chat request, an MCP message) is never sent to the server a second time unless
 * the server asked for exactly that: a 307/308 says the request was not handled and is to be repeated,
 * method and body unchanged, at the new address. A 301/302/303 would turn it into a GET without its body
 * (and a 303 may mean the server acted on it), so it stops with an error naming the new address.
 *
 * A browser's fetch (Obsidian's page) answers a manual redirect with an opaque one: no status, no Location.
 * Letting it follow instead would send the headers to the target before the target could be checked, so
 * the target stays unknown and only one guess is made, on the origin that already had the request: the
 * same address with the trailing slash added or removed, which is what `/mcp` → `/mcp/` servers want.
 * A request without a body is sent there again; if that answers, the answer is used. One with a body is sent
 * there only after a request without it shows that the other form answers (the hidden status may be a 303
 * after the server acted, whose target would hardly be that form, and a 404 there stops it): a slash
 * redirect is sent instead of handling the request. A body that cannot be sent twice (a stream) fails naming
 * the form that answers. Either way the path is remembered for the session, so later requests go straight
 * there; a guess that does not answer refuses the redirect as one to an unknown address.
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
        // The remembered path is gone (the server was reconfigured): forget it, ask the configured one. A
        // body goes again too: there was nothing at that path to act on it.
        learned.delete(key);
        void response.body?.cancel().catch(() => {});
        url = asked;
        response = await fetch(url.href, current);
      }
      if (response.type === "opaqueredirect") {
        const slashed = guessed ? null : toggledSlash(url);
        if (slashed === null) throw refused(url, null);
        guessed = true;
        const withBody = hasBody(current);
        // Without a body: the same request, as a 307/308 would send it (what slash redirects use). With one:
        // the same request without it, only to learn whether the other form answers.
        response = await fetch(slashed.href, withBody ? withoutBody(current) : current);
        // Still redirected, or nothing there: the redirect led somewhere else.
        if (response.type === "opaqueredirect" || response.status === 404) {
          void response.body?.cancel().catch(() => {});
          throw refused(url, null, `; ${slashed.pathname} did not answer instead`);
        }
        if (hop === 0 && slashed.pathname === asked.pathname) learned.delete(key);
        else if (hop === 0) learned.set(key, slashed.pathname);
        if (withBody) {
          void response.body?.cancel().catch(() => {});
          if (!replayable(current.body)) throw notResent(url, slashed);
          // The other form exists on the same server: the redirect was the slash one, which a server sends
          // instead of handling the request (what 307/308 mean), so the request goes there once more.
          response = await fetch(slashed.href, current);
          if (response.type === "opaqueredirect") {
            void response.body?.cancel().catch(() => {});
            throw refused(slashed, null);
          }
        }
        url = slashed;
      }
      const location = REDIRECTS.has(response.status) ? response.headers.get("location") : null;
      if (location === null) return response;
      const next = new URL(location, url);
      void response.body?.cancel().catch(() => {});
      if (next.origin !== url.origin) throw refused(url, next);
      if (hop >= MAX_REDIRECTS) throw new ProviderError("bad-response", `${url.origin} redirected more than ${MAX_REDIRECTS} times.`);
      const resend = response.status === 307 || response.status === 308;
      if (hasBody(current) && !resend) throw dropsBody(url, next, response.status);
      if (hasBody(current) && !replayable(current.body)) throw unresendable(url, next);
      const method = (current.method ?? "GET").toUpperCase();
      // As fetch does for a request without a body: a 303 (and a 301/302 after a POST) continues as a GET.
      if ((response.status === 303 && method !== "GET" && method !== "HEAD") || (!resend && method === "POST")) current = withoutBody(current);
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

function hasBody(init: RequestInit): boolean {
  return init.body !== undefined && init.body !== null;
}

/** The request as a GET without its body (and the headers that describe one). */
function withoutBody(init: RequestInit): RequestInit {
  const headers = new Headers(init.headers);
  headers.delete("content-type");
  headers.delete("content-length");
  return { ...init, method: "GET", body: undefined, headers };
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

function unresendable(from: URL, to: URL): ProviderError {
  return new ProviderError("bad-response", `${from.origin} redirected the request to ${to.pathname}, and its body cannot be sent a second time: put the address it redirects to in settings.`);
}

function dropsBody(from: URL, to: URL, status: number): ProviderError {
  return new ProviderError(
    "bad-response",
    `${from.origin} redirected the request to ${to.origin}${to.pathname} (HTTP ${status}), which would send it on without its body, so it was not sent again: if that is the right address, put it in settings.`,
  );
}

function notResent(from: URL, answering: URL): ProviderError {
  return new ProviderError(
    "bad-response",
    `${from.origin} redirected the request for ${from.pathname} to an address the app cannot see; ${answering.pathname} answers instead. The request was not sent again, since its body cannot be sent a second time: try again (requests now go to ${answering.pathname}), or put ${answering.origin}${answering.pathname} in settings.`,
  );
}
