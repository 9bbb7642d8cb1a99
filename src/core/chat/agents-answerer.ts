import type { Agent, AgentResult } from "../agents/agent";
import type { ChatMessage } from "../ports/chat-model";
import type { Logger } from "../ports/logger";
import type { KryptonSettings } from "../settings";
import type { ChatEvent, SendOptions } from "./chat-types";
import { plainError, type AnswerRecord, type Answerer, type AnswerTurn } from "./answerer";

/**
 * The fixed intent agents (create a note, search, summarize): the first agent with a non-null result
 * answers; a throwing agent counts as "not mine". Declines when no agent takes the message.
 */
export class AgentsAnswerer implements Answerer {
  readonly name = "agents";

  constructor(private readonly deps: { agents: () => Agent[]; logger: Logger }) {}

  async *answer(turn: AnswerTurn): AsyncGenerator<ChatEvent, AnswerRecord | null> {
    // The conversation the shell opened for this turn: a new one when options named none or one it could not find.
    const conversationId = turn.conversationId || turn.options.conversationId || undefined;
    const result = await this.tryAgents(turn.question, turn.history, { ...turn.options, conversationId }, turn.settings);
    if (!result || turn.signal?.aborted) return null;
    yield { type: "agent", result };
    return { agent: result };
  }

  private async tryAgents(message: string, history: ChatMessage[], options: SendOptions, settings: KryptonSettings): Promise<AgentResult | null> {
    for (const agent of this.deps.agents()) {
      if (options.signal?.aborted) return null;
      try {
        const result = await agent.tryHandle(message, history, { activeNotePath: options.activeNotePath, conversationId: options.conversationId, signal: options.signal });
        if (result) return result;
      } catch (err) {
        if (options.signal?.aborted) return null;
        this.deps.logger.warn(`Agent "${agent.name}" failed; treating it as not applicable`, { error: plainError(err, settings) });
      }
    }
    return null;
  }
}
