import * as net from "node:net";
import type { FetchLike } from "../core/ports/http";

/**
 * Node's fetch has no connect timeout: a request to a host that drops packets (a sleeping machine running
 * Ollama, a wrong IP) waits for the operating system's TCP give-up, a minute or more. The CLI must answer
 * fast instead (`krypton search` on a vault with no servers running), so before the first request to a
 * host:port this wrapper opens one TCP connection with a short timeout. A host that does not answer fails
 * like a refused connection (TypeError "fetch failed"), which the providers already report as "unreachable".
 * A success is remembered for the process; a failure only for `retryAfterMs`, so a long chat session
 * notices when the server comes back.
 */
export interface ConnectTimeoutOptions {
  timeoutMs: number;
  retryAfterMs?: number;
  /** Resolves when host:port accepts a TCP connection within timeoutMs; rejects with a coded error otherwise. */
  probe?: (host: string, port: number, timeoutMs: number) => Promise<void>;
  now?: () => number;
}

export function withConnectTimeout(base: FetchLike, options: ConnectTimeoutOptions): FetchLike {
  const probe = options.probe ?? probeTcp;
  const now = options.now ?? Date.now;
  const retryAfterMs = options.retryAfterMs ?? 5_000;
  const known = new Map<string, { ok: true } | { ok: false; at: number; error: Error } | { pending: Promise<void> }>();

  const check = async (url: URL): Promise<void> => {
    if (url.protocol !== "http:" && url.protocol !== "https:") return;
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const key = `${host}:${port}`;
    const entry = known.get(key);
    if (entry && "ok" in entry) {
      if (entry.ok) return;
      if (now() - entry.at < retryAfterMs) throw fetchFailed(entry.error);
    }
    if (entry && "pending" in entry) return entry.pending;
    const pending = probe(host, port, options.timeoutMs).then(
      () => {
        known.set(key, { ok: true });
      },
      (err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err));
        known.set(key, { ok: false, at: now(), error });
        throw fetchFailed(error);
      },
    );
    known.set(key, { pending });
    return pending;
  };

  return async (input, init) => {
    const href = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    let url: URL | null = null;
    try {
      url = new URL(href);
    } catch {
      // Not an absolute URL: let fetch report it.
    }
    if (url) await check(url);
    return base(input, init);
  };
}

/** The same shape as Node's fetch failure, so callers that map "fetch failed" to "unreachable" keep working. */
function fetchFailed(cause: Error): TypeError {
  return new TypeError("fetch failed", { cause });
}

export function probeTcp(host: string, port: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(Object.assign(new Error(`connect ETIMEDOUT ${host}:${port} (no answer within ${timeoutMs} ms)`), { code: "ETIMEDOUT" }));
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    });
    socket.once("error", (err) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    });
  });
}
