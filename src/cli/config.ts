import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { normalizeSettings, settingsProblems, settingsSecrets, type KryptonSettings, type ProviderId, type RetrievalMode } from "../core/settings";
import { isHttpUrl } from "../core/util/http-url";
import { listOption, parseIntStrict, stringOption, flag, type OptionSpecs, type ParsedArgs } from "./args";
import { DEFAULT_CONFIG_DIR } from "../node/fs-vault";
import { UsageError } from "./errors";

/**
 * The CLI's settings, in three layers, later wins:
 *   1. the vault's plugin data (<vault>/<configDir>/plugins/krypton/data.json), the same file Obsidian uses;
 *   2. environment variables (KRYPTON_*, GEMINI_API_KEY, TAVILY_API_KEY, MCP_PORT);
 *   3. command-line flags.
 * Keys belong in the environment, never on the command line (other users can read it in `ps`).
 */

/** Options every vault command accepts. */
export const CONFIG_OPTIONS: OptionSpecs = {
  "ollama-url": { type: "string", value: "URL", description: "Ollama base URL (default http://localhost:11434)" },
  "chat-provider": { type: "string", value: "ollama|gemini", description: "Provider for answers" },
  "chat-model": { type: "string", value: "NAME", description: "Chat model, e.g. llama3.1:8b" },
  "embedding-provider": { type: "string", value: "ollama|gemini|none", description: "Provider for embeddings" },
  "embedding-model": { type: "string", value: "NAME", description: "Embedding model, e.g. nomic-embed-text" },
  "no-embeddings": { type: "boolean", description: "Keyword-only index: no embedding calls" },
  "gemini-base-url": { type: "string", value: "URL", description: "Gemini API base URL (tests, proxies)" },
  "tavily-base-url": { type: "string", value: "URL", description: "Tavily API base URL (tests, proxies)" },
  timeout: { type: "string", value: "MS", description: "Per-request timeout in milliseconds" },
  exclude: { type: "string", value: "GLOB", repeatable: true, description: "Also skip these folders/globs (repeatable)" },
  "config-dir": { type: "string", value: "DIR", description: "The vault's Obsidian config folder (default .obsidian)" },
};

/** Where each layer came from, for `status` and for warnings. */
export interface CliConfig {
  settings: KryptonSettings;
  configDir: string;
  /** The data.json that was read, or null when there was none. */
  dataJsonPath: string | null;
  /** Problems that did not stop the command (a corrupt data.json). */
  warnings: string[];
  /** Values that must never be printed (API keys, the MCP token). */
  secrets: string[];
  /** Longest wait for a TCP connection to a model or web server, so an unreachable host fails fast. */
  connectTimeoutMs: number;
}

export type Env = Record<string, string | undefined>;

export function configDirFrom(env: Env, args: ParsedArgs): string {
  const dir = stringOption(args, "config-dir") ?? nonEmpty(env.KRYPTON_CONFIG_DIR) ?? DEFAULT_CONFIG_DIR;
  // "" or "." would make the vault itself the config folder: its data.json (exclude patterns) would quietly not apply.
  const normalized = path.posix.normalize(dir.replace(/\\/g, "/")).replace(/\/+$/, "");
  if (path.isAbsolute(dir) || dir.split(/[\\/]/).includes("..") || normalized === "." || normalized === "") {
    throw new UsageError(`the config folder must be a folder inside the vault, got "${dir}"`);
  }
  // One spelling ("./.obsidian/" is ".obsidian"), as the read policy compares note paths with it.
  return normalized;
}

export function pluginDataPath(vaultRoot: string, configDir: string): string {
  return path.join(vaultRoot, configDir, "plugins", "krypton", "data.json");
}

