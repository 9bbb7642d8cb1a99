/**
 * The one chat pipeline (sidebar view, CLI `ask`/`chat`, commands): agents first, then retrieval,
 * prompt building and the streamed answer, with every turn saved in the conversation store.
 *
 * send() always ends with exactly one "done" event and never throws: failures become "notice" events
 * (a degraded part, the answer goes on) or an "error" event (no answer possible), in plain words.
 * Stop is the AbortSignal (the partial answer is saved with stopped: true, then "done"); a consumer that
 * merely stops iterating closes the HTTP request and the partial answer is saved the same way.
 */
import type { Agent, AgentResult } from "../agents/agent";
import type { AgentService } from "../agent-loop/agent-service";
import type { AgentStep } from "../agent-loop/agent-types";
import type { VaultIndexApi } from "../indexing/vault-index-api";
import type { ChatMessage, ChatModel } from "../ports/chat-model";
import type { Host } from "../ports/host";
import { ProviderError, isAbortError } from "../providers/provider-error";
import { chatModelUnavailableReason, createChatModelNamed } from "../providers/provider-factory";
import { redact } from "../providers/request-guard";
import type { KryptonSettings } from "../settings";
import { createWebSearch } from "../web/tavily-search";
import type { WebSearch } from "../web/web-search";
import type { ChatEvent, ChatServiceApi, SendOptions, Source } from "./chat-types";
import type { Conversation, ConversationStoreApi, StoredMessage } from "./conversation-types";
import { newId } from "./ids";
import { ConversationMemoryPolicy } from "./memory-policy";
import { buildPrompt, type ActiveNoteContext } from "./prompt-builder";
import { retrieve, type Notice } from "./retrieval";

export interface ChatServiceDeps {
  host: Host;
  settings: () => KryptonSettings;
  index: VaultIndexApi;
  chatModel: () => ChatModel | null;
  conversations: ConversationStoreApi;
  agents: () => Agent[];
  /** Web search; default: Tavily from settings through host.fetch. */
  webSearch?: () => WebSearch | null;
  /** Dedicated reranker for rerank "reranker-model"; default: settings.rerankerModel on the chat provider. */
  rerankModel?: () => ChatModel | null;
  /** Agent mode's tool loop (SendOptions.agent). */
  agentService?: AgentService;
}

/** How much of the open note goes into the prompt with "use current note". */
const ACTIVE_NOTE_CHARS = { desktop: 8000, mobile: 3000 };

class Stopped extends Error {}

export class ChatService implements ChatServiceApi {
  constructor(private readonly deps: ChatServiceDeps) {}

