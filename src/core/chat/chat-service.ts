/**
 * The one chat pipeline (sidebar view, CLI `ask`/`chat`, commands). This file is the shell: the
 * conversation (open, save the question, regenerate), the memory policy, persistence, Stop and the
 * final event. Answering is done by answerers (answerer.ts), tried in order: the intent agents, then
 * plain/RAG chat; the first that does not decline answers.
 *
 * send() always ends with exactly one "done" event and never throws: failures become "notice" events
 * (a degraded part, the answer goes on) or an "error" event (no answer possible), in plain words.
 * Stop is the AbortSignal (the partial answer is saved with stopped: true, then "done"); a consumer that
 * merely stops iterating closes the HTTP request and the partial answer is saved the same way.
 * The answer is also saved while it streams (marked partial, at a bounded rate), so a process killed
 * mid-answer keeps what was shown; an answer whose stream broke off keeps its text, marked partial.
 */
import type { Agent } from "../agents/agent";
import type { VaultIndexApi } from "../indexing/vault-index-api";
import type { ChatMessage, ChatModel, TokenUsage } from "../ports/chat-model";
import type { Host } from "../ports/host";
import { createChatModelNamed } from "../providers/provider-factory";
import type { KryptonSettings } from "../settings";
import { createWebSearch } from "../web/tavily-search";
import type { WebSearch } from "../web/web-search";
import { AbortedError, errorMessage, isAbortError } from "../util/errors";
import { AgentsAnswerer } from "./agents-answerer";
import { plainError, type AnswerRecord, type Answerer } from "./answerer";
import type { ChatEvent, ChatServiceApi, SendOptions, Source } from "./chat-types";
import type { AgentStep, Conversation, ConversationStoreApi, StoredMessage } from "./conversation-types";
import { newId } from "./ids";
import { ConversationMemoryPolicy } from "./memory-policy";
import { PartialAnswerSaver } from "./partial-answer-saver";
import { RagAnswerer } from "./rag-answerer";
import type { Notice } from "./retrieval";

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
  /**
   * The answerers, in order; default: defaultAnswerers(deps) (intent agents, then plain/RAG chat).
   * An agent loop is added by inserting its answerer before the last one.
   */
  answerers?: (defaults: Answerer[]) => Answerer[];
}

/** Intent agents first, then plain/RAG chat (which always answers). */
export function defaultAnswerers(deps: ChatServiceDeps): Answerer[] {
  const settings = deps.settings;
  return [
    new AgentsAnswerer({ agents: deps.agents, logger: deps.host.logger }),
    new RagAnswerer({
      host: deps.host,
      index: deps.index,
      chatModel: deps.chatModel,
      webSearch: () => (deps.webSearch ? deps.webSearch() : createWebSearch(settings(), deps.host)),
      rerankModel: () => {
        if (deps.rerankModel) return deps.rerankModel();
        const s = settings();
        if (s.rerank !== "reranker-model" || !s.rerankerModel.trim()) return null;
        return createChatModelNamed(s, deps.host, s.rerankerModel);
      },
    }),
  ];
}

/** What the shell collects from an answerer's events, to save and to report in "done". */
class AnswerDraft {
  answer = "";
  sources: Source[] = [];
  readonly notices: Notice[] = [];
  readonly steps: AgentStep[] = [];
  usage: TokenUsage | undefined;
  error: string | undefined;

  /** The answer as saved and reported: one of only whitespace is no answer, as an empty one is. */
  get text(): string {
    return this.answer.trim() ? this.answer : "";
  }

  take(event: ChatEvent): void {
    if (event.type === "token") this.answer += event.text;
    else if (event.type === "agent") this.answer = event.result.text;
    else if (event.type === "sources") this.sources = event.sources;
    else if (event.type === "notice") this.notices.push({ code: event.code, message: event.message });
    else if (event.type === "step") this.steps.push(event.step);
    // Agent mode: text the model wrote before a tool call was a thought, not the answer.
    else if (event.type === "retract") this.answer = this.answer.slice(0, Math.max(0, this.answer.length - event.text.length));
    else if (event.type === "usage") this.usage = event.usage;
    else if (event.type === "error") this.error = event.message;
  }
}

export class ChatService implements ChatServiceApi {
  private readonly answerers: Answerer[];

  constructor(private readonly deps: ChatServiceDeps) {
    const defaults = defaultAnswerers(deps);
    this.answerers = deps.answerers ? deps.answerers(defaults) : defaults;
  }

