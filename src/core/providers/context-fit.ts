/**
 * Making a request fit the model's context window, for every provider and every caller (chat, agent mode,
 * workflows, askJson/askModel): a prompt longer than the window is not sent as is, because Ollama then
 * silently drops its START (the system prompt and the tool list go first) and a small model answers
 * nonsense. In order: earlier conversation turns are dropped, oldest first; then quoted material (tool
 * results, note excerpts) is shortened, longest first, with a marker saying what was cut; when even that
 * cannot fit, ContextWindowError before anything is sent. System messages, the tool list, the output
 * schema and every other message (the question, the current turn's tool calls) are never touched. What
 * was cut is reported (ContextFit) so the user can be told: the model sees the markers, the user would not.
 */
import { isCjk } from "../indexing/text-tokenizer";
import type { ChatMessage, ChatRequest, ContextFit } from "../ports/chat-model";
import { countOf, cutAt, formatCount } from "../util/text";
import { ProviderError } from "./provider-error";

/** Room for the answer when the request sets no maxTokens. */
const REPLY_BUDGET = 1024;
/**
 * A rough estimate per script; over-estimating costs a little memory, under-estimating cuts the prompt.
 * Latin-script text averages about 3.5 characters per token; Cyrillic, Greek, Arabic, Indic and the like
 * about 2; a Chinese, Japanese or Korean character (or an emoji) is a token or more on every tokenizer.
 */
const CHARS_PER_TOKEN = 3.5;
const NON_LATIN_CHARS_PER_TOKEN = 2;
/** Role markers and template text per message. */
const TOKENS_PER_MESSAGE = 8;
/** Every chat model has at least this window: below it, no need to ask the provider for the model's maximum. */
export const MIN_MODEL_WINDOW = 4096;

/**
 * Tokens the request will need: every message, the tool list, the output schema and the reply. `prompt`:
 * its promptTokens when already measured, so one request is read through once (it only changes when
 * messages are cut; a cap does not change it).
 */
export function estimateTokens(request: ChatRequest, prompt = promptTokens(request)): number {
  return prompt + (request.maxTokens ?? REPLY_BUDGET);
}

/** Tokens of the request without its reply: a pass over every message, the tool list and the schema. */
export function promptTokens(request: ChatRequest): number {
  let tokens = 0;
  for (const m of request.messages) {
    tokens += textTokens(m.content);
    if (m.toolCalls?.length) tokens += textTokens(JSON.stringify(m.toolCalls));
  }
  if (request.tools?.length && request.toolChoice !== "none") tokens += textTokens(JSON.stringify(request.tools));
  if (request.jsonSchema) tokens += textTokens(JSON.stringify(request.jsonSchema));
  return Math.ceil(tokens) + request.messages.length * TOKENS_PER_MESSAGE;
}

/** Tokens of one text, by script (see CHARS_PER_TOKEN). */
function textTokens(text: string): number {
  let latin = 0;
  let other = 0;
  let dense = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x0300) latin++;
    // CJK punctuation, full-width forms and surrogates (emoji, rare ideographs) count as CJK does.
    else if (isCjk(c) || (c >= 0x3000 && c <= 0x303f) || (c >= 0xd800 && c <= 0xdfff) || (c >= 0xff00 && c <= 0xffef)) dense++;
    else other++;
  }
  return latin / CHARS_PER_TOKEN + other / NON_LATIN_CHARS_PER_TOKEN + dense;
}

/** True when the request may exceed the smallest window, so the model's own maximum is worth asking for. */
export function needsModelWindow(request: ChatRequest, prompt = promptTokens(request)): boolean {
  return estimateTokens(request, prompt) > MIN_MODEL_WINDOW;
}

/** History placed in a prompt: these messages may be left out, oldest first, to fit the window. */
export function asEarlierTurns(history: readonly ChatMessage[]): ChatMessage[] {
  return history.map((m) => ({ ...m, earlierTurn: true }));
}

/** The window a request must fit, and what to tell the user when it cannot. */
export interface ContextWindow {
  /** Tokens allowed for the whole request, the reply included. */
  tokens: number;
  /** "ollama:llama3.1:8b" */
  model: string;
  /** How to get a larger window, as a clause after "to send it, " ("raise …", "use a model with …"). */
  remedy: string;
}

/** The prompt cannot fit the model's window even with every allowed cut: nothing was sent. */
export class ContextWindowError extends ProviderError {
  constructor(
    readonly needed: number,
    readonly allowed: number,
    model: string,
    remedy: string,
  ) {
    super(
      "context-too-long",
      `The prompt for ${model} needs about ${formatCount(needed)} tokens but its context window allows ${formatCount(allowed)}, ` +
        `even with earlier conversation turns left out and long tool results and excerpts shortened; nothing was sent. To send it, ${remedy}.`,
    );
    this.name = "ContextWindowError";
  }
}

/** A request as it will be sent, and what was cut to make it fit (null: nothing). */
export interface FittedRequest {
  request: ChatRequest;
  fit: ContextFit | null;
}

/**
 * The request itself when it fits; else a copy with the cuts described above; else ContextWindowError.
 * A capped answer's room gives way first, down to the room an uncapped answer gets (REPLY_BUDGET): a small
 * *Ollama context limit* then still runs a call whose budget is larger than what the window has left.
 * `prompt`: the asked request's promptTokens, when the caller has measured it. `tokens` is the estimate of
 * the request as fitted, its reply included (what Ollama's num_ctx is sized to).
 */