  async *send(message: string, options: SendOptions): AsyncIterable<ChatEvent> {
    const { host } = this.deps;
    const settings = this.deps.settings();
    const signal = options.signal;
    const answerId = newId("m", host.clock.now());
    let conversationId = options.conversationId ?? "";
    let answer = "";
    let sources: Source[] = [];
    const notices: Notice[] = [];

    let saved = false;
    const answerMessage = (extra: Partial<StoredMessage>, stopped: boolean): StoredMessage => ({
      id: answerId,
      role: "assistant",
      content: answer,
      createdAt: host.clock.now(),
      mode: options.mode,
      ...(sources.length ? { sources } : {}),
      ...(notices.length ? { notices: notices.map((n) => n.message) } : {}),
      ...(stopped ? { stopped: true } : {}),
      ...extra,
    });
    const finish = async function* (this: ChatService, extra: Partial<StoredMessage>, stopped: boolean): AsyncGenerator<ChatEvent> {
      saved = true;
      const saveError = conversationId ? await this.persist(conversationId, answerMessage(extra, stopped)) : null;
      if (saveError) yield { type: "notice", code: "save-failed", message: saveError };
      yield { type: "done", conversationId, messageId: answerId, answer, stopped };
    }.bind(this);

    if (!options.regenerate && !message.trim()) {
      yield { type: "error", code: "empty-question", message: "Type a question first.", retryable: false };
      yield { type: "done", conversationId, messageId: answerId, answer: "", stopped: false };
      return;
    }

    try {
      // 1. The conversation and the question.
      let question = message;
      let history: ChatMessage[];
      try {
        const opened = await this.openConversation(message, options);
        conversationId = opened.conversation.id;
        question = opened.question;
        history = opened.history;
        if (opened.notice) {
          notices.push(opened.notice);
          yield { type: "notice", ...opened.notice };
        }
      } catch (err) {
        yield { type: "error", code: "conversation", message: this.plain(err, settings), retryable: false };
        yield* finish({ error: this.plain(err, settings) }, false);
        return;
      }

      try {
        if (signal?.aborted) throw new Stopped();

        const policy = ConversationMemoryPolicy.fromSettings(settings, host.platform.mobile);
        const bounded = policy.select(history);

        // 2. Agents: first non-null result wins; a throwing agent counts as "not mine".
        const agentResult = await this.tryAgents(question, bounded, options);
        if (signal?.aborted) throw new Stopped();
        if (agentResult) {
          answer = agentResult.text;
          yield { type: "agent", result: agentResult };
          yield* finish({ agent: agentResult }, false);
          return;
        }

        // 2b. Agent mode: the tool loop answers what the fixed agents did not recognise.
        if (options.agent && this.deps.agentService) {
          const steps: AgentStep[] = [];
          const stepsPart = () => (steps.length ? { steps } : {});
          try {
            for await (const event of this.deps.agentService.answer(question, bounded, { conversationId, signal, confirm: options.confirm })) {
              if (event.type === "token") {
                answer += event.text;
                yield { type: "token", text: event.text };
              } else if (event.type === "retract") {
                answer = answer.slice(0, Math.max(0, answer.length - event.text.length));
                yield event;
              } else if (event.type === "step") {
                steps.push(event.step);
                yield event;
              } else if (event.type === "notice") {
                notices.push({ code: event.code, message: event.message });
                yield event;
              } else if (event.type === "done") {
                if (event.result.endReason === "stopped") {
                  yield* finish(stepsPart(), true);
                  return;
                }
                const usage = event.result.usage;
                if (usage.promptTokens || usage.completionTokens) yield { type: "usage", usage };
                yield* finish({ ...stepsPart(), ...(usage.promptTokens || usage.completionTokens ? { usage } : {}) }, false);
                return;
              }
            }
          } catch (err) {
            if (signal?.aborted || isAbortError(err)) {
              yield* finish(stepsPart(), true);
              return;
            }
            const pe = err instanceof ProviderError ? err : null;
            const text = this.plain(err, settings);
            yield { type: "error", code: pe?.kind ?? "agent", message: text, retryable: pe ? pe.retryable || pe.kind === "bad-response" : false };
            yield* finish({ ...stepsPart(), error: text }, false);
            return;
          }
        }

        // 3. A chat model, or a clear reason why there is none.
        const model = this.deps.chatModel();
        if (!model) {
          const reason = chatModelUnavailableReason(settings, host.platform.kind) ?? "No chat model is configured: choose one in Krypton's settings.";
          yield { type: "error", code: "not-configured", message: reason, retryable: false };
          yield* finish({ error: reason }, false);
          return;
        }

        // 4. Retrieval and the prompt.
        const retrieval = await retrieve(
          question,
          bounded,
          options.mode,
          {
            index: this.deps.index,
            webSearch: this.webSearch(settings),
            chatModel: model,
            rerankModel: this.rerankModel(settings),
            settings,
            logger: host.logger,
            hostKind: host.platform.kind,
          },
          signal,
        );
        for (const notice of retrieval.notices) {
          notices.push(notice);
          yield { type: "notice", ...notice };
        }
        let activeNote: ActiveNoteContext | undefined;
        if (options.useActiveNote && options.activeNotePath) {
          const read = await this.readActiveNote(options.activeNotePath);
          activeNote = read.note;
          if (read.notice) {
            notices.push(read.notice);
            yield { type: "notice", ...read.notice };
          }
        }
        const prompt = buildPrompt({
          question,
          history: bounded,
          mode: options.mode,
          notes: retrieval.notes,
          web: retrieval.web,
          activeNote,
        });
        sources = prompt.sources;
        yield { type: "sources", sources };
        if (signal?.aborted) throw new Stopped();

        // 5. The answer, streamed.
        try {
          for await (const text of model.stream({ messages: prompt.messages, signal })) {
            answer += text;
            yield { type: "token", text };
          }
        } catch (err) {
          if (signal?.aborted || isAbortError(err)) throw new Stopped();
          const pe = err instanceof ProviderError ? err : null;
          const text = this.plain(err, settings);
          yield { type: "error", code: pe?.kind ?? "model", message: text, retryable: pe ? pe.retryable || pe.kind === "bad-response" : false };
          yield* finish({ error: text }, false);
          return;
        }
        if (signal?.aborted) throw new Stopped();
        if (!answer.trim()) {
          const text = `The model (${model.id}) returned an empty answer. Try again, or try another model.`;
          yield { type: "error", code: "empty-answer", message: text, retryable: true };
          yield* finish({ error: text }, false);
          return;
        }
        yield* finish({}, false);
      } catch (err) {
        if (err instanceof Stopped || signal?.aborted || isAbortError(err)) {
          yield* finish({}, true);
          return;
        }
        host.logger.error("Chat failed unexpectedly", { error: err instanceof Error ? err.message : String(err) });
        const text = this.plain(err, settings);
        yield { type: "error", code: "internal", message: text, retryable: true };
        yield* finish({ error: text }, false);
      }
    } finally {
      // The consumer stopped iterating early (closed the view, switched conversations, broke out of its
      // loop): nothing more can be yielded, but the partial answer is kept, as after a Stop.
      if (!saved && conversationId) await this.persist(conversationId, answerMessage({}, true));
    }
  }