/** Reads all three layers. A missing data.json is normal; an unreadable or corrupt one is a warning, not a failure. */
export async function loadCliConfig(vaultRoot: string, env: Env, args: ParsedArgs): Promise<CliConfig> {
  const configDir = configDirFrom(env, args);
  const file = pluginDataPath(vaultRoot, configDir);
  const warnings: string[] = [];
  let pluginData: unknown = undefined;
  let dataJsonPath: string | null = null;
  try {
    const text = await readFile(file, "utf8");
    dataJsonPath = file;
    try {
      pluginData = JSON.parse(text) as unknown;
      for (const problem of settingsProblems(pluginData)) warnings.push(`in ${file}: ${problem}`);
    } catch {
      warnings.push(`ignoring ${file}: it is not valid JSON (using defaults)`);
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") warnings.push(`cannot read ${file} (${code ?? "error"}): using defaults`);
  }
  const settings = resolveSettings(pluginData, env, args);
  return {
    settings,
    configDir,
    dataJsonPath,
    warnings,
    secrets: settingsSecrets(settings),
    connectTimeoutMs: connectTimeoutFrom(env),
  };
}

/** The pure part of loadCliConfig: plugin data, then environment, then flags. */
export function resolveSettings(pluginData: unknown, env: Env, args: ParsedArgs): KryptonSettings {
  const settings = normalizeSettings(pluginData);
  applyEnv(settings, env);
  applyFlags(settings, args);
  return settings;
}

function applyEnv(s: KryptonSettings, env: Env): void {
  const get = (name: string) => nonEmpty(env[name]);
  const url = (name: string) => {
    const v = get(name);
    return v === undefined ? undefined : checkUrl(v, name);
  };
  s.ollamaUrl = url("KRYPTON_OLLAMA_URL") ?? s.ollamaUrl;
  s.geminiBaseUrl = url("KRYPTON_GEMINI_BASE_URL") ?? s.geminiBaseUrl;
  s.tavilyBaseUrl = url("KRYPTON_TAVILY_BASE_URL") ?? s.tavilyBaseUrl;
  const chatProvider = get("KRYPTON_CHAT_PROVIDER");
  if (chatProvider !== undefined) s.chatProvider = checkProvider(chatProvider, "KRYPTON_CHAT_PROVIDER");
  s.chatModel = get("KRYPTON_CHAT_MODEL") ?? s.chatModel;
  const embeddingProvider = get("KRYPTON_EMBEDDING_PROVIDER");
  if (embeddingProvider !== undefined) s.embeddingProvider = checkEmbeddingProvider(embeddingProvider, "KRYPTON_EMBEDDING_PROVIDER");
  s.embeddingModel = get("KRYPTON_EMBEDDING_MODEL") ?? s.embeddingModel;
  s.geminiApiKey = get("KRYPTON_GEMINI_API_KEY") ?? get("GEMINI_API_KEY") ?? s.geminiApiKey;
  s.tavilyApiKey = get("KRYPTON_TAVILY_API_KEY") ?? get("TAVILY_API_KEY") ?? s.tavilyApiKey;
  const mode = get("KRYPTON_MODE");
  if (mode !== undefined) s.defaultMode = checkMode(mode, "KRYPTON_MODE");
  const timeout = get("KRYPTON_REQUEST_TIMEOUT_MS");
  if (timeout !== undefined) s.requestTimeoutMs = parseIntStrict(timeout, "KRYPTON_REQUEST_TIMEOUT_MS", 1, 3_600_000);
  const maxContext = get("KRYPTON_OLLAMA_MAX_CONTEXT");
  if (maxContext !== undefined) s.ollamaMaxContext = parseIntStrict(maxContext, "KRYPTON_OLLAMA_MAX_CONTEXT", 512, 1_048_576);
  s.newNoteFolder = get("KRYPTON_NEW_NOTE_FOLDER") ?? s.newNoteFolder;
  const port = get("KRYPTON_MCP_PORT") ?? get("MCP_PORT");
  if (port !== undefined) s.mcpPort = parseIntStrict(port, env.KRYPTON_MCP_PORT ? "KRYPTON_MCP_PORT" : "MCP_PORT", 1, 65_535);
  s.mcpToken = get("KRYPTON_MCP_TOKEN") ?? s.mcpToken;
  s.mcpServers = s.mcpServers.map((server) => ({
    ...server,
    headers: fillFromEnv(server.name, server.headers, env),
    env: fillFromEnv(server.name, server.env, env),
  }));
}

/**
 * MCP servers' header and env values that Obsidian keeps in its secret storage are empty in data.json;
 * the CLI takes them from KRYPTON_MCP_<SERVER>_<NAME> (upper case, other characters as "_"), e.g.
 * KRYPTON_MCP_GITHUB_AUTHORIZATION="Bearer ..." or KRYPTON_MCP_GITHUB_GITHUB_PERSONAL_ACCESS_TOKEN=...
 */
export function mcpSecretVariable(server: string, key: string): string {
  const part = (s: string) => s.toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_+|_+$/g, "");
  return `KRYPTON_MCP_${part(server)}_${part(key)}`;
}

function fillFromEnv(server: string, values: Record<string, string>, env: Env): Record<string, string> {
  const out = { ...values };
  for (const [key, value] of Object.entries(values)) {
    const fromEnv = nonEmpty(env[mcpSecretVariable(server, key)]);
    if (fromEnv !== undefined || value === "") out[key] = fromEnv ?? "";
  }
  return out;
}

