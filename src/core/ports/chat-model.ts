export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  signal?: AbortSignal;
  temperature?: number;
  /** Ask the model for a JSON object (Ollama format: "json", Gemini responseMimeType). */
  json?: boolean;
  /** Constrain the answer to this JSON Schema where the provider can (Ollama `format`, Gemini `responseJsonSchema`). Implies json. */
  jsonSchema?: Record<string, unknown>;
}

/** A chat LLM. Errors are ProviderError (see core/providers/provider-error.ts). */
export interface ChatModel {
  /** "ollama:llama3.1:8b", "gemini:gemini-2.5-flash" */
  readonly id: string;
  /** Streams text deltas; ends normally when the answer is complete; aborts with the signal. */
  stream(request: ChatRequest): AsyncIterable<string>;
  /** The whole answer at once (used by agents, rewriting, reranking). */
  complete(request: ChatRequest): Promise<string>;
}
