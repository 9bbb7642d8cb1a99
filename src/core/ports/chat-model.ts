/**
 * The chat-model port. One request shape for plain chat, structured output and tool calling; one event
 * stream for a model turn. Providers (Ollama, Gemini) translate to and from their wire formats.
 */

/** A tool the model may call. `parameters` is a JSON Schema object (keeps `required`). */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** "auto": the model decides; "none": no tool call; `{ name }`: must call that tool. */
export type ToolChoice = "auto" | "none" | { name: string };

export interface ToolCall {
  /** Provider's call id when it has one (Gemini), else one Krypton makes up; tool results refer to it. */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  /** assistant: the calls this turn made. */
  toolCalls?: ToolCall[];
  /** assistant: opaque provider data to echo back verbatim (Gemini parts with `thoughtSignature`). */
  providerData?: unknown;
  /** tool: which call this answers. */
  toolCallId?: string;
  toolName?: string;
  /** tool: the result is an error message the model should correct itself from. */
  isError?: boolean;
  /**
   * An earlier turn of the conversation, not this request's own: left out first (oldest first) when the
   * prompt does not fit the model's window (providers/context-fit.ts).
   */
  earlierTurn?: boolean;
  /**
   * Characters [start, end) of content are quoted material (a tool result, note excerpts) that may be
   * shortened, with a marker, to fit the window. A tool message's whole content is, without this. `kind`
   * names it in the notice telling the user what was shortened.
   */
  quoted?: { start: number; end: number; kind: "tool-result" | "excerpts" };
}

export interface ChatRequest {
  messages: ChatMessage[];
  signal?: AbortSignal;
  temperature?: number;
  /** Ask the model for a JSON object (Ollama format: "json", Gemini responseMimeType). */
  json?: boolean;
  /** Constrain the answer to this JSON Schema where the provider can (Ollama `format`, Gemini `responseJsonSchema`). Implies json. */
  jsonSchema?: Record<string, unknown>;
  tools?: ToolSpec[];
  toolChoice?: ToolChoice;
  maxTokens?: number;
  topP?: number;
  /**
   * Ask the model to think as little as it can, where the provider can say so for this model (Ollama
   * `think: false`, Gemini thinkingConfig: see thinkingConfigOf); elsewhere ignored. For askJson's repair
   * and a retry after an answer cut while it was still thinking.
   */
  noThinking?: boolean;
}

export interface TokenUsage {
  promptTokens?: number;
  /** Every token the model generated, its thinking included. */
  completionTokens?: number;
  /** Of completionTokens, those spent thinking, when the provider counts them apart (Gemini thoughtsTokenCount). */
  thinkingTokens?: number;
}

export type FinishReason = "stop" | "length" | "tool-calls" | "malformed-tool-call" | "other";

/** What a request lost to fit the model's context window (providers/context-fit.ts). */
export interface ContextFit {
  /** "ollama:llama3.1:8b" */
  model: string;
  /** The window the request was fitted to. */
  tokens: number;
  /** Earlier conversation messages left out. */
  droppedMessages: number;
  /** Quoted parts shortened, by kind. */
  shortened: { toolResults: number; excerpts: number };
}

/** One event of a streamed model turn. */
export type ChatEvent =
  /** Before anything else, when the request was cut to fit the window: for telling the user, and the messages as sent (for logs). */
  | { type: "fitted"; fit: ContextFit; messages: ChatMessage[] }
  | { type: "text"; text: string }
  | { type: "thinking"; text: string }
  | { type: "tool-call"; call: ToolCall }
  | ({
      type: "end";
      finishReason: FinishReason;
      usage?: TokenUsage;
      /** Opaque data to store on the assistant message (see ChatMessage.providerData). */
      providerData?: unknown;
      /** The provider's own reason when finishReason is "other" ("SAFETY", "prompt blocked: SAFETY"), for error messages. */
      detail?: string;
    } & LengthCut);

/**
 * How an answer was cut at its length limit (finishReason "length"), as the end event, a whole turn's
 * outcome (TurnOutcome), IncompleteAnswerError and askModel's cut answer all carry it.
 */
export interface LengthCut {
  /** The answer cap that was sent (num_predict, maxOutputTokens), when one was. */
  limit?: number;
  /**
   * The model spent the tokens thinking, not answering: cut before any answer text, or after thinking took
   * most of them (turn-views.ts withCapOnCut), so its answer did not loop.
   */
  whileThinking?: boolean;
  /**
   * How to give the answer more room, when the context window lowered the cap sent (a clause after "to leave
   * it more room, ": "raise Ollama context limit …").
   */
  moreRoom?: string;
}

export interface ModelCapabilities {
  /** Native tool calling. */
  tools: boolean;
  thinking?: boolean;
  /** The model's maximum context window in tokens, when the provider says. */
  contextLength?: number;
}

/** A chat LLM. Errors are ProviderError (see core/providers/provider-error.ts). */
export interface ChatModel {
  /** "ollama:llama3.1:8b", "gemini:gemini-2.5-flash" */
  readonly id: string;
  /** One model turn as events: text and thinking deltas, tool calls, then exactly one end event. */
  turn(request: ChatRequest): AsyncIterable<ChatEvent>;
  /** Streams text deltas; ends normally when the answer is complete; aborts with the signal. */
  stream(request: ChatRequest): AsyncIterable<string>;
  /**
   * The whole answer at once (used by agents, rewriting, reranking). An answer that did not finish (cut
   * at the length limit, stopped by the provider) is an IncompleteAnswerError, never returned as if whole.
   */
  complete(request: ChatRequest): Promise<string>;
  /** What the model can do; cached by the provider. */
  capabilities(signal?: AbortSignal): Promise<ModelCapabilities>;
}
