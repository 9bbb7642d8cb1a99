import { normalizeServers, serverSecrets, type McpServerConfig } from "./mcp-client/server-config";

/** All user settings. Stored by the plugin in data.json; the CLI reads the same file (see src/cli/config.ts). */
export type ProviderId = "ollama" | "gemini";
export type RetrievalMode = "none" | "rag" | "web" | "hybrid";
export type RerankMode = "off" | "chat-model" | "reranker-model";

/** A saved agent set-up: who it is, which model thinks, which tools it may use. */
export interface AgentPreset {
  name: string;
  /** System prompt; empty: Krypton's default persona. */
  persona: string;
  /** "provider/model" (split at the first "/"), e.g. "ollama/llama3.1:8b"; empty: the chat model. */
  model: string;
  /** Tool names ("search_notes", "server:tool"); empty: every available tool. */
  tools: string[];
}

export interface KryptonSettings {
  // Providers
  ollamaUrl: string;
  /** Kept in Obsidian's secret storage where available; then this field stays empty in data.json. */
  geminiApiKey: string;
  /** Overridable for tests and proxies. */
  geminiBaseUrl: string;
  tavilyApiKey: string;
  tavilyBaseUrl: string;
  chatProvider: ProviderId;
  chatModel: string;
  /** "none" builds a keyword-only index. */
  embeddingProvider: ProviderId | "none";
  embeddingModel: string;
  /** Per request; streaming chat counts it as the longest silence between tokens. */
  requestTimeoutMs: number;
  /**
   * Largest context window (tokens) Krypton asks Ollama for. Each request gets `num_ctx` sized to its
   * prompt (from 4096 up, never above the model's own maximum or this); more costs memory on the machine.
   */
  ollamaMaxContext: number;

  // Index
  /** Folders or globs to skip ("Templates/", "**\/*.excalidraw.md"). Config folder and .krypton are always skipped. */
  excludePatterns: string[];
  /** Upper bound on a chunk's text length in characters. */
  chunkMaxChars: number;

  // Retrieval
  defaultMode: RetrievalMode;
  similarityThreshold: number;
  /**
   * Share of meaning (vectors) against keywords in hybrid search, 0..1 (0.7 = the seed's "0.7 × meaning +
   * 0.3 × keywords"; 0 ranks by keywords only, 1 by meaning only). Both sides are calibrated per query first.
   */
  semanticWeight: number;
  maxK: number;
  displayK: number;
  queryRewrite: boolean;
  multiQuery: boolean;
  multiQueryCount: number;
  rerank: RerankMode;
  rerankerModel: string;
  webMaxResults: number;

  // Conversation memory (what goes into the prompt, newest first)
  memoryMaxMessages: number;
  memoryMaxChars: number;
  mobileMemoryMaxMessages: number;
  mobileMemoryMaxChars: number;

  // Agents
  agentsEnabled: boolean;
  intentClassifier: boolean;
  newNoteFolder: string;
  openCreatedNote: boolean;
  /** Where Krypton's flashcard decks go (one note per deck). */
  flashcardsFolder: string;
  /** Where study goal notes go (one note per goal). */
  studyGoalsFolder: string;

  // Agent mode (tool-using loop)
  /** The chat's "Agent" toggle: requests the fixed agents do not recognise go to the tool loop. */
  agentMode: boolean;
  /** Model calls per turn before the agent must answer. */
  agentMaxSteps: number;
  /** Wall-clock cap for one agent turn. */
  agentTimeoutMs: number;
  agentPresets: AgentPreset[];
  /** Name of the preset in use; empty: defaults (chat model, every tool, default persona). */
  agentPreset: string;

  // MCP bridge (desktop only)
  mcpEnabled: boolean;
  mcpPort: number;
  /** Generated on first enable; never logged. */
  mcpToken: string;
  mcpAllowedOrigins: string[];

  // MCP servers Krypton uses as a client (their tools join the agent's)
  /** The user's servers. Header and env values are kept in Obsidian's secret storage where available. */
  mcpServers: McpServerConfig[];
  /** Longest wait for one remote tool call; the server is told to cancel it after that. */
  mcpToolTimeoutMs: number;
}

