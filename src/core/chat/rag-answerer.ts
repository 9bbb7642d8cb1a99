import type { VaultIndexApi } from "../indexing/vault-index-api";
import type { ChatModel, ContextFit } from "../ports/chat-model";
import { fitNotice } from "../providers/context-fit";
import type { Host } from "../ports/host";
import { ProviderError } from "../providers/provider-error";
import { chatModelUnavailableReason } from "../providers/provider-factory";
import { reportingFits } from "../providers/turn-views";
import type { WebSearch } from "../web/web-search";
import { AbortedError, errorMessage, isAbortError } from "../util/errors";
import type { ChatEvent } from "./chat-types";
import { plainError, type AnswerRecord, type Answerer, type AnswerTurn } from "./answerer";
import { buildPrompt, type ActiveNoteContext } from "./prompt-builder";
import { retrieve, type Notice } from "./retrieval";

export interface RagAnswererDeps {
  host: Host;
  index: VaultIndexApi;
  chatModel: () => ChatModel | null;
  webSearch: () => WebSearch | null;
  rerankModel: () => ChatModel | null;
}

/** How much of the open note goes into the prompt with "use current note". */
const ACTIVE_NOTE_CHARS = { desktop: 8000, mobile: 3000 };

/**
 * Plain and retrieval-augmented chat (modes none / rag / web / hybrid): retrieval, the prompt with
 * numbered sources, and the model's streamed answer. Always answers (never declines): it is the last
 * answerer. Degraded parts are notices; a failed or empty answer is an "error" event.
 */
export class RagAnswerer implements Answerer {
  readonly name = "chat";

  constructor(private readonly deps: RagAnswererDeps) {}

  async *answer(turn: AnswerTurn): AsyncGenerator<ChatEvent, AnswerRecord | null> {
    const { host } = this.deps;
    const { question, history, options, settings, signal } = turn;
    const model = this.deps.chatModel();
    if (!model) {
      const reason = chatModelUnavailableReason(settings, host.platform.kind) ?? "No chat model is configured: choose one in Krypton's settings.";
      yield { type: "error", code: "not-configured", message: reason, retryable: false };
      return {};
    }

    const retrieval = await retrieve(
      question,
      history,
      options.mode,
      {
        index: this.deps.index,
        webSearch: this.deps.webSearch(),
        chatModel: model,
        rerankModel: this.deps.rerankModel(),
        settings,
        logger: host.logger,
        hostKind: host.platform.kind,
      },
      signal,
    );
    for (const notice of retrieval.notices) yield { type: "notice", ...notice };
    let activeNote: ActiveNoteContext | undefined;
    if (options.useActiveNote && options.activeNotePath) {
      const read = await this.readActiveNote(options.activeNotePath);
      activeNote = read.note;
      if (read.notice) yield { type: "notice", ...read.notice };
    } else if (options.useActiveNote) {
      // "Summarize this" with no note open (or a PDF in front) would otherwise be answered about nothing, silently.
      yield { type: "notice", code: "active-note-missing", message: "No note is open, so this answer does not use one." };
    }
    const prompt = buildPrompt({ question, history, mode: options.mode, notes: retrieval.notes, web: retrieval.web, activeNote });
    yield { type: "sources", sources: prompt.sources };
    if (signal?.aborted) throw new AbortedError();

    let answer = "";
    // Set in a callback: typed by assertion so TypeScript does not narrow it to null for good.
    let fit = null as ContextFit | null;
    try {
      // reportingFits: the same text, plus what the prompt lost to fit the window. No answer cap
      // (maxTokens): the user watches it and can stop it; a cut long answer is worse (ANSWER_BUDGET).
      for await (const text of reportingFits(model, (f) => (fit = f)).stream({ messages: prompt.messages, signal })) {
        answer += text;
        yield { type: "token", text };
      }
    } catch (err) {
      if (signal?.aborted || isAbortError(err)) throw new AbortedError();
      // A failed answer may be why the user looks: say what the prompt lost, then the error.
      if (fit) yield { type: "notice", ...fitNotice(fit) };
      const pe = err instanceof ProviderError ? err : null;
      yield { type: "error", code: pe?.kind ?? "model", message: plainError(err, settings), retryable: pe ? pe.retryable || pe.kind === "bad-response" : false };
      return {};
    }
    if (signal?.aborted) throw new AbortedError();
    if (fit) yield { type: "notice", ...fitNotice(fit) };
    if (!answer.trim()) {
      yield { type: "error", code: "empty-answer", message: `The model (${model.id}) returned an empty answer. Try again, or try another model.`, retryable: true };
    }
    return {};
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
      return { notice: { code: "active-note-unreadable", message: `The current note could not be read (${errorMessage(err)}), so it is not used.` } };
    }
  }
}
