/**
 * The shared engine behind the Ollama, Gemini and Tavily test servers: a real node:http server on
 * 127.0.0.1 (random port) that records every request and answers from a per-test script.
 *
 * Scripting (same on every server):
 *   server.script({ reply: "Hello", delayMs: 20 })          // next matching request
 *   server.script({ route: "chat", status: 429, times: 2 })  // next two chat requests answer 429
 *   server.script([{ status: 500 }, { reply: "ok" }])       // a queue: 500, then ok
 *   server.setDefault({ tokenDelayMs: 5 })                   // used when the queue has nothing that matches
 * A behaviour is consumed by the first request whose route matches (route omitted = any request);
 * `times` (default 1, Infinity allowed) says how many requests it serves before it is used up.
 * See tests/support/servers/README.md for every field.
 */
import * as http from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. "/api/chat". */
  path: string;
  query: Record<string, string>;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** Parsed JSON body, or the raw text when it is not JSON, or undefined when empty. */
  body: unknown;
  rawBody: string;
  /** The server's route name for this request ("chat", "embed", "tags", "stream", "search", ...). */
  route: string;
  /** performance.now() (same process) when the first byte of this request reached the server. */
  firstByteAt: number;
  /** The last user message's text (chat routes only), handy in reply functions. */
  userText: string;
  /** Model named by the request (path or body), "" when none. */
  model: string;
  /** The client closed the connection before the response was complete (abort, Stop, stopped reading). */
  closedEarly: boolean;
}

export interface Behaviour<Extra = object> {
  /** Route this behaviour applies to; omitted = the next request of any route. */
  route?: string;
  /** Answer text for chat routes (streamed as word tokens), or a function of the request. */
  reply?: string | ((req: RecordedRequest) => string);
  /** Exact stream chunks instead of splitting `reply` into words. */
  tokens?: string[];
  /** Wait this long before sending the response headers. */
  delayMs?: number;
  /** Wait this long between streamed chunks. */
  tokenDelayMs?: number;
  /** Answer with this HTTP status; with no `body`, the protocol's own error JSON is sent. */
  status?: number;
  /** Send exactly this body (objects as JSON) instead of the normal answer. */
  body?: unknown;
  /** Message inside the protocol's error JSON (with `status`). */
  error?: string;
  /** Never answer: headers are not sent until the client gives up or close() is called. */
  stall?: boolean;
  /** Stream this many chunks, then go silent (socket kept open). */
  stallAfterTokens?: number;
  /** Stream this many chunks, then destroy the socket (no final/done chunk). */
  cutAfterTokens?: number;
  /** Broken JSON: a non-stream answer is not JSON; a stream sends one good chunk, then a garbage line, then ends. */
  malformed?: boolean;
  /** Stream this many chunks, then one line that is not JSON, then the rest of the answer as if nothing happened. */
  invalidLineAfterTokens?: number;
  /** How many matching requests this behaviour serves (default 1; Infinity = until reset). */
  times?: number;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Protocol-specific extras (embeddings, search results, ...). */
  extra?: Extra;
}

export type ScriptInput<Extra> = Behaviour<Extra> | Behaviour<Extra>[];

/** What a protocol handler gets: the request, the behaviour chosen for it and helpers to answer. */
export interface Exchange<Extra> {
  req: RecordedRequest;
  behaviour: Behaviour<Extra>;
  res: http.ServerResponse;
  /** True once the client went away or the server is closing. */
  gone(): boolean;
  sleep(ms: number): Promise<void>;
  json(status: number, body: unknown, headers?: Record<string, string>): void;
  /** Holds the response open until the client goes away or the server closes. */
  hold(): Promise<void>;
  /** Destroys the socket mid-response. */
  cut(): void;
}