function applyFlags(s: KryptonSettings, args: ParsedArgs): void {
  const str = (name: string) => stringOption(args, name);
  const url = (name: string) => {
    const v = str(name);
    return v === undefined ? undefined : checkUrl(v, `--${name}`);
  };
  s.ollamaUrl = url("ollama-url") ?? s.ollamaUrl;
  s.geminiBaseUrl = url("gemini-base-url") ?? s.geminiBaseUrl;
  s.tavilyBaseUrl = url("tavily-base-url") ?? s.tavilyBaseUrl;
  const chatProvider = str("chat-provider");
  if (chatProvider !== undefined) s.chatProvider = checkProvider(chatProvider, "--chat-provider");
  s.chatModel = nonEmpty(str("chat-model")) ?? s.chatModel;
  const embeddingProvider = str("embedding-provider");
  if (embeddingProvider !== undefined) s.embeddingProvider = checkEmbeddingProvider(embeddingProvider, "--embedding-provider");
  s.embeddingModel = nonEmpty(str("embedding-model")) ?? s.embeddingModel;
  if (flag(args, "no-embeddings")) s.embeddingProvider = "none";
  const timeout = str("timeout");
  if (timeout !== undefined) s.requestTimeoutMs = parseIntStrict(timeout, "--timeout", 1, 3_600_000);
  const mode = str("mode");
  if (mode !== undefined) s.defaultMode = checkMode(mode, "--mode");
  const folder = str("folder");
  if (folder !== undefined) s.newNoteFolder = folder;
  if (flag(args, "no-agents")) s.agentsEnabled = false;
  const preset = str("preset");
  if (preset !== undefined) {
    if (!s.agentPresets.some((p) => p.name === preset)) {
      const known = s.agentPresets.map((p) => `"${p.name}"`).join(", ");
      throw new UsageError(`--preset: no agent preset named "${preset}" (${known ? `saved presets: ${known}` : "no presets are saved; add them in Krypton's settings"})`);
    }
    s.agentPreset = preset;
  }
  const maxSteps = str("max-steps");
  if (maxSteps !== undefined) s.agentMaxSteps = parseIntStrict(maxSteps, "--max-steps", 1, 50);
  const port = str("port");
  // 0 lets the system pick a free port (the URL printed on start names it).
  if (port !== undefined) s.mcpPort = parseIntStrict(port, "--port", 0, 65_535);
  const token = str("token");
  if (token !== undefined) s.mcpToken = token;
  const excludes = listOption(args, "exclude");
  if (excludes.length > 0) s.excludePatterns = [...s.excludePatterns, ...excludes];
}

const MODES: readonly RetrievalMode[] = ["none", "rag", "web", "hybrid"];
const PROVIDERS: readonly ProviderId[] = ["ollama", "gemini"];

export function checkMode(value: string, source: string): RetrievalMode {
  const v = value.trim().toLowerCase();
  if ((MODES as readonly string[]).includes(v)) return v as RetrievalMode;
  throw new UsageError(`${source} must be one of ${MODES.join(", ")}, got "${value}"`);
}

function checkProvider(value: string, source: string): ProviderId {
  const v = value.trim().toLowerCase();
  if ((PROVIDERS as readonly string[]).includes(v)) return v as ProviderId;
  throw new UsageError(`${source} must be one of ${PROVIDERS.join(", ")}, got "${value}"`);
}

function checkEmbeddingProvider(value: string, source: string): ProviderId | "none" {
  const v = value.trim().toLowerCase();
  if (v === "none") return "none";
  if ((PROVIDERS as readonly string[]).includes(v)) return v as ProviderId;
  throw new UsageError(`${source} must be one of ${PROVIDERS.join(", ")}, none, got "${value}"`);
}

function checkUrl(value: string, source: string): string {
  if (!isHttpUrl(value)) throw new UsageError(`${source} must be an http(s) URL, got "${value}"`);
  return value.trim().replace(/\/+$/, "");
}

const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;

function connectTimeoutFrom(env: Env): number {
  const raw = nonEmpty(env.KRYPTON_CONNECT_TIMEOUT_MS);
  return raw === undefined ? DEFAULT_CONNECT_TIMEOUT_MS : parseIntStrict(raw, "KRYPTON_CONNECT_TIMEOUT_MS", 1, 600_000);
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === "" ? undefined : v;
}
