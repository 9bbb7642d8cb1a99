import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * The checks every MCP bridge request passes before it reaches a tool: bearer token, Host and Origin
 * headers, a per-client rate limit and a bounded body read. Kept apart from the routing so each rule
 * reads on its own.
 */

/** Compares bearer tokens in constant time: hashing first makes both sides the same length. */
export function bearerTokenChecker(token: string): (authorization: string | undefined) => boolean {
  const expected = sha256(token);
  return (authorization) => {
    if (typeof authorization !== "string") return false;
    const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(authorization);
    if (!match) return false;
    return timingSafeEqual(sha256(match[1]), expected);
  };
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** DNS rebinding: a browser tricked into calling us still sends the attacker's host name. */
export function loopbackHostChecker(port: () => number): (host: string | undefined) => boolean {
  return (host) => {
    if (typeof host !== "string") return false;
    const h = host.toLowerCase();
    const p = port();
    return h === `127.0.0.1:${p}` || h === `localhost:${p}`;
  };
}

/** Browsers send Origin; other clients (Claude Desktop, curl, the SDK in Node) do not. Only listed origins pass. */
export function originChecker(allowed: readonly string[]): { allows(origin: string): boolean; listed: string[] } {
  const listed = [...new Set(allowed.map(normalizeOrigin).filter((o): o is string => o !== null))];
  return { listed, allows: (origin) => listed.includes(normalizeOrigin(origin) ?? "\u0000") };
}

/** "https://app.example/" → "https://app.example"; "*", "null" and non-URLs are never allowed. */
export function normalizeOrigin(origin: string): string | null {
  const trimmed = origin.trim().toLowerCase().replace(/\/+$/, "");
  if (trimmed === "" || trimmed === "*" || trimmed === "null") return null;
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/\s]+$/.test(trimmed)) return null;
  return trimmed;
}

export interface RateLimit {
  /** Requests a client may send at once. */
  burst: number;
  /** Requests per second added back to the budget. */
  perSecond: number;
}

/** A token bucket per client address. On loopback every client is 127.0.0.1, so in practice it caps the machine. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
  ) {}

  /** False when the client is over its budget. */
  take(client: string): boolean {
    const t = this.now();
    const bucket = this.buckets.get(client) ?? { tokens: this.limit.burst, at: t };
    bucket.tokens = Math.min(this.limit.burst, bucket.tokens + ((t - bucket.at) / 1000) * this.limit.perSecond);
    bucket.at = t;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(client, bucket);
    if (this.buckets.size > 1000) this.forgetFullBuckets(t);
    return allowed;
  }

  /** Seconds until one more request is allowed, for Retry-After. */
  retryAfterSeconds(): number {
    return this.limit.perSecond > 0 ? Math.max(1, Math.ceil(1 / this.limit.perSecond)) : 60;
  }

  private forgetFullBuckets(t: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((t - b.at) / 1000) * this.limit.perSecond >= this.limit.burst) this.buckets.delete(key);
    }
  }
}

export type BodyResult = { kind: "ok"; text: string } | { kind: "too-large" } | { kind: "aborted" };

/**
 * Reads a request body up to maxBytes. A declared Content-Length over the limit is refused before
 * reading anything; a streamed body is counted and refused the moment it passes the limit. Past that,
 * the rest is drained unread (a bounded amount) so the 413 reaches the client, then the socket closes.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    drainThenClose(req, maxBytes * 4);
    return Promise.resolve({ kind: "too-large" });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: BodyResult) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        done({ kind: "too-large" });
        drainThenClose(req, maxBytes * 4);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => done({ kind: "ok", text: Buffer.concat(chunks).toString("utf8") });
    const onError = () => done({ kind: "aborted" });
    const onClose = () => {
      if (!req.complete) done({ kind: "aborted" });
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

function drainThenClose(req: IncomingMessage, budget: number): void {
  let drained = 0;
  req.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > budget) req.socket.destroy();
  });
  req.on("error", () => {});
  req.resume();
}