  async *send(message: string, options: SendOptions): AsyncIterable<ChatEvent> {
    const { host } = this.deps;
    const settings = this.deps.settings();
    const signal = options.signal;
    const answerId = newId("m", host.clock.now());
    let conversationId = options.conversationId ?? "";
    const draft = new AnswerDraft();

    let saved = false;
    /** The question this answer answers: keeps the answer after it when several writers add to one conversation. */
    let questionId: string | undefined;
    let streamSaver: PartialAnswerSaver | null = null;
    const answerMessage = (extra: AnswerRecord, stopped: boolean): StoredMessage => ({
      id: answerId,
      role: "assistant",
      content: draft.text,
      createdAt: host.clock.now(),
      mode: options.mode,
      ...(draft.sources.length ? { sources: draft.sources } : {}),
      ...(draft.notices.length ? { notices: draft.notices.map((n) => n.message) } : {}),
      ...(draft.steps.length ? { steps: draft.steps } : {}),
      ...(draft.usage ? { usage: draft.usage } : {}),
      ...(stopped ? { stopped: true } : {}),
      ...(draft.error !== undefined && !stopped ? { error: draft.error } : {}),
      // Text that arrived before a failure (a cut or unreadable stream) is kept, marked incomplete.
      ...(draft.error !== undefined && !stopped && draft.text ? { partial: true } : {}),
      ...(questionId ? { replyTo: questionId } : {}),
      ...extra,
    });
    const finish = async function* (this: ChatService, { limit, ...extra }: AnswerRecord, stopped: boolean): AsyncGenerator<ChatEvent> {
      saved = true;
      await streamSaver?.settle(); // a partial save still under way must not land after the final one
      const saveError = conversationId ? await this.persist(conversationId, answerMessage(extra, stopped)) : null;
      if (saveError) yield { type: "notice", code: "save-failed", message: saveError };
      yield { type: "done", conversationId, messageId: answerId, answer: draft.text, stopped, ...(limit ? { limit } : {}) };
    }.bind(this);
    /** Passes an event on, keeping what must be saved. */
    const emit = (event: ChatEvent): ChatEvent => {
      draft.take(event);
      if (event.type === "token" && draft.text) streamSaver?.update(draft.text);
      return event;
    };

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
        questionId = opened.questionId;
        history = opened.history;
        const partialId = conversationId;
        // An unsaved conversation (a read-only .krypton) has no id: nothing to save while streaming either.
        if (partialId) streamSaver = new PartialAnswerSaver(
          host.clock,
          (text) => this.deps.conversations.put(partialId, { ...answerMessage({}, false), content: text, partial: true }),
          (err) => host.logger.warn("Could not save the answer while it streamed", { error: errorMessage(err) }),
        );
        if (opened.notice) yield emit({ type: "notice", ...opened.notice });
      } catch (err) {
        yield emit({ type: "error", code: "conversation", message: plainError(err, settings), retryable: false });
        yield* finish({}, false);
        return;
      }

      try {
        if (signal?.aborted) throw new AbortedError();
        const bounded = ConversationMemoryPolicy.fromSettings(settings, host.platform.mobile).select(history);

        // 2. The answerers, in order: the first that does not decline answers.
        for (const answerer of this.answerers) {
          const turn = answerer.answer({ question, history: bounded, options, conversationId, settings, signal });
          let record: AnswerRecord | null;
          try {
            for (;;) {
              const step = await turn.next();
              if (step.done) {
                record = step.value;
                break;
              }
              yield emit(step.value);
            }
          } finally {
            // When the consumer stopped early this closes the answerer (and its HTTP stream); else a no-op.
            await turn.return(null);
          }
          if (signal?.aborted) throw new AbortedError();
          if (record !== null) {
            yield* finish(record, false);
            return;
          }
        }
        yield* finish({}, false);
      } catch (err) {
        if (isAbortError(err) || signal?.aborted) {
          yield* finish({}, true);
          return;
        }
        host.logger.error("Chat failed unexpectedly", { error: errorMessage(err) });
        yield emit({ type: "error", code: "internal", message: plainError(err, settings), retryable: true });
        yield* finish({}, false);
      }
    } finally {
      // The consumer stopped iterating early (closed the view, switched conversations, broke out of its
      // loop): nothing more can be yielded, but the partial answer is kept, as after a Stop.
      if (!saved && conversationId) await streamSaver?.settle();
      if (!saved && conversationId) await this.persist(conversationId, answerMessage({}, true));
    }
  }

  /** Loads or creates the conversation, saves the user's message (or, on regenerate, drops the old answer). */
  private async openConversation(
    message: string,
    options: SendOptions,
  ): Promise<{ conversation: Conversation; question: string; questionId: string; history: ChatMessage[]; notice?: Notice }> {
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
      const questionId = conversation.messages[lastUser].id;
      return { conversation, question, questionId, history: toHistory(conversation.messages.slice(0, lastUser)), notice };
    }

    const history = toHistory(conversation?.messages ?? []);
    const questionId = newId("m", now);
    try {
      conversation ??= await store.create(message);
      await store.put(conversation.id, { id: questionId, role: "user", content: message, createdAt: now, mode: options.mode });
    } catch (err) {
      // A vault where .krypton cannot be written (read-only, permissions, full disk) still gets its answer:
      // this exchange is kept in memory only (an empty id: nothing is saved later either), and the user is told.
      const why = errorMessage(err);
      this.deps.host.logger.warn("Could not save the conversation", { error: why });
      const unsaved: Conversation = { id: "", title: message.slice(0, 60), createdAt: now, updatedAt: now, messages: conversation?.messages ?? [] };
      return { conversation: unsaved, question: message, questionId, history, notice: { code: "save-failed", message: `This conversation is not saved (${why}).` } };
    }
    return { conversation, question: message, questionId, history, notice };
  }

  /** Saves a message; returns a plain-words problem instead of throwing, so a full disk never eats the answer. */
  private async persist(conversationId: string, message: StoredMessage): Promise<string | null> {
    try {
      await this.deps.conversations.put(conversationId, message);
      return null;
    } catch (err) {
      this.deps.host.logger.warn("Could not save the conversation", { error: errorMessage(err) });
      return `This answer could not be saved to the conversation history (${errorMessage(err)}).`;
    }
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