export const DEFAULT_SETTINGS: KryptonSettings = {
  ollamaUrl: "http://localhost:11434",
  geminiApiKey: "",
  geminiBaseUrl: "https://generativelanguage.googleapis.com",
  tavilyApiKey: "",
  tavilyBaseUrl: "https://api.tavily.com",
  chatProvider: "ollama",
  chatModel: "llama3.1:8b",
  embeddingProvider: "ollama",
  embeddingModel: "nomic-embed-text",
  requestTimeoutMs: 60_000,
  ollamaMaxContext: 16_384,

  excludePatterns: [],
  chunkMaxChars: 1500,

  defaultMode: "rag",
  similarityThreshold: 0.1,
  semanticWeight: 0.7,
  maxK: 10,
  displayK: 5,
  queryRewrite: false,
  multiQuery: false,
  multiQueryCount: 3,
  rerank: "off",
  rerankerModel: "",
  webMaxResults: 5,

  memoryMaxMessages: 50,
  memoryMaxChars: 16_000,
  mobileMemoryMaxMessages: 15,
  mobileMemoryMaxChars: 6_000,

  agentsEnabled: true,
  intentClassifier: false,
  newNoteFolder: "Krypton",
  openCreatedNote: true,
  flashcardsFolder: "Flashcards",
  studyGoalsFolder: "Study goals",

  agentMode: false,
  agentMaxSteps: 8,
  agentTimeoutMs: 180_000,
  agentPresets: [],
  agentPreset: "",

  mcpEnabled: false,
  mcpPort: 27_123,
  mcpToken: "",
  mcpAllowedOrigins: [],

  mcpServers: [],
  mcpToolTimeoutMs: 60_000,
};

/** Settings that take one of a few words; anything else in data.json is refused (and named by settingsProblems). */
const ALLOWED_VALUES: Partial<Record<keyof KryptonSettings, readonly string[]>> = {
  chatProvider: ["ollama", "gemini"],
  embeddingProvider: ["ollama", "gemini", "none"],
  defaultMode: ["none", "rag", "web", "hybrid"],
  rerank: ["off", "chat-model", "reranker-model"],
};

/** The settings fields that hold secrets (the plugin keeps them in Obsidian's keychain: secret-store.ts). */
export const SECRET_FIELDS = ["geminiApiKey", "tavilyApiKey", "mcpToken"] as const;

/**
 * Every secret the settings hold: the SECRET_FIELDS (Gemini and Tavily keys, the MCP bridge token) and the
 * header and env values of the user's MCP servers. The one list every redaction uses (see util/redact.ts).
 */
export function settingsSecrets(settings: Pick<KryptonSettings, (typeof SECRET_FIELDS)[number] | "mcpServers">): string[] {
  return SECRET_FIELDS.map((f) => settings[f].trim()).filter((s) => s.length > 0).concat(serverSecrets(settings.mcpServers));
}

/**
 * What normalizeSettings had to replace in a hand-edited data.json, in words a user can act on:
 * `chatProvider is "olama"; allowed: ollama, gemini (using "ollama")`. Empty when everything was usable.
 */
export function settingsProblems(raw: unknown): string[] {
  if (!raw || typeof raw !== "object") return [];
  const src = raw as Record<string, unknown>;
  const problems: string[] = [];
  for (const [key, allowed] of Object.entries(ALLOWED_VALUES) as [keyof KryptonSettings, readonly string[]][]) {
    const val = src[key];
    if (val === undefined || (typeof val === "string" && allowed.includes(val))) continue;
    problems.push(`${key} is ${JSON.stringify(val)}; allowed: ${allowed.join(", ")} (using ${JSON.stringify(DEFAULT_SETTINGS[key])})`);
  }
  return problems;
}

/** Fills missing or mistyped fields with defaults, so an old or hand-edited data.json never breaks start-up. */
export function normalizeSettings(raw: unknown): KryptonSettings {
  const out: KryptonSettings = { ...DEFAULT_SETTINGS, excludePatterns: [], mcpAllowedOrigins: [], mcpServers: [], agentPresets: [] };
  if (!raw || typeof raw !== "object") return out;
  const src = raw as Record<string, unknown>;
  out.mcpServers = normalizeServers(src.mcpServers);
  for (const key of Object.keys(DEFAULT_SETTINGS) as (keyof KryptonSettings)[]) {
    if (key === "mcpServers") continue;
    const def = DEFAULT_SETTINGS[key];
    const val = src[key];
    if (val === undefined) continue;
    if (key === "agentPresets") {
      out.agentPresets = normalizePresets(val);
    } else if (Array.isArray(def)) {
      if (Array.isArray(val) && val.every((v) => typeof v === "string")) (out as unknown as Record<string, unknown>)[key] = [...val];
    } else if (ALLOWED_VALUES[key] && !ALLOWED_VALUES[key].includes(val as string)) {
      continue; // an unknown provider or mode: the default (settingsProblems says so)
    } else if (typeof val === typeof def) {
      (out as unknown as Record<string, unknown>)[key] = val;
    }
  }
  return out;
}

/** Keeps well-formed presets (a name, string fields, string tool names); drops the rest. */
function normalizePresets(raw: unknown): AgentPreset[] {
  if (!Array.isArray(raw)) return [];
  const out: AgentPreset[] = [];
  for (const item of raw) {
    if (!item || typeof item !== "object") continue;
    const p = item as Record<string, unknown>;
    if (typeof p.name !== "string" || !p.name.trim()) continue;
    out.push({
      name: p.name.trim(),
      persona: typeof p.persona === "string" ? p.persona : "",
      model: typeof p.model === "string" ? p.model.trim() : "",
      tools: Array.isArray(p.tools) ? p.tools.filter((t): t is string => typeof t === "string") : [],
    });
  }
  return out;
}
