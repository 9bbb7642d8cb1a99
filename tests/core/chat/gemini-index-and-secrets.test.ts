/**
 * Gemini end to end on real parts: the vault index embedded with gemini-embedding-001 (through the
 * provider factory, as the plugin and CLI build it), Gemini chat and Tavily over loopback servers, with
 * real API keys set. Then the proof that the keys never reach disk or logs: every file under .krypton/
 * (index, manifest, conversations, locks) and every captured log line is searched for them, after
 * answers that worked and answers that failed with the key echoed back by the service.
 */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { ChatService } from "../../../src/core/chat/chat-service";
import { ConversationStore } from "../../../src/core/chat/conversation-store";
import { VaultIndex } from "../../../src/core/indexing/vault-index";
import type { Host } from "../../../src/core/ports/host";
import { createChatModel, createEmbedder } from "../../../src/core/providers/provider-factory";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../../src/core/settings";
import { createWebSearch } from "../../../src/core/web/tavily-search";
import { createNodeHost } from "../../../src/node/node-host";
import { startGeminiServer, type GeminiTestServer } from "../../support/servers/gemini-server";
import { startTavilyServer, type TavilyTestServer } from "../../support/servers/tavily-server";
import { makeTempVault, type TempVault } from "../../support/temp-vault";
import { FAST_RETRY } from "../providers/provider-fixtures";
import { doneOf, ofType, recordingLogger } from "./chat-fixtures";
import type { ChatEvent, SendOptions } from "../../../src/core/chat/chat-types";

const GEMINI_KEY = "AIzaSyD-gemini-SECRET-0123456789abcdef";
const TAVILY_KEY = "tvly-dev-SECRET-tavily-0123456789";

const NOTES = {
  "Ocean/Tides.md": "# Tides\n\nTides are caused by the gravity of the moon and the sun.\nSpring tides happen at new and full moon.\n",
  "Kitchen/Bread.md": "# Bread\n\nFlour, water, salt and yeast. Knead for ten minutes.\n",
  "Travel/Lisbon.md": "# Lisbon\n\nTrams, custard tarts and steep hills.\n",
};

let vault: TempVault;
let gemini: GeminiTestServer;
let tavily: TavilyTestServer;
let logger: ReturnType<typeof recordingLogger>;
let host: Host;
let settings: KryptonSettings;
let index: VaultIndex;
let service: ChatService;

async function send(message: string, options: Partial<SendOptions>): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  for await (const e of service.send(message, { mode: "none", ...options })) events.push(e);
  return events;
}

/** Every file under a folder, recursively, as raw bytes decoded leniently (binary index files included). */
async function allFiles(dir: string): Promise<{ path: string; text: string }[]> {
  const out: { path: string; text: string }[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await allFiles(full)));
    else out.push({ path: full, text: (await fs.readFile(full)).toString("latin1") });
  }
  return out;
}

beforeEach(async () => {
  vault = await makeTempVault(NOTES);
  [gemini, tavily] = await Promise.all([startGeminiServer({ apiKey: GEMINI_KEY }), startTavilyServer({ apiKey: TAVILY_KEY })]);
  logger = recordingLogger();
  host = createNodeHost(vault.root, { logger });
  settings = {
    ...DEFAULT_SETTINGS,
    excludePatterns: [],
    chatProvider: "gemini",
    chatModel: "gemini-2.5-flash",
    embeddingProvider: "gemini",
    embeddingModel: "gemini-embedding-001",
    geminiApiKey: GEMINI_KEY,
    geminiBaseUrl: gemini.url,
    tavilyApiKey: TAVILY_KEY,
    tavilyBaseUrl: tavily.url,
    requestTimeoutMs: 2_000,
    similarityThreshold: 0.05,
  };
  const embedder = createEmbedder(settings, host, { retry: FAST_RETRY });
  index = new VaultIndex({
    host,
    settings: () => settings,
    embedder: () => embedder,
    options: { debounceMs: 5, retry: FAST_RETRY, embedRetryAfterMs: 0, queryTimeoutMs: 2_000 },
  });
  await index.open();
  service = new ChatService({
    host,
    settings: () => settings,
    index,
    chatModel: () => createChatModel(settings, host, { retry: FAST_RETRY }),
    conversations: new ConversationStore(host.data, host.clock, logger),
    agents: () => [],
    webSearch: () => createWebSearch(settings, host, FAST_RETRY),
  });
});

