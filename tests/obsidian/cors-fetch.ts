// A page fetch that enforces CORS the way Chromium does for Obsidian's window (origin app://obsidian.md):
// a non-simple request sends a real OPTIONS preflight first and never goes out when the server does not
// allow the origin; a simple request goes out but its response is withheld. Either way the caller sees a
// bare TypeError("Failed to fetch"), with no status and no body, exactly what Krypton has to detect.
// With `redirect: "manual"` a redirect is not followed: one that passes the CORS check comes back as an
// opaque redirect, as the Fetch spec defines it and Chromium returns it; one without CORS headers fails
// like any other refused answer (tests/browser/redirects.browser.test.ts checks both in a real Chromium).
import type { FetchLike } from "../../src/core/ports/http";

export const PAGE_ORIGIN = "app://obsidian.md";

const SIMPLE_HEADERS = new Set(["accept", "accept-language", "content-language", "content-type"]);
const SIMPLE_TYPES = ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"];

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Fetch spec: type "opaqueredirect", status 0, no headers, null body; Chromium keeps the request's URL. */
function opaqueRedirect(url: string): Response {
  const response = Response.error(); // status 0, empty immutable headers, null body
  return Object.defineProperties(response, { type: { value: "opaqueredirect" }, url: { value: url } });
}

export interface CorsFetch extends FetchLike {
  /** Requests the page made (preflights included). */
  calls: { method: string; url: string }[];
}

export function chromiumLikeFetch(pageOrigin = PAGE_ORIGIN): CorsFetch {
  const calls: { method: string; url: string }[] = [];
  const network = fetch; // the real network, captured before a test installs this as window.fetch
  const allowed = (res: Response) => {
    const acao = res.headers.get("access-control-allow-origin");
    return acao === "*" || acao === pageOrigin;
  };
  const fetchLike = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? "GET").toUpperCase();
    const headers = new Headers(init?.headers);
    const sameOrigin = new URL(url).origin === pageOrigin;
    if (!sameOrigin) {
      let simple = ["GET", "HEAD", "POST"].includes(method);
      headers.forEach((value, name) => {
        if (!SIMPLE_HEADERS.has(name)) simple = false;
        if (name === "content-type" && !SIMPLE_TYPES.some((t) => value.toLowerCase().startsWith(t))) simple = false;
      });
      if (!simple) {
        calls.push({ method: "OPTIONS", url });
        const preflight = await network(url, {
          method: "OPTIONS",
          headers: { Origin: pageOrigin, "Access-Control-Request-Method": method },
          signal: init?.signal,
          redirect: "manual", // a preflight is never redirected: a 30x fails it like any non-ok answer
        });
        await preflight.arrayBuffer();
        if (!preflight.ok || !allowed(preflight)) throw new TypeError("Failed to fetch");
      }
    }
    calls.push({ method, url });
    headers.set("Origin", pageOrigin);
    const res = await network(url, { ...init, headers });
    if (!sameOrigin && !allowed(res)) {
      await res.body?.cancel();
      throw new TypeError("Failed to fetch");
    }
    if (init?.redirect === "manual" && REDIRECTS.has(res.status)) {
      await res.body?.cancel();
      return opaqueRedirect(url);
    }
    return res;
  }) as CorsFetch;
  fetchLike.calls = calls;
  return fetchLike;
}
