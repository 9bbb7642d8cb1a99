/**
 * The real core (createKrypton on the Node host: real index, real agents and tools) over a temp vault,
 * served by the real MCP bridge and called by the SDK's Streamable HTTP client. The model is the loopback
 * Ollama the test owns (started per test or per file), so the test scripts its words.
 *
 *   ({ vault, core, bridge, client } = await startRealCoreBridge({ ollama, token, notes, settings: { excludePatterns: ["Private/"] } }));
 *   ...
 *   await closeRealCoreBridge({ vault, core, bridge, client });
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createKrypton, type KryptonCore } from "../../../src/core/krypton";
import { silentLogger } from "../../../src/core/ports/logger";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../../src/core/settings";
import { startMcpHttpServer, type McpHttpServerHandle } from "../../../src/node/mcp-http-server";
import { createNodeHost } from "../../../src/node/node-host";
import type { OllamaTestServer } from "../../support/servers/ollama-server";
import { makeTempVault, type TempVault } from "../../support/temp-vault";
import { connectStreamable } from "./mcp-test-kit";

export interface RealCoreBridge {
  vault: TempVault;
  core: KryptonCore;
  bridge: McpHttpServerHandle;
  client: Client;
}

export async function startRealCoreBridge(options: {
  ollama: OllamaTestServer;
  token: string;
  notes: Record<string, string>;
  /** Over the defaults, the Ollama's URL and a 5 s request timeout. */
  settings?: Partial<KryptonSettings>;
  /** Open the index and wait until it is built before the bridge starts. */
  openIndex?: boolean;
}): Promise<RealCoreBridge> {
  const vault = await makeTempVault(options.notes);
  const settings: KryptonSettings = { ...DEFAULT_SETTINGS, ollamaUrl: options.ollama.url, requestTimeoutMs: 5_000, ...options.settings };
  const core = createKrypton(createNodeHost(vault.root, { logger: silentLogger }), settings);
  if (options.openIndex) {
    await core.index.open();
    await core.index.idle();
  }
  const bridge = await startMcpHttpServer({ registry: core.tools, port: 0, token: options.token, vaultRoot: vault.root });
  const client = await connectStreamable(bridge.url, options.token);
  return { vault, core, bridge, client };
}

/** Closes the client, the bridge and the core, then removes the vault (the Ollama is the test's to close). */
export async function closeRealCoreBridge({ vault, core, bridge, client }: RealCoreBridge): Promise<void> {
  await client.close();
  await bridge.close();
  await core.close();
  await vault.cleanup();
}