export function fitRequest(asked: ChatRequest, window: ContextWindow, prompt = promptTokens(asked)): FittedRequest & { tokens: number } {
  const limit = Math.floor(window.tokens);
  const request = withAnswerRoomFitted(asked, limit, prompt);
  const asSent = estimateTokens(request, prompt);
  if (asSent <= limit) return { request, fit: null, tokens: asSent };
  const fits = (messages: ChatMessage[]) => estimateTokens({ ...request, messages }) <= limit;
  const report = (messages: ChatMessage[], shortened: ContextFit["shortened"] = { toolResults: 0, excerpts: 0 }) => ({
    request: { ...request, messages },
    fit: { model: window.model, tokens: limit, droppedMessages: request.messages.length - messages.length, shortened },
    tokens: estimateTokens({ ...request, messages }),
  });

  // 1. Earlier turns, oldest first; an assistant turn left at the front goes too (some providers reject a
  // conversation that opens with the model speaking).
  let messages = request.messages;
  while (!fits(messages)) {
    const oldest = messages.findIndex((m) => m.earlierTurn);
    if (oldest < 0) break;
    messages = messages.filter((_, i) => i !== oldest);
    const next = messages.findIndex((m) => m.earlierTurn);
    if (next >= 0 && messages[next].role === "assistant") messages = messages.filter((_, i) => i !== next);
  }
  if (fits(messages)) return report(messages);

  // 2. Quoted material, cut to a common length: the longest parts lose the most, short ones stay whole.
  const parts = messages.map(quotedSpan);
  const longest = Math.max(0, ...parts.map((p) => (p ? p.end - p.start : 0)));
  const cutTo = (keep: number) => messages.map((m, i) => shorten(m, parts[i], keep));
  if (longest > 0 && fits(cutTo(0))) {
    let lo = 0; // always fits
    let hi = longest;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fits(cutTo(mid))) lo = mid;
      else hi = mid - 1;
    }
    const cut = cutTo(lo);
    const shortened = { toolResults: 0, excerpts: 0 };
    cut.forEach((m, i) => {
      if (m !== messages[i]) shortened[parts[i]?.kind === "excerpts" ? "excerpts" : "toolResults"]++;
    });
    return report(cut, shortened);
  }
  const needed = estimateTokens({ ...request, messages: cutTo(0) });
  throw new ContextWindowError(needed, limit, window.model, window.remedy);
}

/** The request with its answer cap lowered to what the window leaves beside the prompt, not below REPLY_BUDGET (or its own cap). */
function withAnswerRoomFitted(request: ChatRequest, limit: number, prompt: number): ChatRequest {
  const cap = request.maxTokens;
  if (cap === undefined) return request;
  const left = limit - prompt;
  const room = Math.max(Math.min(cap, REPLY_BUDGET), Math.min(cap, left));
  return room === cap ? request : { ...request, maxTokens: room };
}

/**
 * Several fitted requests of one answer (an agent run's steps) as one report: each step re-fits the same
 * growing conversation, so the largest count of each kind is what the answer as a whole lost.
 */
export function mergeFits(a: ContextFit | null, b: ContextFit | null): ContextFit | null {
  if (!a || !b) return a ?? b;
  return {
    ...b,
    droppedMessages: Math.max(a.droppedMessages, b.droppedMessages),
    shortened: { toolResults: Math.max(a.shortened.toolResults, b.shortened.toolResults), excerpts: Math.max(a.shortened.excerpts, b.shortened.excerpts) },
  };
}

/**
 * The notice for the user (code "context-fitted"): "To fit llama3.1:8b's context window (16,384 tokens), this
 * answer …". `subject` names what lost the parts ("this request" in an agent's log, "this step" in a workflow).
 */
export function fitNotice(fit: ContextFit, subject = "this answer"): { code: string; message: string } {
  const cuts: string[] = [];
  const dropped = fit.droppedMessages;
  if (dropped > 0) cuts.push(`left out the ${dropped === 1 ? "earliest message" : countOf(dropped, "earliest message")} of the conversation`);
  const shortened: string[] = [];
  if (fit.shortened.toolResults > 0) shortened.push(countOf(fit.shortened.toolResults, "tool result"));
  if (fit.shortened.excerpts > 0) shortened.push("the excerpts given with the question");
  if (shortened.length) cuts.push(`shortened ${shortened.join(" and ")}`);
  // "ollama:llama3.1:8b" → "llama3.1:8b": the provider is not what the user named.
  const model = fit.model.slice(fit.model.indexOf(":") + 1);
  return { code: "context-fitted", message: `To fit ${model}'s context window (${formatCount(fit.tokens)} tokens), ${subject} ${cuts.join(" and ")}.` };
}

/** The characters of a message that may be shortened: its marked span, or a tool result's whole content. */
function quotedSpan(m: ChatMessage): Span | null {
  const span = m.quoted ?? (m.role === "tool" ? { start: 0, end: m.content.length, kind: "tool-result" as const } : null);
  if (!span) return null;
  const start = Math.max(0, Math.min(span.start, m.content.length));
  const end = Math.max(start, Math.min(span.end, m.content.length));
  return end > start ? { start, end, kind: span.kind } : null;
}

type Span = NonNullable<ChatMessage["quoted"]>;

function shorten(m: ChatMessage, span: Span | null, keep: number): ChatMessage {
  if (!span || span.end - span.start <= keep) return m;
  const text = m.content.slice(span.start, span.end);
  // Never half a surrogate pair: it would reach the model as garbage.
  const head = cutAt(text, keep);
  const cut = text.length - head.length;
  const marker = `\n[… ${formatCount(cut)} of ${formatCount(text.length)} characters cut here by Krypton to fit the model's context window …]\n`;
  return { ...m, content: m.content.slice(0, span.start) + head + marker + m.content.slice(span.end) };
}
