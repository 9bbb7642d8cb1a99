import type { LengthCut } from "../ports/chat-model";
/** Why a call to a model or web service failed, in a form the UI can explain. Messages never contain keys. */
export type ProviderErrorKind =
  | "unreachable" // connection refused, DNS, offline
  | "timeout"
  | "unauthorized" // 401/403: wrong or missing key
  | "rate-limited" // 429
  | "server" // 5xx
  | "model-missing" // e.g. Ollama "model not found": run `ollama pull ...`
  | "cors" // the server refused the app's origin
  | "bad-response" // malformed JSON, cut stream
  | "aborted" // the user pressed Stop
  | "tools-unsupported" // the model has no native tool calling (Ollama 400 "… does not support tools"): use the JSON protocol
  | "context-too-long" // the prompt cannot fit the model's context window even shortened; nothing was sent
  | "not-configured";

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status?: number,
    /** The service said when to try again (Gemini's RetryInfo.retryDelay, a Retry-After header). */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "ProviderError";
  }

  /** Worth retrying for an idempotent call. */
  get retryable(): boolean {
    return this.kind === "rate-limited" || this.kind === "server" || this.kind === "unreachable" || this.kind === "timeout";
  }
}

/**
 * The model's turn ended before its answer was complete: cut at the length limit (Ollama done_reason
 * "length", Gemini MAX_TOKENS) or stopped by the provider (Gemini SAFETY, RECITATION, a blocked prompt).
 * Keeps what did arrive: a caller may ask again knowing why (askJson), but never use it as the answer.
 */
export class IncompleteAnswerError extends ProviderError {
  /** A cut at the length limit: see LengthCut (whileThinking false when not said). */
  readonly limit?: number;
  readonly whileThinking: boolean;
  readonly moreRoom?: string;

  constructor(
    readonly cut: "length" | "stopped",
    readonly partial: string,
    detail?: string,
    /** The model's id ("gemini:gemini-2.5-flash"), named in the message when known. */
    model?: string,
    length: LengthCut = {},
  ) {
    // Lower case: callers put it after "Could not <what>: "; plainError makes it a sentence for the chat.
    super(
      "bad-response",
      cut === "length"
        ? `the answer${model ? ` from ${model}` : ""} was cut off at the model's length limit${length.whileThinking ? " while the model was still thinking" : ""}`
        : `the model${model ? ` ${model}` : ""} stopped without finishing its answer (${detail || "no reason given"})`,
    );
    this.name = "IncompleteAnswerError";
    this.limit = length.limit;
    this.whileThinking = length.whileThinking === true;
    this.moreRoom = length.moreRoom;
  }
}

/**
 * The server never answered (a timeout, or down): a second request to it will not fare better, so a failed
 * preliminary call (Ollama's /api/show) is the error to report, rather than waiting again for the real one.
 */
export function isNoAnswer(err: unknown): err is ProviderError {
  return err instanceof ProviderError && (err.kind === "timeout" || err.kind === "unreachable");
}

/** Re-exported so provider code keeps one import; the rule lives in core/util/errors.ts. */
export { isAbortError } from "../util/errors";
