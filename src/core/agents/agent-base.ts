import type { ChatMessage } from "../ports/chat-model";
import type { Logger } from "../ports/logger";
import type { Agent, AgentContext, AgentResult } from "./agent";
import { AgentError } from "../notes/agent-error";
import { keywordOnlyRemark } from "../notes/result-text";
import type { IntentRouter } from "./agent-router";
import type { DetectedIntent, IntentKind } from "./intent-patterns";

/**
 * The shape every chat agent shares: resolve the message's intent (once, through the router), leave
 * anything that is not one of `intents` to the next agent (null), run the NoteOperations call, and turn
 * an AgentError ("No chat model is configured", "Open a note first") into a message result that says
 * what is missing. Other errors propagate: the ChatService logs them and answers with normal chat.
 */
export function intentAgent(
  name: string,
  intents: readonly IntentKind[],
  deps: { router: IntentRouter; logger: Logger },
  run: (intent: DetectedIntent, context: AgentContext) => Promise<AgentResult>,
): Agent {
  return {
    name,
    async tryHandle(message: string, history: ChatMessage[], context: AgentContext): Promise<AgentResult | null> {
      const intent = await deps.router.resolve(message, history, context.signal);
      if (!intent || !intents.includes(intent.intent)) return null;
      try {
        return await run(intent, context);
      } catch (err) {
        if (!(err instanceof AgentError)) throw err;
        deps.logger.info(`agents: ${name} could not act`, { code: err.code });
        return { ...agentErrorResult(name, err), failed: err.code };
      }
    },
  };
}

/**
 * What an agent says for an AgentError: its message, and, when a search that matched by keywords only
 * found nothing, why, under it (as under found results: a paraphrase finds nothing by keywords).
 */
export function agentErrorResult(agent: string, err: AgentError): Extract<AgentResult, { kind: "message" }> {
  if (!err.keywordOnly) return { kind: "message", agent, text: err.message };
  return { kind: "message", agent, text: `${err.message}${keywordOnlyRemark(err.keywordOnly)}`, keywordOnly: err.keywordOnly };
}
