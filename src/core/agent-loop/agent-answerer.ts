import type { AnswerRecord, Answerer, AnswerTurn } from "../chat/answerer";
import { plainError } from "../chat/answerer";
import type { ChatEvent } from "../chat/chat-types";
import { ProviderError } from "../providers/provider-error";
import { isAbortError } from "../util/errors";
import type { AgentService } from "./agent-service";

/**
 * Agent mode as a chat answerer (see chat/answerer.ts): it answers only when the turn asks for agent mode
 * (SendOptions.agent), after the intent agents declined and before plain/RAG chat. The loop's events
 * become chat events; the shell saves tokens, steps and usage with the answer.
 */
export class AgentAnswerer implements Answerer {
  readonly name = "agent-loop";

  constructor(private readonly agent: AgentService) {}

  async *answer(turn: AnswerTurn): AsyncGenerator<ChatEvent, AnswerRecord | null> {
    if (!turn.options.agent) return null;
    try {
      const loop = this.agent.answer(turn.question, turn.history, {
        conversationId: turn.conversationId ?? turn.options.conversationId,
        signal: turn.signal,
        confirm: turn.options.confirm,
      });
      for await (const event of loop) {
        if (event.type === "done") {
          const { usage, limit } = event.result;
          if (usage.promptTokens || usage.completionTokens) yield { type: "usage", usage };
          return limit ? { limit } : {};
        }
        yield event;
      }
      return {};
    } catch (err) {
      if (isAbortError(err) || turn.signal?.aborted) throw err;
      const pe = err instanceof ProviderError ? err : null;
      yield {
        type: "error",
        code: pe?.kind ?? "agent",
        message: plainError(err, turn.settings),
        retryable: pe ? pe.retryable || pe.kind === "bad-response" : false,
      };
      return {};
    }
  }
}
