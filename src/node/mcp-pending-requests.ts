import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

type JsonRpcMessage = { id?: string | number; method?: string; result?: unknown; error?: unknown };

export interface PendingRequests {
  /** Call after server.connect, which installs the server's onmessage: wraps it and send. */
  attach(): void;
  /** Resolves once every request received so far has been answered (at once when none is open). */
  settled(): Promise<void>;
}

/**
 * Counts the requests a server transport has received and not yet answered, so a host can let their
 * answers go out before it closes the connection: stdio when the client closes stdin right after its last
 * request, the HTTP bridge's legacy SSE sessions when the bridge stops.
 */
export function trackPendingRequests(transport: Transport): PendingRequests {
  const open = new Set<string | number>();
  let waiters: (() => void)[] = [];
  const wake = () => {
    if (open.size > 0) return;
    for (const w of waiters) w();
    waiters = [];
  };
  return {
    attach() {
      const receive = transport.onmessage;
      transport.onmessage = (message, extra) => {
        const m = message as JsonRpcMessage;
        if (m.method !== undefined && m.id !== undefined) open.add(m.id);
        receive?.(message, extra);
      };
      const send = transport.send.bind(transport);
      transport.send = async (message, options) => {
        try {
          await send(message, options);
        } finally {
          const m = message as JsonRpcMessage;
          if (m.method === undefined && m.id !== undefined && open.delete(m.id)) wake();
        }
      };
    },
    settled() {
      return open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}
