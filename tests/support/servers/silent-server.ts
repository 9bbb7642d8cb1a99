/**
 * A loopback TCP server that accepts connections and never answers (nor reads): a hung service, e.g. an
 * Ollama stuck loading a model. Connecting succeeds at once, so only request timeouts can end the wait.
 *
 *   const silent = await startSilentServer();
 *   env.KRYPTON_OLLAMA_URL = silent.url;
 *   ... expect(silent.connections()).toBeGreaterThan(0) ...
 *   await silent.close();
 */
import * as net from "node:net";
import type { AddressInfo } from "node:net";

export interface SilentServer {
  url: string;
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connections: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
