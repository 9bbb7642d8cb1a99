/**
 * A plain `node:http` server on 127.0.0.1 for a test's own handler: a web page where Ollama should be, a
 * server that redirects, a page for Chromium to load. Without a handler it only holds its port (a port in
 * use); `closedPortUrl()` is the opposite, an address nothing listens on. For the Ollama, Gemini and Tavily
 * protocols use the servers next to this one.
 *
 *   const web = await startLoopbackServer((req, res) => res.writeHead(404).end("Cannot GET"));
 *   env.KRYPTON_OLLAMA_URL = web.url;
 *   await web.close();
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

export interface LoopbackServer {
  /** "http://127.0.0.1:<port>", without a trailing slash. */
  url: string;
  port: number;
  /** Drops open connections (keep-alive ones too) and stops listening. */
  close(): Promise<void>;
}

/** Listens on `port` (default: any free one); rejects when the port is taken. */
export async function startLoopbackServer(handler?: http.RequestListener, port = 0): Promise<LoopbackServer> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Servers a test file starts as it goes, closed together (in afterEach or afterAll):
 *   const servers = loopbackServers();
 *   afterEach(() => servers.closeAll());
 *   const url = await servers.serve((req, res) => res.writeHead(302, { location: "/x" }).end());
 */
export function loopbackServers(): { serve(handler: http.RequestListener): Promise<string>; closeAll(): Promise<void> } {
  const started: LoopbackServer[] = [];
  return {
    serve: async (handler) => {
      const server = await startLoopbackServer(handler);
      started.push(server);
      return server.url;
    },
    closeAll: async () => {
      await Promise.all(started.splice(0).map((server) => server.close()));
    },
  };
}

/** A URL nothing listens on: a port that was just free. */
export async function closedPortUrl(): Promise<string> {
  const server = await startLoopbackServer();
  await server.close();
  return server.url;
}
