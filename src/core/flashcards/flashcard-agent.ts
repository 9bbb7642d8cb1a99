import type { Agent } from "../agents/agent";
import { AgentError } from "../notes/agent-error";
import type { Logger } from "../ports/logger";
import { detectFlashcardIntent } from "../agents/intent-patterns";
import type { FlashcardService } from "./flashcard-service";
import { agentErrorResult } from "../agents/agent-base";

export const FLASHCARD_AGENT = "flashcards";

/**
 * The chat side of flashcards: "make flashcards about X" (a topic, from the index) or "make flashcards
 * from this note" (the active note). Anything else is not its message.
 */
export function createFlashcardAgent(deps: { flashcards: FlashcardService; logger: Logger }): Agent {
  return {
    name: FLASHCARD_AGENT,
    async tryHandle(message, _history, context) {
      const intent = detectFlashcardIntent(message);
      if (!intent) return null;
      try {
        if (intent.topic === null && !context.activeNotePath) {
          throw new AgentError("Open a note first: there is no active note to make flashcards from.", "no-active-note");
        }
        const run = await deps.flashcards.generate(
          intent.topic === null
            ? { notePath: context.activeNotePath, max: intent.max, signal: context.signal }
            : { topic: intent.topic, max: intent.max, signal: context.signal },
        );
        return { kind: "message", agent: FLASHCARD_AGENT, text: run.text };
      } catch (err) {
        if (!(err instanceof AgentError)) throw err;
        deps.logger.info("agents: flashcards could not act", { code: err.code });
        return agentErrorResult(FLASHCARD_AGENT, err);
      }
    },
  };
}