export interface ProtocolHandler<Extra> {
  /** Route name for a request, or null for 404. */
  route(method: string, path: string): string | null;
  /** Fills userText / model from the parsed request. */
  describe?(req: RecordedRequest): void;
  /** Checks auth etc. before scripting applies; returns true when it already answered. */
  guard?(ex: Exchange<Extra>): boolean;
  /** Sends a scripted error status (protocol's error shape). */
  error(ex: Exchange<Extra>, status: number, message: string | undefined): void;
  /** The normal answer, honouring reply/tokens/cut/stall/malformed. */
  answer(ex: Exchange<Extra>): Promise<void>;
}

export interface ScriptedServer<Extra> {
  /** Base URL, e.g. "http://127.0.0.1:43121" (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** performance.now() when the first byte of each request arrived, in request order. */
  readonly firstByteAt: number[];
  /** Queues one or more behaviours (see the header comment). */
  script(input: ScriptInput<Extra>): void;
  /** Behaviour used when no queued behaviour matches (merged over the server's defaults). */
  setDefault(behaviour: Behaviour<Extra>): void;
  /** Queued behaviours not used up yet. */
  pending(): number;
  /** Requests to one route. */
  requestsTo(route: string): RecordedRequest[];
  /** Clears the queue, default behaviour and recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

interface Queued<Extra> {
  behaviour: Behaviour<Extra>;
  left: number;
}

/** Splits text into word tokens that concatenate back to the original ("Hello there" → ["Hello ", "there"]). */
export function splitTokens(text: string): string[] {
  const tokens = text.match(/\s*\S+\s*/g);
  if (!tokens) return text ? [text] : [];
  return tokens;
}

/** The reply text for a behaviour, or the fallback when it scripts none. */
export function replyText<E>(behaviour: Behaviour<E>, req: RecordedRequest, fallback: string): string {
  const reply = behaviour.reply;
  if (typeof reply === "function") return reply(req);
  return reply ?? fallback;
}

export async function startScriptedServer<Extra>(handler: ProtocolHandler<Extra>): Promise<ScriptedServer<Extra>> {
  const requests: RecordedRequest[] = [];
  const firstByteAt: number[] = [];
  let queue: Queued<Extra>[] = [];
  let fallback: Behaviour<Extra> = {};
  let closing = false;
  const timers = new Set<NodeJS.Timeout>();
  const holds = new Set<() => void>();
  const sockets = new Set<Socket>();
  // First byte of the next request on each socket (keep-alive sockets carry several requests).
  const pendingFirstByte = new WeakMap<Socket, number>();
  // Sockets in the middle of a request: their data is that request's body, not the next request's first byte.
  const midRequest = new WeakSet<Socket>();

  const take = (route: string): Behaviour<Extra> => {
    const index = queue.findIndex((q) => q.behaviour.route === undefined || q.behaviour.route === route);
    if (index < 0) return fallback;
    const entry = queue[index]!;
    entry.left -= 1;
    if (entry.left <= 0) queue.splice(index, 1);
    return entry.behaviour;
  };

  const server = http.createServer((req, res) => {
    const socket = req.socket;
    const arrived = pendingFirstByte.get(socket) ?? performance.now();
    pendingFirstByte.delete(socket);
    midRequest.add(socket);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      midRequest.delete(socket);
      void handle(req, res, Buffer.concat(chunks).toString("utf8"), arrived);
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("data", () => {
      if (!midRequest.has(socket) && !pendingFirstByte.has(socket)) pendingFirstByte.set(socket, performance.now());
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, rawBody: string, arrived: number) {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : (v ?? "");
    let body: unknown = undefined;
    if (rawBody) {
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = rawBody;
      }
    }
    const method = req.method ?? "GET";
    const route = handler.route(method, url.pathname);
    const recorded: RecordedRequest = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams.entries()),
      headers,
      body,
      rawBody,
      route: route ?? "unknown",
      firstByteAt: arrived,
      userText: "",
      model: "",
      closedEarly: false,
    };
    requests.push(recorded);
    firstByteAt.push(arrived);
    let clientGone = false;
    res.on("close", () => {
      clientGone = true;
      if (!res.writableFinished && !closing) recorded.closedEarly = true;
    });

    const ex: Exchange<Extra> = {
      req: recorded,
      behaviour: {},
      res,
      gone: () => clientGone || closing || res.destroyed,
      sleep: (ms) =>
        new Promise<void>((resolve) => {
          if (ms <= 0) return resolve();
          const t = setTimeout(() => {
            timers.delete(t);
            resolve();
          }, ms);
          timers.add(t);
        }),
      json: (status, payload, extraHeaders) => {
        if (ex.gone()) return;
        const text = typeof payload === "string" ? payload : JSON.stringify(payload);
        res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", ...extraHeaders, ...ex.behaviour.headers });
        res.end(text);
      },
      hold: () =>
        new Promise<void>((resolve) => {
          if (ex.gone()) return resolve();
          const release = () => {
            holds.delete(release);
            resolve();
          };
          holds.add(release);
          res.on("close", release);
        }),
      cut: () => {
        // Flush what was written, then drop the connection without the chunked terminator.
        const socket = res.socket;
        if (!socket) return;
        socket.end(() => socket.destroy());
      },
    };

    try {
      if (route === null) {
        ex.json(404, "404 page not found");
        return;
      }
      handler.describe?.(recorded);
      if (handler.guard?.(ex)) return;
      const behaviour = take(route);
      ex.behaviour = behaviour;
      if (behaviour.delayMs) await ex.sleep(behaviour.delayMs);
      if (behaviour.stall) {
        await ex.hold();
        return;
      }
      if (ex.gone()) return;
      if (behaviour.body !== undefined) {
        ex.json(behaviour.status ?? 200, behaviour.body);
        return;
      }
      if (behaviour.status !== undefined && behaviour.status >= 400) {
        handler.error(ex, behaviour.status, behaviour.error);
        return;
      }
      await handler.answer(ex);
    } catch (err) {
      if (!res.headersSent && !ex.gone()) ex.json(500, { error: `test server failure: ${String(err)}` });
      else res.destroy();
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    firstByteAt,
    script(input) {
      for (const behaviour of Array.isArray(input) ? input : [input]) queue.push({ behaviour, left: behaviour.times ?? 1 });
    },
    setDefault(behaviour) {
      fallback = behaviour;
    },
    pending: () => queue.length,
    requestsTo: (route) => requests.filter((r) => r.route === route),
    reset() {
      queue = [];
      fallback = {};
      requests.length = 0;
      firstByteAt.length = 0;
    },
    close: async () => {
      closing = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const release of [...holds]) release();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Streams chunks with the behaviour's pacing, cut, stall and malformed options. Returns false when it did not finish. */
export async function streamChunks<E>(
  ex: Exchange<E>,
  chunks: string[],
  options: { malformedLine: string },
): Promise<boolean> {
  const b = ex.behaviour;
  for (let i = 0; i < chunks.length; i++) {
    if (ex.gone()) return false;
    if (b.cutAfterTokens !== undefined && i >= b.cutAfterTokens) {
      ex.cut();
      return false;
    }
    if (b.stallAfterTokens !== undefined && i >= b.stallAfterTokens) {
      await ex.hold();
      return false;
    }
    if (b.malformed && i === 1) {
      ex.res.end(options.malformedLine);
      return false;
    }
    if (i > 0 && b.tokenDelayMs) await ex.sleep(b.tokenDelayMs);
    if (ex.gone()) return false;
    if (b.invalidLineAfterTokens === i) {
      const line = options.malformedLine.endsWith("\n") ? options.malformedLine : `${options.malformedLine}\n`;
      await new Promise<void>((resolve) => ex.res.write(line, () => resolve()));
    }
    await new Promise<void>((resolve) => ex.res.write(chunks[i], () => resolve()));
  }
  if (b.malformed && chunks.length <= 1) {
    ex.res.end(options.malformedLine);
    return false;
  }
  // A count at or past the token count still cuts or stalls: the final (done) chunk never comes.
  if (b.cutAfterTokens !== undefined) {
    ex.cut();
    return false;
  }
  if (b.stallAfterTokens !== undefined) {
    await ex.hold();
    return false;
  }
  return true;
}
