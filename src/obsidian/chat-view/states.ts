// The view's states in plain words instead of blank panes: no model configured, index still building,
// provider unreachable (as error hints), and an empty conversation.
import { setIcon } from "obsidian";
import type { IndexStatus } from "../../core/indexing/index-status";
import type { KryptonSettings } from "../../core/settings";

/** What the user can do about a failed answer, by error code (ProviderErrorKind and chat codes). */
export function errorHint(code: string): string | null {
  switch (code) {
    case "unreachable":
      return "Krypton could not reach the model. If you use Ollama, check that it is running (ollama serve) and that the address in settings is right.";
    case "timeout":
      return "The model took too long to answer. Try again, pick a smaller model, or raise the request timeout in settings.";
    case "unauthorized":
      return "The provider refused the API key. Check the key in settings.";
    case "rate-limited":
      return "The provider is limiting requests right now. Wait a moment, then retry.";
    case "model-missing":
      return "The model is not installed. Pull it (ollama pull <model>) or choose another model in settings.";
    case "cors":
      return "Ollama refused Obsidian's origin. Set OLLAMA_ORIGINS=app://obsidian.md* and restart Ollama.";
    case "not-configured":
    case "no-model":
      return "Choose a chat model in settings.";
    case "server":
      return "The provider had an internal error. Retry in a moment.";
    case "context-too-long":
      return "The prompt does not fit the model's context window. With Ollama, raise Ollama context limit in settings (Models) if the machine has the memory; or start a new conversation, or ask about less text at once.";
    default:
      return null;
  }
}

/** Errors the settings tab can fix (address, key, model). */
export function settingsCanFix(code: string): boolean {
  return ["unreachable", "unauthorized", "model-missing", "cors", "not-configured", "no-model", "timeout", "context-too-long"].includes(code);
}

/** The banner line for an index that is not ready yet, or null when it is ready. */
export function indexBannerText(status: IndexStatus): string | null {
  switch (status.state) {
    case "loading":
      return "Loading the index of your notes…";
    case "indexing": {
      const p = status.progress;
      if (!p || p.total === 0) return "Indexing your notes…";
      const what = p.phase === "embedding" ? "Embedding" : p.phase === "saving" ? "Saving" : "Indexing";
      return `${what} your notes: ${p.done} of ${p.total}. Answers use what is indexed so far.`;
    }
    case "error":
      return "The index of your notes is unavailable; answers in Notes mode cannot use them. See Krypton's settings.";
    default:
      return null;
  }
}

export function renderIndexBanner(el: HTMLElement, status: IndexStatus): void {
  el.empty();
  const text = indexBannerText(status);
  el.toggleClass("is-hidden", text === null);
  if (text === null) return;
  el.toggleClass("is-error", status.state === "error");
  el.createDiv({ cls: "krypton-banner-text", text });
  const p = status.progress;
  if (status.state === "indexing" && p && p.total > 0) {
    el.createEl("progress", { cls: "krypton-banner-progress", attr: { max: p.total, value: p.done, "aria-label": "Indexing progress" } });
  }
}

export function renderNoModelState(el: HTMLElement, settings: KryptonSettings, openSettings: () => void): void {
  const box = el.createDiv({ cls: "krypton-state krypton-state-no-model" });
  setIcon(box.createDiv({ cls: "krypton-state-icon" }), "bot-off");
  box.createDiv({ cls: "krypton-state-title", text: "No chat model configured" });
  const provider = settings.chatProvider === "gemini" ? "Gemini (add your API key)" : "Ollama (a local model such as llama3.1:8b)";
  box.createDiv({ cls: "krypton-state-text", text: `Choose a provider and a chat model in settings: ${provider}.` });
  const button = box.createEl("button", { cls: "mod-cta", text: "Open settings" });
  button.addEventListener("click", openSettings);
}

export function renderEmptyChatState(el: HTMLElement, examples: { label: string; text: string }[], hint: string, onPick: (text: string) => void): void {
  const box = el.createDiv({ cls: "krypton-state krypton-state-empty" });
  setIcon(box.createDiv({ cls: "krypton-state-icon" }), "messages-square");
  box.createDiv({ cls: "krypton-state-title", text: "Ask about your notes" });
  box.createDiv({ cls: "krypton-state-text", text: hint });
  const list = box.createDiv({ cls: "krypton-examples" });
  for (const ex of examples) {
    const b = list.createEl("button", { cls: "krypton-example", text: ex.label });
    b.addEventListener("click", () => onPick(ex.text));
  }
}