  /** Loads or creates the conversation, saves the user's message (or, on regenerate, drops the old answer). */
  private async openConversation(
    message: string,
    options: SendOptions,
  ): Promise<{ conversation: Conversation; question: string; history: ChatMessage[]; notice?: Notice }> {
    const store = this.deps.conversations;
    const now = this.deps.host.clock.now();
    let conversation = options.conversationId ? await store.get(options.conversationId) : null;
    let notice: Notice | undefined;
    if (options.conversationId && !conversation) {
      notice = { code: "conversation-missing", message: "The earlier conversation could not be found or read, so a new one was started." };
    }

    if (options.regenerate) {
      if (!conversation) throw new Error("There is no answer to regenerate in this conversation.");
      const lastUser = findLastIndex(conversation.messages, (m) => m.role === "user");
      if (lastUser < 0) throw new Error("There is no question to answer again in this conversation.");
      for (const old of conversation.messages.slice(lastUser + 1)) await store.removeMessage(conversation.id, old.id);
      const question = conversation.messages[lastUser].content;
      return { conversation, question, history: toHistory(conversation.messages.slice(0, lastUser)), notice };
    }

    conversation ??= await store.create(message);
    const history = toHistory(conversation.messages);
    await store.put(conversation.id, { id: newId("m", now), role: "user", content: message, createdAt: now, mode: options.mode });
    return { conversation, question: message, history, notice };
  }

  private async tryAgents(message: string, history: ChatMessage[], options: SendOptions): Promise<AgentResult | null> {
    for (const agent of this.deps.agents()) {
      if (options.signal?.aborted) return null;
      try {
        const result = await agent.tryHandle(message, history, { activeNotePath: options.activeNotePath, signal: options.signal });
        if (result) return result;
      } catch (err) {
        if (options.signal?.aborted) return null;
        this.deps.host.logger.warn(`Agent "${agent.name}" failed; treating it as not applicable`, {
          error: this.plain(err, this.deps.settings()),
        });
      }
    }
    return null;
  }

  private webSearch(settings: KryptonSettings): WebSearch | null {
    return this.deps.webSearch ? this.deps.webSearch() : createWebSearch(settings, this.deps.host);
  }

  private rerankModel(settings: KryptonSettings): ChatModel | null {
    if (this.deps.rerankModel) return this.deps.rerankModel();
    if (settings.rerank !== "reranker-model" || !settings.rerankerModel.trim()) return null;
    return createChatModelNamed(settings, this.deps.host, settings.rerankerModel);
  }

  /** The open note's beginning as context, or a notice when it cannot be read. */
  private async readActiveNote(path: string): Promise<{ note?: ActiveNoteContext; notice?: Notice }> {
    try {
      const full = await this.deps.host.vault.readNote(path);
      const limit = this.deps.host.platform.mobile ? ACTIVE_NOTE_CHARS.mobile : ACTIVE_NOTE_CHARS.desktop;
      const truncated = full.length > limit;
      let text = full;
      if (truncated) {
        const cut = full.lastIndexOf("\n", limit);
        text = full.slice(0, cut > limit / 2 ? cut : limit);
      }
      const name = path.split("/").pop() ?? path;
      return { note: { path, title: name.replace(/\.md$/i, ""), text, endLine: text.split("\n").length, truncated } };
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return { notice: { code: "active-note-unreadable", message: `The current note could not be read (${why}), so it is not used.` } };
    }
  }

  /** Saves a message; returns a plain-words problem instead of throwing, so a full disk never eats the answer. */
  private async persist(conversationId: string, message: StoredMessage): Promise<string | null> {
    try {
      await this.deps.conversations.put(conversationId, message);
      return null;
    } catch (err) {
      this.deps.host.logger.warn("Could not save the conversation", { error: err instanceof Error ? err.message : String(err) });
      return `This answer could not be saved to the conversation history (${err instanceof Error ? err.message : String(err)}).`;
    }
  }

  /** A user-facing message for any failure, with API keys scrubbed. */
  private plain(err: unknown, settings: KryptonSettings): string {
    const text = err instanceof Error ? err.message : String(err);
    return redact(text, [settings.geminiApiKey, settings.tavilyApiKey, settings.mcpToken]);
  }
}

function findLastIndex<T>(items: T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i])) return i;
  return -1;
}

/** Stored messages as prompt history: failed and empty answers are left out (the model never said them). */
export function toHistory(messages: StoredMessage[]): ChatMessage[] {
  return messages
    .filter((m) => m.content.trim() && !(m.role === "assistant" && m.error))
    .map((m) => ({ role: m.role, content: m.content }));
}
