/**
 * The answerer contract: the chat shell (chat-service.ts) owns the conversation, memory, persistence,
 * Stop and the final "done" event; an answerer only produces one answer. Answerers are tried in order
 * (intent agents, then plain/RAG chat; an agent loop slots in between); the first that does not decline
 * answers. A new way of answering is a new file implementing this interface.
 */
import type { ChatMessage } from "../ports/chat-model";
import { redact } from "../util/redact";
import { IncompleteAnswerError } from "../providers/provider-error";
import { settingsSecrets, type KryptonSettings } from "../settings";
import { errorMessage } from "../util/errors";
import type { ChatEvent, SendOptions } from "./chat-types";
import type { StoredMessage } from "./conversation-types";

export interface AnswerTurn {
  /** The user's message (on regenerate: the question being answered again). */
  question: string;
  /** Earlier messages, already bounded by the memory policy; the question is not included. */
  history: ChatMessage[];
  options: SendOptions;
  /** The conversation this turn belongs to (created by the shell when options had none). */
  conversationId?: string;
  /** Settings as they were when the turn started. */
  settings: KryptonSettings;
  signal?: AbortSignal;
}

/**
 * What an answerer adds to the stored assistant message beyond what the shell collects from its events, and
 * `limit` for "done" (agent mode ended at a limit; the answer's text already carries its marker, so not stored).
 */
export type AnswerRecord = Partial<Pick<StoredMessage, "agent" | "steps">> & { limit?: string };

export interface Answerer {
  readonly name: string;
  /**
   * Yields the answer's events (the event stream IS the sink: "token", "sources", "notice", "agent",
   * "step", "error"; never "done"). The shell builds the stored message from them: tokens (or an agent
   * result's text) are the content, sources, notices, steps and an error message are kept.
   * Returns what else to store, or null to decline before yielding anything (the next answerer is tried).
   * Stop: throw an abort error (isAbortError) or just return; the shell saves the partial answer.
   * Failures the user should see are "error" events; anything thrown is reported as an internal error.
   */
  answer(turn: AnswerTurn): AsyncGenerator<ChatEvent, AnswerRecord | null>;
}

/** A user-facing message for any failure, with every configured secret scrubbed. */
export function plainError(err: unknown, settings: KryptonSettings): string {
  // An unfinished answer's message is a clause (made to follow "Could not …: "); shown alone it is a sentence.
  const message = err instanceof IncompleteAnswerError ? `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.` : errorMessage(err);
  return redact(message, settingsSecrets(settings));
}
