import type { ChatEvent, ChatModel, ChatRequest, ContextFit, FinishReason, LengthCut, TokenUsage } from "../ports/chat-model";
import { IncompleteAnswerError } from "./provider-error";

/**
 * stream() and complete() are views over a provider's turn(), so each provider has one code path for a
 * model call: same request mapping, timeouts, retries and think-block rule. Thinking, tool calls and
 * the end event are dropped here; callers that need them use turn(). A caller that tells the user what
 * the request lost to fit the window (a chat answer, a workflow step) wraps the model in reportingFits,
 * which reports it from every view.
 */
export async function* textDeltas(events: AsyncIterable<ChatEvent>, modelId?: string): AsyncGenerator<string> {
  const outcome: TurnOutcome = { text: "", finishReason: "stop" };
  for await (const event of events) {
    addToOutcome(outcome, event);
    if (event.type === "text" && event.text) yield event.text;
  }
  // stream() "ends normally when the answer is complete": one that did not finish ends with complete()'s error.
  finishedText(outcome, modelId);
}

/**
 * The model, with what each request lost to fit the window passed to `onFit`, whichever view the request
 * goes through (turn(), stream(), complete(), and so askJson/askModel and the agent loop): the one place a
 * caller collects it for its own report, instead of each model call handing it back.
 */
export function reportingFits(model: ChatModel, onFit: (fit: ContextFit) => void): ChatModel {
  const turn = async function* (request: ChatRequest): AsyncGenerator<ChatEvent> {
    for await (const event of model.turn(request)) {
      if (event.type === "fitted") onFit(event.fit);
      yield event;
    }
  };
  return {
    id: model.id,
    turn,
    stream: (request) => textDeltas(turn(request), model.id),
    complete: (request) => collectTurnText(turn(request), model.id),
    capabilities: (signal) => model.capabilities(signal),
  };
}

/** A whole turn's text and how it ended (for callers that need the token counts as well as the text). */
export interface TurnOutcome extends LengthCut {
  text: string;
  finishReason: FinishReason;
  detail?: string;
  usage?: TokenUsage;
}

export async function collectTurn(events: AsyncIterable<ChatEvent>): Promise<TurnOutcome> {
  const outcome: TurnOutcome = { text: "", finishReason: "stop" };
  for await (const event of events) addToOutcome(outcome, event);
  return outcome;
}

/** One event's share of the outcome: its text, or how the turn ended. Both views read a turn this way. */
function addToOutcome(outcome: TurnOutcome, event: ChatEvent): void {
  if (event.type === "text") outcome.text += event.text;
  else if (event.type === "end") {
    outcome.finishReason = event.finishReason;
    if (event.detail) outcome.detail = event.detail;
    if (event.usage) outcome.usage = event.usage;
    if (event.limit !== undefined) outcome.limit = event.limit;
    if (event.whileThinking) outcome.whileThinking = true;
    if (event.moreRoom) outcome.moreRoom = event.moreRoom;
  }
}

/** The text of a turn that finished; a cut or stopped one throws, so a partial answer is never taken for a whole one. */
export function finishedText(outcome: TurnOutcome, modelId?: string): string {
  if (outcome.finishReason === "length") {
    throw new IncompleteAnswerError("length", outcome.text, undefined, modelId, { limit: outcome.limit, whileThinking: outcome.whileThinking, moreRoom: outcome.moreRoom });
  }
  if (outcome.finishReason === "other") throw new IncompleteAnswerError("stopped", outcome.text, outcome.detail, modelId);
  return outcome.text;
}

/** complete(): the whole answer, or IncompleteAnswerError. */
export async function collectTurnText(events: AsyncIterable<ChatEvent>, modelId?: string): Promise<string> {
  return finishedText(await collectTurn(events), modelId);
}

let callSeq = 0;

/** An id for a tool call whose provider gives none (Ollama; Gemini parts without `id`). Unique in this process. */
export function newToolCallId(): string {
  callSeq += 1;
  return `call_${callSeq.toString(36)}_${Date.now().toString(36)}`;
}

/**
 * A turn's events with what a cut end event should say, the same for every provider: the answer cap as
 * sent, so "cut off at N tokens" names the N the model had; whether the model spent it thinking (no answer
 * text yet, or thinking took most of it), so a long think is not blamed on a loop; and `moreRoom`, the
 * provider's remedy when the context window lowered that cap.
 */
export async function* withCapOnCut(events: AsyncIterable<ChatEvent>, cap: number | undefined, moreRoom?: string): AsyncGenerator<ChatEvent> {
  // Characters, not tokens, when the provider does not count thinking apart: the two run at similar rates.
  const written = { thinking: 0, text: 0 };
  for await (const event of events) {
    if (event.type === "thinking" || event.type === "text") written[event.type] += event.text.replace(/\s+/g, "").length;
    if (event.type !== "end" || event.finishReason !== "length") {
      yield event;
      continue;
    }
    const { thinkingTokens, completionTokens } = event.usage ?? {};
    const whileThinking =
      thinkingTokens !== undefined && completionTokens ? thinkingTokens * 2 > completionTokens : written.thinking > 0 && written.thinking > written.text;
    yield { ...event, ...(cap !== undefined ? { limit: cap } : {}), ...(whileThinking ? { whileThinking } : {}), ...(moreRoom ? { moreRoom } : {}) };
  }
}
