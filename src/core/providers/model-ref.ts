import type { ChatModel } from "../ports/chat-model";
import type { Host } from "../ports/host";
import type { KryptonSettings, ProviderId } from "../settings";
import { createChatModelNamed, type ProviderOptions } from "./provider-factory";

/** A model named as `provider/model` ("ollama/llama3.1:8b", "gemini/gemini-2.5-flash"). */
export interface ModelRef {
  provider: ProviderId;
  model: string;
}

export const MODEL_PROVIDERS: readonly ProviderId[] = ["ollama", "gemini"];

/**
 * Parses `provider/model`, splitting at the FIRST slash only (Ollama names may contain slashes:
 * "ollama/hf.co/user/model:Q4"). Returns an error message instead of throwing, for validators.
 */
export function parseModelRef(text: string): ModelRef | { error: string } {
  const trimmed = text.trim();
  const slash = trimmed.indexOf("/");
  if (slash <= 0 || slash === trimmed.length - 1) {
    return { error: `"${trimmed}" is not a model reference: write provider/model, e.g. ollama/llama3.1:8b or gemini/gemini-2.5-flash` };
  }
  const provider = trimmed.slice(0, slash).toLowerCase();
  const model = trimmed.slice(slash + 1).trim();
  if (!(MODEL_PROVIDERS as readonly string[]).includes(provider)) {
    return { error: `Unknown provider "${provider}" in "${trimmed}": use ${MODEL_PROVIDERS.join(" or ")}` };
  }
  return { provider: provider as ProviderId, model };
}

export function formatModelRef(ref: ModelRef): string {
  return `${ref.provider}/${ref.model}`;
}

/** A chat model for a reference, with the user's provider settings (URL, key); null when unusable (no Gemini key). */
export function createChatModelFor(settings: KryptonSettings, host: Host, ref: ModelRef, options: ProviderOptions = {}): ChatModel | null {
  return createChatModelNamed({ ...settings, chatProvider: ref.provider }, host, ref.model, options);
}
