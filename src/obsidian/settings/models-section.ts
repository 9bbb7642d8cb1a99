import { Notice, Setting } from "obsidian";
import { DEFAULT_GEMINI_EMBEDDING_MODEL } from "../../core/providers/gemini/gemini-embedder";
import { DEFAULT_SETTINGS, type ProviderId } from "../../core/settings";
import { connectionTestSetting, heading, modelSetting, numberSetting, secretSetting, urlSetting, type SectionContext } from "./setting-controls";

const PROVIDERS: Record<ProviderId, string> = { ollama: "Ollama (local)", gemini: "Gemini (Google)" };

/** What a provider switch selects when the current model name belongs to the other provider. */
const DEFAULT_MODELS: Record<"chat" | "embedding", Record<ProviderId, string>> = {
  chat: { ollama: DEFAULT_SETTINGS.chatModel, gemini: "gemini-2.5-flash" },
  embedding: { ollama: DEFAULT_SETTINGS.embeddingModel, gemini: DEFAULT_GEMINI_EMBEDDING_MODEL },
};

/** Gemini's model names ("gemini-2.5-flash", "text-embedding-004") never name an Ollama model, and vice versa. */
function modelFits(provider: ProviderId, model: string): boolean {
  const geminiName = /^(models\/)?(gemini-|text-embedding-|embedding-)/i.test(model.trim());
  return model.trim() !== "" && (provider === "gemini") === geminiName;
}

/** The model to save with a provider switch, so "llama3.1:8b" is never sent to Gemini (or the reverse). */
export function modelForProvider(purpose: "chat" | "embedding", provider: ProviderId, current: string): string {
  return modelFits(provider, current) ? current : DEFAULT_MODELS[purpose][provider];
}

/** Models: chat and embedding provider and model, Ollama URL, Gemini key, connection tests. */
export function renderModelsSection(ctx: SectionContext): void {
  const s = ctx.services.settings();
  heading(ctx, "Models", "Ollama runs on your computer; Gemini sends your questions and note excerpts to Google.");

  new Setting(ctx.containerEl)
    .setName("Chat provider")
    .setDesc("Who writes the answers.")
    .addDropdown((d) =>
      d
        .addOptions(PROVIDERS)
        .setValue(s.chatProvider)
        .onChange(async (value) => {
          const chatProvider = value as ProviderId;
          await ctx.services.saveSettings({ chatProvider, chatModel: modelForProvider("chat", chatProvider, ctx.services.settings().chatModel) });
          ctx.refresh();
        }),
    );
  modelSetting(ctx, {
    name: "Chat model",
    desc: s.chatProvider === "ollama" ? "A model pulled into Ollama, e.g. llama3.1:8b." : "A Gemini model, e.g. gemini-2.5-flash.",
    provider: s.chatProvider,
    purpose: "chat",
    current: s.chatModel,
    save: (chatModel) => ctx.services.saveSettings({ chatModel }),
  });

  new Setting(ctx.containerEl)
    .setName("Embedding provider")
    .setDesc("Turns notes into vectors for meaning-based search. With none, search uses keywords only.")
    .addDropdown((d) =>
      d
        .addOptions({ ...PROVIDERS, none: "None (keyword search only)" })
        .setValue(s.embeddingProvider)
        .onChange(async (value) => {
          const embeddingProvider = value as ProviderId | "none";
          const current = ctx.services.settings().embeddingModel;
          const embeddingModel = embeddingProvider === "none" ? current : modelForProvider("embedding", embeddingProvider, current);
          await ctx.services.saveSettings({ embeddingProvider, embeddingModel });
          new Notice("Krypton: the embedding model changed, so your notes will be embedded again.");
          ctx.refresh();
        }),
    );
  if (s.embeddingProvider !== "none") {
    modelSetting(ctx, {
      name: "Embedding model",
      desc: "Changing it embeds every note again (this can take a while on a large vault).",
      provider: s.embeddingProvider,
      purpose: "embedding",
      current: s.embeddingModel,
      save: async (embeddingModel) => {
        await ctx.services.saveSettings({ embeddingModel });
        new Notice("Krypton: the embedding model changed, so your notes will be embedded again.");
      },
    });
  }

  urlSetting(ctx, "ollamaUrl", "Ollama URL", "Where Ollama listens.", DEFAULT_SETTINGS.ollamaUrl);
  connectionTestSetting(ctx, "ollama", "Ollama connection");
  numberSetting(
    ctx,
    "ollamaMaxContext",
    "Ollama context limit (tokens)",
    "The largest context window Krypton asks Ollama for; each request gets what its prompt needs, up to this and the model's own maximum. Larger costs memory.",
    { min: 2048, max: 1_048_576, integer: true },
  );
  secretSetting(ctx, "geminiApiKey", "Gemini API key", "From Google AI Studio.");
  connectionTestSetting(ctx, "gemini", "Gemini connection");
  numberSetting(ctx, "requestTimeoutMs", "Request timeout (ms)", "How long to wait for a model before giving up.", {
    min: 1000,
    max: 600_000,
    integer: true,
  });
}

/** Web search: Tavily key and how many results. */
export function renderWebSection(ctx: SectionContext): void {
  heading(ctx, "Web search", "Web and hybrid modes send your question to Tavily.");
  secretSetting(ctx, "tavilyApiKey", "Tavily API key", "From app.tavily.com.");
  numberSetting(ctx, "webMaxResults", "Web results", "How many web results go into the answer.", { min: 1, max: 20, integer: true });
  connectionTestSetting(ctx, "tavily", "Tavily connection");
}
