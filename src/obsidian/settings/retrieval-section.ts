import { Setting } from "obsidian";
import type { RerankMode, RetrievalMode } from "../../core/settings";
import { heading, modelNameText, numberSetting, toggleSetting, type SectionContext } from "./setting-controls";

const MODES: Record<RetrievalMode, string> = {
  none: "None (conversation only)",
  rag: "Notes",
  web: "Web",
  hybrid: "Notes and web",
};

const RERANK: Record<RerankMode, string> = {
  off: "Off",
  "chat-model": "Chat model scores each excerpt",
  "reranker-model": "Dedicated reranker model",
};

/** Retrieval: default mode and the knobs that decide which excerpts reach the prompt. */
export function renderRetrievalSection(ctx: SectionContext): void {
  const s = ctx.services.settings();
  heading(ctx, "Retrieval", "Options marked \"extra model calls\" make answers slower.");
  new Setting(ctx.containerEl)
    .setName("Default mode")
    .setDesc("Where new chats look for answers.")
    .addDropdown((d) =>
      d
        .addOptions(MODES)
        .setValue(s.defaultMode)
        .onChange((value) => ctx.services.saveSettings({ defaultMode: value as RetrievalMode })),
    );
  numberSetting(ctx, "similarityThreshold", "Similarity threshold", "Excerpts scoring below this (0 to 1) are left out.", { min: 0, max: 1 });
  numberSetting(ctx, "semanticWeight", "Meaning against keywords", "How much search weighs meaning (embeddings) against keywords, 0 to 1: 0 ranks by keywords only, 1 by meaning only.", { min: 0, max: 1 });
  numberSetting(ctx, "maxK", "Excerpts retrieved", "How many excerpts are retrieved before filtering.", { min: 1, max: 100, integer: true });
  numberSetting(ctx, "displayK", "Excerpts in the prompt", "How many of them the model sees.", { min: 1, max: 50, integer: true });
  toggleSetting(ctx, "queryRewrite", "Rewrite the question", "Extra model calls: turns follow-up questions into standalone searches.");
  toggleSetting(ctx, "multiQuery", "Multiple searches", "Extra model calls: searches with several rewrites and merges the results.", () => ctx.refresh());
  if (s.multiQuery) numberSetting(ctx, "multiQueryCount", "Rewrites", "How many rewrites to search with.", { min: 2, max: 6, integer: true });
  new Setting(ctx.containerEl)
    .setName("Rerank")
    .setDesc("Extra model calls: reorders excerpts by relevance before the prompt.")
    .addDropdown((d) =>
      d
        .addOptions(RERANK)
        .setValue(s.rerank)
        .onChange(async (value) => {
          await ctx.services.saveSettings({ rerank: value as RerankMode });
          ctx.refresh();
        }),
    );
  if (s.rerank === "reranker-model") {
    const setting = new Setting(ctx.containerEl).setName("Reranker model").setDesc("A model of the chat provider that scores the excerpts (a small one is enough).");
    const noteEl = setting.descEl.createDiv({ cls: "krypton-model-note" });
    setting.addText((t) => modelNameText(t, noteEl, "", s.rerankerModel, (model) => ctx.services.saveSettings({ rerankerModel: model })));
  }
}

/** Memory: how much of a conversation goes into each prompt. */
export function renderMemorySection(ctx: SectionContext): void {
  heading(ctx, "Memory", "How much of the conversation the model sees, newest first.");
  numberSetting(ctx, "memoryMaxMessages", "Messages on desktop", "Most recent messages sent with each question.", { min: 0, max: 500, integer: true });
  numberSetting(ctx, "memoryMaxChars", "Characters on desktop", "Upper bound on the history's length.", { min: 0, max: 500_000, integer: true });
  numberSetting(ctx, "mobileMemoryMaxMessages", "Messages on mobile", "Smaller on phones to keep requests light.", { min: 0, max: 500, integer: true });
  numberSetting(ctx, "mobileMemoryMaxChars", "Characters on mobile", "Upper bound on the history's length on phones.", { min: 0, max: 500_000, integer: true });
}
