import { parseArgs } from "../../src/cli/args";
import { CONFIG_OPTIONS, loadCliConfig, pluginDataPath, resolveSettings } from "../../src/cli/config";
import { CHAT_OPTIONS } from "../../src/cli/commands/chat-options";
import { UsageError } from "../../src/cli/errors";
import { DEFAULT_SETTINGS } from "../../src/core/settings";
import { makeTempVault, type TempVault } from "../support/temp-vault";

const specs = { ...CONFIG_OPTIONS, ...CHAT_OPTIONS, port: { type: "string" as const, description: "" }, token: { type: "string" as const, description: "" } };
const args = (...argv: string[]) => parseArgs(argv, specs);

describe("CLI settings: data.json < environment < flags", () => {
  let vault: TempVault;
  beforeEach(async () => {
    vault = await makeTempVault({ "note.md": "# Note\n" });
  });
  afterEach(() => vault.cleanup());

  it("uses the defaults when the vault has no plugin data", async () => {
    const config = await loadCliConfig(vault.root, {}, args());
    expect(config.settings).toEqual(DEFAULT_SETTINGS);
    expect(config.dataJsonPath).toBeNull();
    expect(config.warnings).toEqual([]);
    expect(config.configDir).toBe(".obsidian");
  });

  it("reads the plugin's data.json, then lets the environment and then flags override it", async () => {
    await vault.write(
      ".obsidian/plugins/krypton/data.json",
      JSON.stringify({ ollamaUrl: "http://data:1", chatModel: "from-data", embeddingModel: "embed-data", maxK: 7, defaultMode: "hybrid" }),
    );
    const fromData = await loadCliConfig(vault.root, {}, args());
    expect(fromData.dataJsonPath).toBe(pluginDataPath(vault.root, ".obsidian"));
    expect(fromData.settings).toMatchObject({ ollamaUrl: "http://data:1", chatModel: "from-data", embeddingModel: "embed-data", maxK: 7, defaultMode: "hybrid" });

    const env = { KRYPTON_OLLAMA_URL: "http://env:2/", KRYPTON_CHAT_MODEL: "from-env", KRYPTON_MODE: "web" };
    const fromEnv = await loadCliConfig(vault.root, env, args());
    // The environment wins over data.json; what the environment does not set still comes from data.json.
    expect(fromEnv.settings).toMatchObject({ ollamaUrl: "http://env:2", chatModel: "from-env", embeddingModel: "embed-data", maxK: 7, defaultMode: "web" });

    const fromFlags = await loadCliConfig(vault.root, env, args("--chat-model", "from-flag", "--ollama-url=http://flag:3", "--mode", "none"));
    expect(fromFlags.settings).toMatchObject({ ollamaUrl: "http://flag:3", chatModel: "from-flag", embeddingModel: "embed-data", defaultMode: "none" });
  });

  it("maps every documented environment variable", () => {
    const s = resolveSettings(
      undefined,
      {
        KRYPTON_OLLAMA_URL: "http://127.0.0.1:9",
        KRYPTON_CHAT_PROVIDER: "gemini",
        KRYPTON_CHAT_MODEL: "gemini-2.5-flash",
        KRYPTON_EMBEDDING_PROVIDER: "none",
        KRYPTON_EMBEDDING_MODEL: "text-embedding-004",
        KRYPTON_GEMINI_BASE_URL: "http://127.0.0.1:10",
        KRYPTON_TAVILY_BASE_URL: "http://127.0.0.1:11",
        GEMINI_API_KEY: "g-key",
        TAVILY_API_KEY: "t-key",
        MCP_PORT: "8123",
        KRYPTON_MCP_TOKEN: "tok-123",
        KRYPTON_REQUEST_TIMEOUT_MS: "1500",
        KRYPTON_OLLAMA_MAX_CONTEXT: "32768",
        KRYPTON_NEW_NOTE_FOLDER: "Inbox",
      },
      args(),
    );
    expect(s).toMatchObject({
      ollamaUrl: "http://127.0.0.1:9",
      chatProvider: "gemini",
      chatModel: "gemini-2.5-flash",
      embeddingProvider: "none",
      embeddingModel: "text-embedding-004",
      geminiBaseUrl: "http://127.0.0.1:10",
      tavilyBaseUrl: "http://127.0.0.1:11",
      geminiApiKey: "g-key",
      tavilyApiKey: "t-key",
      mcpPort: 8123,
      mcpToken: "tok-123",
      requestTimeoutMs: 1500,
      ollamaMaxContext: 32_768,
      newNoteFolder: "Inbox",
    });
  });

  it("maps the flags, including --no-embeddings, --no-agents and repeatable --exclude", () => {
    const s = resolveSettings(
      { excludePatterns: ["Templates/"], embeddingProvider: "ollama" },
      { KRYPTON_EMBEDDING_PROVIDER: "gemini" },
      args("--no-embeddings", "--no-agents", "--exclude", "Archive/", "--exclude=**/*.excalidraw.md", "--timeout", "250", "--port", "9000", "--token", "abcd", "--folder", "AI"),
    );
    expect(s.embeddingProvider).toBe("none");
    expect(s.agentsEnabled).toBe(false);
    expect(s.excludePatterns).toEqual(["Templates/", "Archive/", "**/*.excalidraw.md"]);
    expect(s.requestTimeoutMs).toBe(250);
    expect(s.mcpPort).toBe(9000);
    expect(s.mcpToken).toBe("abcd");
    expect(s.newNoteFolder).toBe("AI");
  });

  it("treats empty environment variables as unset", () => {
    const s = resolveSettings({ chatModel: "from-data" }, { KRYPTON_CHAT_MODEL: "", GEMINI_API_KEY: "  " }, args());
    expect(s.chatModel).toBe("from-data");
    expect(s.geminiApiKey).toBe("");
  });

  it("prefers KRYPTON_-prefixed keys and ports over the generic names", () => {
    const s = resolveSettings(undefined, { GEMINI_API_KEY: "generic", KRYPTON_GEMINI_API_KEY: "specific", MCP_PORT: "1000", KRYPTON_MCP_PORT: "2000" }, args());
    expect(s.geminiApiKey).toBe("specific");
    expect(s.mcpPort).toBe(2000);
  });

  it.each([
    [{ KRYPTON_CHAT_PROVIDER: "openai" }, [], /KRYPTON_CHAT_PROVIDER must be one of ollama, gemini/],
    [{ KRYPTON_MODE: "fast" }, [], /KRYPTON_MODE must be one of none, rag, web, hybrid/],
    [{ MCP_PORT: "http" }, [], /MCP_PORT must be a whole number/],
    [{ MCP_PORT: "70000" }, [], /MCP_PORT must be between 1 and 65535/],
    [{ KRYPTON_OLLAMA_URL: "localhost:11434" }, [], /KRYPTON_OLLAMA_URL must be an http\(s\) URL/],
    [{}, ["--mode", "everything"], /--mode must be one of/],
    [{}, ["--ollama-url", "ftp://x"], /--ollama-url must be an http\(s\) URL/],
    [{}, ["--embedding-provider", "openai"], /--embedding-provider must be one of ollama, gemini, none/],
    [{}, ["--timeout", "-5"], /--timeout must be positive \(between 1 and/],
  ])("rejects a bad value with a message naming its source (%j %j)", (env, argv, message) => {
    expect(() => resolveSettings(undefined, env, args(...argv))).toThrow(UsageError);
    expect(() => resolveSettings(undefined, env, args(...argv))).toThrow(message);
  });

  it("warns about a corrupt data.json and carries on with defaults", async () => {
    await vault.write(".obsidian/plugins/krypton/data.json", "{ not json");
    const config = await loadCliConfig(vault.root, { KRYPTON_CHAT_MODEL: "env-model" }, args());
    expect(config.warnings).toHaveLength(1);
    expect(config.warnings[0]).toMatch(/not valid JSON/);
    expect(config.settings.chatModel).toBe("env-model");
    expect(config.settings.ollamaUrl).toBe(DEFAULT_SETTINGS.ollamaUrl);
  });

  it("ignores mistyped fields in data.json (normalizeSettings) instead of failing", async () => {
    await vault.write(".obsidian/plugins/krypton/data.json", JSON.stringify({ maxK: "ten", chatModel: 42, displayK: 3 }));
    const config = await loadCliConfig(vault.root, {}, args());
    expect(config.settings.maxK).toBe(DEFAULT_SETTINGS.maxK);
    expect(config.settings.chatModel).toBe(DEFAULT_SETTINGS.chatModel);
    expect(config.settings.displayK).toBe(3);
  });

  it("keeps well-formed agent presets from data.json, drops broken ones; --preset and --max-steps are checked", async () => {
    await vault.write(
      ".obsidian/plugins/krypton/data.json",
      JSON.stringify({
        agentPresets: [
          { name: "Researcher", persona: "You research.", model: "ollama/hf.co/user/model:Q4", tools: ["search_notes", 3] },
          { persona: "no name" },
          "junk",
          { name: "Plain" },
        ],
        agentMaxSteps: "many",
      }),
    );
    const config = await loadCliConfig(vault.root, {}, args("--preset", "Researcher", "--max-steps", "4"));
    expect(config.settings.agentPresets).toEqual([
      { name: "Researcher", persona: "You research.", model: "ollama/hf.co/user/model:Q4", tools: ["search_notes"] },
      { name: "Plain", persona: "", model: "", tools: [] },
    ]);
    expect(config.settings.agentPreset).toBe("Researcher");
    expect(config.settings.agentMaxSteps).toBe(4);
    await expect(loadCliConfig(vault.root, {}, args("--preset", "Nope"))).rejects.toThrow(/--preset: no agent preset named "Nope" \(saved presets: "Researcher", "Plain"\)/);
    await expect(loadCliConfig(vault.root, {}, args("--max-steps", "0"))).rejects.toThrow(/--max-steps/);
  });

  it("reads data.json from a custom config folder (--config-dir or KRYPTON_CONFIG_DIR)", async () => {
    await vault.write(".config-x/plugins/krypton/data.json", JSON.stringify({ chatModel: "custom-dir" }));
    expect((await loadCliConfig(vault.root, {}, args("--config-dir", ".config-x"))).settings.chatModel).toBe("custom-dir");
    const viaEnv = await loadCliConfig(vault.root, { KRYPTON_CONFIG_DIR: ".config-x" }, args());
    expect(viaEnv.settings.chatModel).toBe("custom-dir");
    expect(viaEnv.configDir).toBe(".config-x");
    await expect(loadCliConfig(vault.root, {}, args("--config-dir", "../elsewhere"))).rejects.toThrow(/inside the vault/);
    // The vault itself is no config folder: its settings (exclude patterns) would quietly not apply.
    for (const root of ["", ".", "./", "a/.."]) {
      await expect(loadCliConfig(vault.root, {}, args("--config-dir", root))).rejects.toThrow(/a folder inside the vault/);
    }
    // Spelled another way, it is the same folder: found, and named as the read policy knows it.
    const spelled = await loadCliConfig(vault.root, {}, args("--config-dir", "./.config-x/"));
    expect(spelled.settings.chatModel).toBe("custom-dir");
    expect(spelled.configDir).toBe(".config-x");
  });

  it("lists the keys and token as secrets so output can mask them", async () => {
    const config = await loadCliConfig(vault.root, { GEMINI_API_KEY: "gem-secret", TAVILY_API_KEY: "tav-secret", KRYPTON_MCP_TOKEN: "tok-secret" }, args());
    expect(config.secrets.sort()).toEqual(["gem-secret", "tav-secret", "tok-secret"]);
  });
});
