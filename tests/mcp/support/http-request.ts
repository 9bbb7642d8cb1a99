/** curl-shaped HTTP requests (node:http, any header, any Host) and raw sockets for the slow-client cases. */
import * as http from "node:http";
import { connect, type Socket } from "node:net";

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export function request(
  port: number,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer; chunks?: AsyncIterable<Buffer> },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, method: options.method ?? "GET", path: options.path ?? "/", headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (options.chunks) {
      void (async () => {
        try {
          for await (const chunk of options.chunks!) {
            if (req.destroyed) return;
            if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
          }
          req.end();
        } catch {
          // the server closed on us: the response (413) is what the test looks at
        }
      })();
    } else req.end(options.body);
  });
}

/** A JSON POST like `curl -H "Authorization: Bearer T" -H "Content-Type: application/json" -d '{...}'`. */
export function postJson(port: number, path: string, token: string | undefined, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return request(port, {
    method: "POST",
    path,
    headers: {
      Host: `127.0.0.1:${port}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: text,
  });
}

/** Opens a TCP connection, writes `text`, and resolves with everything the server sent until it closed. */
export function rawExchange(port: number, text: string): Promise<{ received: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (d) => (received += d.toString("utf8")));
    socket.on("close", () => resolve({ received, socket }));
    socket.on("error", (err: NodeJS.ErrnoException) => (err.code === "ECONNRESET" ? resolve({ received, socket }) : reject(err)));
    socket.write(text);
  });
}
