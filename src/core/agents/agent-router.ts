import type { ChatMessage, ChatModel } from "../ports/chat-model";
import type { Logger } from "../ports/logger";
import { isAbortError } from "../providers/provider-error";
import type { KryptonSettings } from "../settings";
import { classifyIntent, CLASSIFIER_HISTORY } from "./intent-classifier";
import { detectIntent, type DetectedIntent, type RoutedIntent } from "./intent-patterns";
import { errorMessage } from "../util/errors";

export interface IntentRouterDeps {
  settings: () => KryptonSettings;
  chatModel: () => ChatModel | null;
  logger: Logger;
}

/** What decides a message: the classifier's intent, its "chat" (no agent), or each agent's own patterns. */
type Verdict = RoutedIntent | "chat" | "patterns";

/**
 * Resolves a message's intent once and shares it between the agents, which are tried one after another
 * with the same message: the LLM classifier (when enabled) costs one model call per message, not one
 * per agent. The study agents (quiz, flashcards, goals) ask it through intentFor, the note agents through
 * resolve.
 *
 * With the classifier on, its valid answer decides (including "chat": no agent); an invalid answer or a
 * failed call falls back to the patterns. With it off, only the patterns decide.
 */
export class IntentRouter {
  private last: { key: string; verdict: Promise<Verdict> } | null = null;

  constructor(private readonly deps: IntentRouterDeps) {}

  /** A note request (create, search, summarize), or null. */
  resolve(message: string, history: ChatMessage[], signal?: AbortSignal): Promise<DetectedIntent | null> {
    return this.intentFor(message, history, signal, (intent) => ("argument" in intent ? intent : null), () => this.patterns(message));
  }

  /**
   * What the message asks of one agent: when the classifier decided, its intent as `pick` takes it (null: not
   * this agent's, or chat); otherwise the agent's own `patterns`.
   */
  async intentFor<T>(message: string, history: ChatMessage[], signal: AbortSignal | undefined, pick: (intent: RoutedIntent) => T | null, patterns: () => T | null): Promise<T | null> {
    const verdict = await this.verdict(message, history, signal);
    if (verdict === "patterns") return patterns();
    return verdict === "chat" ? null : pick(verdict);
  }

  private verdict(message: string, history: ChatMessage[], signal?: AbortSignal): Promise<Verdict> {
    if (!this.deps.settings().intentClassifier || this.deps.chatModel() === null) return Promise.resolve("patterns");
    const key = cacheKey(message, history);
    if (this.last?.key === key) return this.last.verdict;
    const verdict = this.classify(message, history, signal);
    this.last = { key, verdict };
    // A stop or failure must not stick to the next identical message.
    verdict.catch(() => {
      if (this.last?.verdict === verdict) this.last = null;
    });
    return verdict;
  }

  private patterns(message: string): DetectedIntent | null {
    const intent = detectIntent(message);
    if (intent) this.deps.logger.debug("agents: intent from patterns", { intent: intent.intent });
    return intent;
  }

  private async classify(message: string, history: ChatMessage[], signal?: AbortSignal): Promise<Verdict> {
    const model = this.deps.chatModel();
    if (!model) return "patterns";
    try {
      const verdict = await classifyIntent(model, message, history, signal);
      if (verdict.kind === "intent") {
        this.deps.logger.debug("agents: intent from classifier", { intent: verdict.intent.intent });
        return verdict.intent;
      }
      if (verdict.kind === "chat") return "chat";
      this.deps.logger.info("agents: classifier answer unusable, using patterns", { reason: verdict.reason });
    } catch (err) {
      if (isAbortError(err) || signal?.aborted) throw err;
      this.deps.logger.warn("agents: intent classifier failed, using patterns", { error: errorMessage(err) });
    }
    return "patterns";
  }
}

function cacheKey(message: string, history: ChatMessage[]): string {
  return JSON.stringify([message, history.slice(-CLASSIFIER_HISTORY).map((m) => `${m.role}:${m.content}`)]);
}