afterEach(async () => {
  await index.close();
  await Promise.all([gemini.close(), tavily.close()]);
  await vault.cleanup();
});

it("indexes with gemini-embedding-001 (768-dim) and answers RAG questions from those vectors", async () => {
  const status = index.status();
  expect(status).toMatchObject({ keywordOnly: false, embedder: "gemini:gemini-embedding-001" });
  expect(status.embedded).toBe(status.chunks);
  const batch = gemini.requestsTo("batchEmbed")[0].body as { requests: { model: string; outputDimensionality: number }[] };
  expect(batch.requests[0]).toMatchObject({ model: "models/gemini-embedding-001", outputDimensionality: 768 });

  gemini.script({ route: "stream", reply: "The moon's gravity [1]." });
  const events = await send("what pulls the sea: moon gravity tides?", { mode: "rag" });
  expect(ofType(events, "error")).toEqual([]);
  expect(ofType(events, "sources")[0].sources[0]).toMatchObject({ kind: "note", path: "Ocean/Tides.md" });
  expect(doneOf(events).answer).toBe("The moon's gravity [1].");
  // The question itself was embedded through Gemini for the vector search.
  expect(gemini.requestsTo("batchEmbed").some((r) => JSON.stringify(r.body).includes("what pulls the sea"))).toBe(true);
});

it("API keys never reach .krypton/ (index, conversations) or the logs, even when services echo them", async () => {
  // Answers that work, in every mode that talks to a keyed service.
  gemini.setDefault({ reply: "An answer [1]." });
  for (const mode of ["none", "rag", "web", "hybrid"] as const) {
    expect(ofType(await send(`tides and bread, ${mode}`, { mode }), "error")).toEqual([]);
  }
  // Failures whose service messages contain the key: Gemini chat, Tavily, and the embedder (logged by the index).
  gemini.script({ route: "stream", status: 400, error: `API key ${GEMINI_KEY} not valid. Please pass a valid API key.` });
  tavily.script({ route: "search", status: 401, body: { detail: { error: `Unauthorized: ${TAVILY_KEY} is invalid.` } } });
  const failed = await send("tides on the web", { mode: "hybrid" });
  expect(ofType(failed, "error")).toEqual([expect.objectContaining({ message: expect.stringContaining("API key *** not valid") })]);
  expect(ofType(failed, "notice").some((n) => n.code === "web-unavailable")).toBe(true);

  gemini.script({ route: "batchEmbed", status: 500, error: `internal failure for key=${GEMINI_KEY}`, times: Infinity });
  await vault.write("Ocean/Waves.md", "# Waves\n\nWind makes waves.\n");
  await index.sync();
  gemini.script({ route: "stream", status: 429, error: `quota for ${GEMINI_KEY} exhausted`, times: Infinity });
  const limited = await send("waves?", { mode: "rag" });
  expect(ofType(limited, "error")[0]).toMatchObject({ code: "rate-limited" });
  await index.close();

  const files = await allFiles(join(vault.root, ".krypton"));
  expect(files.some((f) => f.path.includes(`${join(".krypton", "chat")}`))).toBe(true);
  expect(files.some((f) => !f.path.includes(join(".krypton", "chat")))).toBe(true); // the index is there too
  for (const file of files) {
    for (const key of [GEMINI_KEY, TAVILY_KEY]) {
      if (file.text.includes(key)) throw new Error(`${file.path} contains an API key`);
    }
  }
  const logs = logger.lines.join("\n");
  expect(logs.length).toBeGreaterThan(0);
  expect(logs).not.toContain(GEMINI_KEY);
  expect(logs).not.toContain(TAVILY_KEY);
  // The services did receive them (so the test would notice if keys simply were not set).
  expect(gemini.requests.some((r) => r.headers["x-goog-api-key"] === GEMINI_KEY)).toBe(true);
  expect(tavily.requests.some((r) => r.headers.authorization === `Bearer ${TAVILY_KEY}`)).toBe(true);
});
