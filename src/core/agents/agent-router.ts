import type { ChatMessage, ChatModel } from "../ports/chat-model";
import type { Logger } from "../ports/logger";
import { isAbortError } from "../providers/provider-error";
import type { KryptonSettings } from "../settings";
import { classifyIntent, CLASSIFIER_HISTORY } from "./intent-classifier";
import { detectIntent, type DetectedIntent } from "./intent-patterns";
import { errorMessage } from "../util/errors";

export interface IntentRouterDeps {
  settings: () => KryptonSettings;
  chatModel: () => ChatModel | null;
  logger: Logger;
}

/**
 * Resolves a message's intent once and shares it between the agents, which are tried one after another
 * with the same message: the LLM classifier (when enabled) costs one model call per message, not one
 * per agent.
 *
 * With the classifier on, its valid answer decides (including "chat": no agent); an invalid answer or a
 * failed call falls back to the patterns. With it off, only the patterns decide.
 */
export class IntentRouter {
  private last: { key: string; result: Promise<DetectedIntent | null> } | null = null;

  constructor(private readonly deps: IntentRouterDeps) {}

  resolve(message: string, history: ChatMessage[], signal?: AbortSignal): Promise<DetectedIntent | null> {
    const useClassifier = this.deps.settings().intentClassifier && this.deps.chatModel() !== null;
    const key = cacheKey(message, history, useClassifier);
    if (this.last?.key === key) return this.last.result;
    const result = useClassifier ? this.classify(message, history, signal) : Promise.resolve(this.patterns(message));
    this.last = { key, result };
    // A stop or failure must not stick to the next identical message.
    result.catch(() => {
      if (this.last?.result === result) this.last = null;
    });
    return result;
  }

  private patterns(message: string): DetectedIntent | null {
    const intent = detectIntent(message);
    if (intent) this.deps.logger.debug("agents: intent from patterns", { intent: intent.intent });
    return intent;
  }

  private async classify(message: string, history: ChatMessage[], signal?: AbortSignal): Promise<DetectedIntent | null> {
    const model = this.deps.chatModel();
    if (!model) return this.patterns(message);
    try {
      const verdict = await classifyIntent(model, message, history, signal);
      if (verdict.kind === "intent") {
        this.deps.logger.debug("agents: intent from classifier", { intent: verdict.intent.intent });
        return verdict.intent;
      }
      if (verdict.kind === "chat") return null;
      this.deps.logger.info("agents: classifier answer unusable, using patterns", { reason: verdict.reason });
    } catch (err) {
      if (isAbortError(err) || signal?.aborted) throw err;
      this.deps.logger.warn("agents: intent classifier failed, using patterns", { error: errorMessage(err) });
    }
    return this.patterns(message);
  }
}

function cacheKey(message: string, history: ChatMessage[], classifier: boolean): string {
  const recent = classifier ? history.slice(-CLASSIFIER_HISTORY).map((m) => `${m.role}:${m.content}`) : [];
  return JSON.stringify([classifier, message, recent]);
}
