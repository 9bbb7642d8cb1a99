import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { McpClientManager } from "../src/core/mcp-client/mcp-client-manager";
import { EMPTY_SERVER } from "../src/core/mcp-client/server-config";
import { ToolRegistry } from "../src/core/tools/tool-registry";
import { createStdioTransportFactory } from "../src/node/mcp-stdio-transport";
import { createDemoServer } from "../tests/mcp/support/remote-mcp-servers";
import { errorText, now, stats, target, type FailureRecord, type Measurement } from "./bench-kit";

/** The bench script started with this flag is the stdio MCP server the measurement talks to. */
export const MCP_DEMO_SERVER_FLAG = "--mcp-demo-server";

export async function serveDemoMcpOverStdio(): Promise<void> {
  await createDemoServer({ name: "bench" }).connect(new StdioServerTransport());
}

const WARMUP = 20;
const CALLS = 300;

/**
 * The MCP client's own overhead: one `registry.call("bench:echo")` through Krypton's client to a stdio
 * server (a separate Node process running the SDK server) and back, after the connection is up.
 */
export const mcpStdio: Measurement = {
  name: "mcp",
  describe: "MCP client: stdio tool call round trip (registry.call → server → result) after connect",
  async run(ctx) {
    const failures: FailureRecord[] = [];
    const registry = new ToolRegistry();
    const manager = new McpClientManager({ registry, fetch, stdio: createStdioTransportFactory({ loginPath: () => Promise.resolve(null) }) });
    const times: number[] = [];
    let connectMs: number | null = null;
    try {
      const t0 = now();
      const [status] = await manager.apply([
        { ...EMPTY_SERVER, name: "bench", command: process.execPath, args: [ctx.script, MCP_DEMO_SERVER_FLAG], useLoginShellPath: false },
      ]);
      connectMs = now() - t0;
      if (status.state !== "ready") throw new Error(status.error ?? status.state);
      for (let i = 0; i < WARMUP + CALLS; i++) {
        const start = now();
        const out = await registry.call("bench:echo", { text: `call ${i}` });
        if (i >= WARMUP) times.push(now() - start);
        if (out.text !== `echo: call ${i}`) failures.push({ what: `call ${i}`, error: `unexpected answer ${out.text}` });
      }
    } catch (err) {
      failures.push({ what: "mcp stdio", error: errorText(err) });
    } finally {
      await manager.close();
    }
    const s = times.length ? stats(times) : null;
    return {
      figures: { calls: times.length, connectMs: connectMs === null ? null : Math.round(connectMs), p50Ms: s?.p50 ?? null, p95Ms: s?.p95 ?? null, maxMs: s?.max ?? null },
      targets: [target("mcp-stdio-call", "MCP stdio tool call round trip after connect p50 ≤ 10 ms", s?.p50 ?? null, "ms", s ? s.p50 <= 10 && failures.length === 0 : null)],
      failures,
    };
  },
};
