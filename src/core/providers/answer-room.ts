import type { ChatRequest } from "../ports/chat-model";

/**
 * Room for a model's reasoning on top of the caller's answer budget (ChatRequest.maxTokens; see
 * core/model/answer-budget.ts): thinking tokens count against Ollama's `num_predict` and Gemini's
 * `maxOutputTokens`, so a qwen3 or a Gemini 2.5 that thinks for a few hundred tokens would otherwise be
 * cut before it writes a 256-token answer.
 *
 * Ollama adds this for models whose `/api/show` lists "thinking" or whose answers were seen reasoning
 * (it also enlarges num_ctx, which costs memory there), as much of it as the window holds beside the
 * prompt and the answer's own budget.
 */
export const OLLAMA_REASONING_ROOM = 2048;

/**
 * Gemini lets every capped answer use this many output tokens, or its own budget when that is larger:
 * its 2.5 and later models all think against the same cap, its window costs nothing, and 8,192 is the
 * output limit of its smallest chat models (2.0 Flash), which refuse a larger maxOutputTokens.
 */
export const GEMINI_CAPPED_OUTPUT = 8192;

/** The request with its cap raised by `room` tokens; unchanged when it has no cap. */
export function withReasoningRoom(request: ChatRequest, room: number): ChatRequest {
  return request.maxTokens === undefined || room <= 0 ? request : { ...request, maxTokens: request.maxTokens + room };
}
