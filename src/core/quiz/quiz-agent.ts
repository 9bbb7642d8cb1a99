import type { Agent } from "../agents/agent";
import { detectQuizIntent, normalizeMessage } from "../agents/intent-patterns";
import { AgentError } from "../notes/agent-error";
import type { Logger } from "../ports/logger";
import type { QuizService } from "./quiz-service";
import { agentErrorResult } from "../agents/agent-base";
import type { IntentRouter } from "../agents/agent-router";

export const QUIZ_AGENT = "quiz";

const YES = /^(?:yes|yeah|yep|sure|ok(?:ay)?|please|do it|go ahead|make them)\b[^?]*$/i;

/**
 * "Quiz me on <deck>" starts a quiz; while one runs in this conversation every message is its answer
 * (or hint / skip / stop). First in the agent order, so answers never reach the other agents.
 */
export function createQuizAgent(deps: { quiz: QuizService; logger: Logger; router?: IntentRouter }): Agent {
  return {
    name: QUIZ_AGENT,
    async tryHandle(message, history, context) {
      try {
        const offered = await deps.quiz.openOffer(context.conversationId);
        const state = offered ? null : await deps.quiz.active(context.conversationId);
        // While a quiz or its offer is open, a message is its answer unless the patterns see a new quiz: an
        // answer is no request, and asking the classifier would cost a model call per answer. Without a
        // router (the agent on its own), the patterns decide too.
        const name =
          offered || state || !deps.router
            ? detectQuizIntent(message)
            : await deps.router.intentFor(message, history, context.signal, (i) => (i.intent === "quiz" ? i.topic : null), () => detectQuizIntent(message));
        if (name) {
          return { kind: "message", agent: QUIZ_AGENT, text: await deps.quiz.start(context.conversationId, name, context.signal) };
        }
        if (offered) {
          // "yes" writes the missed cards; anything else closes the offer and goes on as normal chat.
          const text = await deps.quiz.answerOffer(context.conversationId, offered, YES.test(normalizeMessage(message)));
          return text === null ? null : { kind: "message", agent: QUIZ_AGENT, text };
        }
        if (!state) return null;
        return { kind: "message", agent: QUIZ_AGENT, text: await deps.quiz.reply(context.conversationId, state, message, context.signal) };
      } catch (err) {
        if (!(err instanceof AgentError)) throw err;
        deps.logger.info("agents: quiz could not act", { code: err.code });
        return agentErrorResult(QUIZ_AGENT, err);
      }
    },
  };
}
