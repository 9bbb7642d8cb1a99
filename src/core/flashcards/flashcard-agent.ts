import type { Agent } from "../agents/agent";
import { AgentError } from "../notes/agent-error";
import type { Logger } from "../ports/logger";
import { detectFlashcardIntent } from "../agents/intent-patterns";
import type { FlashcardService } from "./flashcard-service";
import { agentErrorResult } from "../agents/agent-base";
import type { IntentRouter } from "../agents/agent-router";

export const FLASHCARD_AGENT = "flashcards";

/**
 * The chat side of flashcards: "make flashcards about X" (a topic, from the index) or "make flashcards
 * from this note" (the active note). Anything else is not its message.
 */
export function createFlashcardAgent(deps: { flashcards: FlashcardService; logger: Logger; router?: IntentRouter }): Agent {
  return {
    name: FLASHCARD_AGENT,
    async tryHandle(message, history, context) {
      // Without a router (the agent on its own), its patterns decide.
      const intent = deps.router
        ? await deps.router.intentFor(message, history, context.signal, (i) => (i.intent === "flashcards" ? i.request : null), () => detectFlashcardIntent(message))
        : detectFlashcardIntent(message);
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
