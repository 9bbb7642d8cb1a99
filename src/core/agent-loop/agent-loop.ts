/**
 * The agent loop: ask the model, run the tools it asks for, feed the results back, repeat until it
 * answers. Native tool calling where the model has it, the JSON action protocol otherwise (see
 * json-protocol.ts). Bounded by steps, wall-clock time and a guard against repeating the same call.
 * Host-neutral: the model, the tools (through AgentToolbox) and the user's confirmation are ports.
 */
import type { ChatEvent, ChatMessage, ChatModel, ChatRequest, ContextFit, FinishReason, TokenUsage, ToolCall } from "../ports/chat-model";
import type { Clock } from "../ports/clock";
import { asEarlierTurns, fitNotice, mergeFits } from "../providers/context-fit";
import { redact } from "../util/redact";
import { isNoAnswer, ProviderError } from "../providers/provider-error";
import { finishedText } from "../providers/turn-views";
import { AbortedError, isAbortError } from "../util/errors";
import { AgentToolbox } from "./agent-toolbox";
import { clip, countOf } from "../util/text";
import {
  emptyReplyNudge,
  jsonSystemPrompt,
  nativeSystemPrompt,
  reminderMessage,
  stepLimitMarker,
  stepLimitMessage,
} from "./agent-prompts";
import type { AgentEndReason, AgentLoopEvent, AgentLoopResult, AgentProtocol, ConfirmPort, ExchangeEntry, LoopStep } from "./agent-types";
import { AGENT_ACTION_JSON_SCHEMA, correctionMessage, cutOffCorrection, FinalResponseStreamer, parseAction, recoverTextToolCalls, startsLikeTextCall, textFinalResponse } from "./json-protocol";
import { cutOffAdvice, cutOffReason, type AnswerCut } from "../model/ask-model";
import { languageInstruction } from "../model/answer-language";

export interface AgentLoopOptions {
  model: ChatModel;
  toolbox: AgentToolbox;
  question: string;
  /** Earlier turns of the conversation (user/assistant text), oldest first, without the question. */
  history?: ChatMessage[];
  /** A preset's system prompt; default: Krypton's. */
  persona?: string;
  /** Extra system text (MCP servers' instructions). */
  instructions?: readonly string[];
  clock: Clock;
  maxSteps?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  confirm?: ConfirmPort;
  /** Tools the user allowed for this conversation; the caller keeps it between turns. */
  approvals?: Set<string>;
  /** Models known to lack native tools (per model id); the caller keeps it between turns. */
  noNativeTools?: Set<string>;
  /** Removed from /log (API keys, tokens). */
  secrets?: readonly string[];
  /**
   * Sampling for every turn (a workflow task's config): temperature and topP where the turn sets none (the
   * JSON action protocol keeps its 0, which small models need to write valid actions), and a cap per turn.
   */
  sampling?: Pick<ChatRequest, "temperature" | "topP" | "maxTokens">;
}

export const AGENT_DEFAULTS = { maxSteps: 8, timeoutMs: 180_000 };
/** Corrections sent for invalid JSON before the step gives up. */
const MAX_CORRECTIONS = 2;
/** The same tool with the same arguments this many times in a turn is blocked. */
const REPEAT_LIMIT = 3;
/** This many blocked calls end the turn. */
const BLOCK_LIMIT = 3;
const STEP_RESULT_CHARS = 2000;

class TimeLimit extends Error {}
class FallBackToJson extends Error {}

/** Models that answered "does not support tools" once, across every loop in this process. */
const processNoNativeTools = new Set<string>();

export async function* runAgentLoop(options: AgentLoopOptions): AsyncGenerator<AgentLoopEvent, AgentLoopResult> {
  const { model, toolbox, clock, question } = options;
  const maxSteps = Math.max(1, options.maxSteps ?? AGENT_DEFAULTS.maxSteps);
  const timeoutMs = options.timeoutMs ?? AGENT_DEFAULTS.timeoutMs;
  const approvals = options.approvals ?? new Set<string>();
  const noNative = options.noNativeTools ?? processNoNativeTools;
  const secrets = options.secrets ?? [];

  // One controller for the model and the tools: the user's Stop or the time limit fire it.
  const controller = new AbortController();
  let timedOut = false;
  const onStop = () => controller.abort();
  options.signal?.addEventListener("abort", onStop, { once: true });
  if (options.signal?.aborted) controller.abort();
  const cancelTimer = clock.setTimer(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const signal = controller.signal;

  const steps: LoopStep[] = [];
  const exchange: ExchangeEntry[] = [];
  const usage = { promptTokens: 0, completionTokens: 0 };
  const repeats = new Map<string, number>();
  let blocks = 0;
  let answer = "";
  let endReason: AgentEndReason = "answer";
  /** What the run's requests lost to fit the window, merged over every step: one notice per answer. */
  let fit = null as ContextFit | null; // set in handleEvent: the assertion keeps TypeScript from narrowing it to null

  // A server that did not answer /api/show will not answer the chat request either (isNoAnswer): that is the
  // error, said after one wait rather than two. Other failures leave it to the chat request to explain.
  let unanswered = null as ProviderError | null; // set in the callback: the assertion keeps TypeScript from narrowing it to null
  const caps = await model.capabilities(signal).catch((err: unknown) => {
    if (isNoAnswer(err)) unanswered = err;
    return { tools: false };
  });
  let protocol: AgentProtocol = caps.tools && !noNative.has(model.id) && toolbox.tools.length > 0 ? "native" : "json";

  const base = (): ChatMessage[] => [
    {
      role: "system",
      content:
        protocol === "native"
          ? nativeSystemPrompt(options.persona, options.instructions)
          : jsonSystemPrompt(options.persona, toolbox.tools.map((t, i) => ({ ...toolbox.specs()[i], name: t.name })), options.instructions),
    },
    ...asEarlierTurns(options.history ?? []),
    { role: "user", content: question },
  ];
  let messages = base();
  const language = languageInstruction(question);

  /**
   * One streamed model call; the callback sees text as it arrives. No answer cap (maxTokens) unless the caller
   * sets one (a workflow task's config): the user watches the run and can stop it, and the run's time limit
   * ends a model that loops (see ANSWER_BUDGET).
   */
  const turn = async function* (
    request: Omit<ChatRequest, "messages" | "signal">,
    extra: ChatMessage[],
    onText?: (text: string) => string,
  ): AsyncGenerator<AgentLoopEvent, TurnResult> {
    const sent: ChatMessage[] = [...messages, ...extra, { role: "system", content: language }];
    const result: TurnResult = { text: "", thinking: "", calls: [], finish: "stop" };
    let fitted: Extract<ChatEvent, { type: "fitted" }> | null = null;
    try {
      for await (const event of model.turn({ ...options.sampling, ...request, messages: sent, signal })) {
        if (event.type === "fitted") fitted = event;
        yield* handleEvent(event, result, onText);
      }
    } finally {
      // The log shows what the model really read: the fitted messages (markers in shortened results) and what was cut.
      exchange.push({
        request: (fitted?.messages ?? sent).map((m) => ({ ...m, content: redact(m.content, secrets) })),
        ...(fitted ? { fitted: fitNotice(fitted.fit, "this request").message } : {}),
        reply: redact(result.text, secrets),
        ...(result.calls.length ? { toolCalls: result.calls } : {}),
      });
    }
    // A turn the provider stopped (Gemini SAFETY, a blocked prompt) has no answer to correct or keep.
    if (result.finish === "other") requireFinished(result);
    return result;
  };
  function* handleEvent(event: ChatEvent, result: TurnResult, onText?: (text: string) => string): Generator<AgentLoopEvent> {
    switch (event.type) {
      case "fitted":
        fit = mergeFits(fit, event.fit);
        break;
      case "text": {
        result.text += event.text;
        const shown = onText ? onText(event.text) : "";
        if (shown) yield { type: "token", text: shown };
        break;
      }
      case "thinking":
        result.thinking += event.text;
        break;
      case "tool-call":
        result.calls.push(event.call);
        break;
      case "end":
        result.finish = event.finishReason;
        result.detail = event.detail;
        result.providerData = event.providerData;
        if (event.finishReason === "length") result.cut = { limit: event.limit, whileThinking: event.whileThinking === true, moreRoom: event.moreRoom };
        if (event.usage) {
          result.usage = event.usage;
          usage.promptTokens += event.usage.promptTokens ?? 0;
          usage.completionTokens += event.usage.completionTokens ?? 0;
        }
        break;
    }
  }

  /** complete()'s rule for the loop's own turns: an answer cut or stopped early throws IncompleteAnswerError. */
  function requireFinished(result: TurnResult): void {
    finishedText({ text: result.text, finishReason: result.finish, detail: result.detail, ...result.cut }, model.id);
  }

  /** Runs one call through the guard and the toolbox; returns the step. */
  async function runCall(step: number, call: ToolCall, thought: string, tokens?: TokenUsage): Promise<LoopStep> {
    const tool = toolbox.find(call.name);
    const name = tool?.name ?? call.name;
    const key = `${name}\u0000${stableJson(call.arguments)}`;
    const seen = (repeats.get(key) ?? 0) + 1;
    repeats.set(key, seen);
    const started = clock.now();
    const record = (result: string, isError: boolean, outcome: LoopStep["outcome"]): LoopStep => ({
      step,
      ...(thought.trim() ? { thought: clip(thought.trim(), STEP_RESULT_CHARS) } : {}),
      tool: { name, arguments: call.arguments, callId: call.id },
      result,
      isError,
      outcome,
      durationMs: clock.now() - started,
      ...(tokens ? { usage: tokens } : {}),
    });
    if (seen >= REPEAT_LIMIT) {
      blocks++;
      return record(
        `Blocked: you already called ${name} with exactly these arguments ${countOf(seen - 1, "time")} in this turn. Use the results you have, try different arguments, or answer.`,
        true,
        "blocked",
      );
    }
    const ran = await toolbox.run({ ...call, name }, { signal, confirm: options.confirm, approvals });
    // A tool (an MCP server echoing its own token) must not hand a secret to the model, the steps or the transcript.
    return record(redact(ran.text, secrets), ran.isError, ran.outcome);
  }

  try {
    if (unanswered) throw unanswered;
    let step = 0;
    while (true) {
      if (signal.aborted) throw timedOut ? new TimeLimit() : new AbortedError();
      if (step >= maxSteps) {
        endReason = "step-limit";
        yield* synthesize();
        break;
      }
      step++;
      const left = maxSteps - step + 1;
      const reminder: ChatMessage[] = left === 2 ? [{ role: "system", content: reminderMessage(2) }] : [];

      if (protocol === "native") {
        let next: "continue" | "answered";
        try {
          next = yield* nativeStep(step, reminder);
        } catch (err) {
          if (!(err instanceof FallBackToJson)) throw err;
          yield { type: "notice", code: "agent-json-fallback", message: `${model.id} cannot call tools natively here; using the JSON action protocol.` };
          protocol = "json";
          messages = base();
          step--;
          continue;
        }
        if (next === "answered") break;
      } else {
        const next = yield* jsonStep(step, reminder);
        if (next === "answered") break;
      }
      if (blocks >= BLOCK_LIMIT) {
        endReason = "loop-guard";
        answer = "I stopped because I kept repeating the same tool calls without getting further. Try rephrasing the request or giving more detail.";
        yield { type: "token", text: answer };
        break;
      }
    }
  } catch (err) {
    if (err instanceof TimeLimit || (timedOut && (isAbortError(err) || signal.aborted))) {
      endReason = "time-limit";
      const text = `${answer ? "\n\n" : ""}*(Stopped at the time limit of ${seconds(timeoutMs)} s before the agent finished.)*`;
      answer += text;
      yield { type: "token", text };
    } else if (isAbortError(err) || options.signal?.aborted) {
      endReason = "stopped";
    } else {
      // A failed run may be why the user looks: say what the prompts lost, then the error.
      if (fit) yield { type: "notice", ...fitNotice(fit) };
      throw err;
    }
  } finally {
    cancelTimer();
    options.signal?.removeEventListener("abort", onStop);
  }
  if (fit) yield { type: "notice", ...fitNotice(fit) };
  const limit = limitText(endReason, { maxSteps, timeoutMs });
  const result: AgentLoopResult = { answer, steps, usage, protocol, endReason, ...(limit ? { limit } : {}), exchange };
  yield { type: "done", result };
  return result;

  async function* nativeStep(step: number, reminder: ChatMessage[]): AsyncGenerator<AgentLoopEvent, "continue" | "answered"> {
    let streamed = "";
    let malformedRetries = 0;
    /** Small models sometimes reply with nothing (often right after a tool result): asked once more, plainly. */
    let nudge: ChatMessage[] = [];
    let result: TurnResult;
    while (true) {
      // Text is shown as it comes unless it starts like a tool call written as text (checked at the end): JSON,
      // or a fence or call marker around it. Until its start tells, it waits: a host cannot take back what it
      // printed (the CLI's stdout), and a marker may arrive split over chunks.
      let held = false;
      let undecided = "";
      streamed = "";
      const onText = (text: string) => {
        if (held) return "";
        if (!streamed) {
          undecided += text;
          const likeCall = startsLikeTextCall(undecided.trimStart());
          held = likeCall === true;
          if (likeCall !== false) return "";
          text = undecided;
        }
        streamed += text;
        return text;
      };
      try {
        result = yield* turn({ tools: toolbox.specs(), toolChoice: "auto" }, [...reminder, ...nudge], onText);
      } catch (err) {
        if (err instanceof ProviderError && (err.kind === "tools-unsupported" || /does not support tools/i.test(err.message))) {
          noNative.add(model.id);
          throw new FallBackToJson();
        }
        throw err;
      }
      const empty = result.finish === "stop" && result.calls.length === 0 && !result.text.trim();
      if (empty && nudge.length === 0) {
        if (streamed) yield { type: "retract", text: streamed };
        nudge = [{ role: "user", content: emptyReplyNudge() }];
        continue;
      }
      if (result.finish !== "malformed-tool-call") break;
      if (++malformedRetries > 1) throw new FallBackToJson();
      if (streamed) yield { type: "retract", text: streamed };
    }
    if (result.calls.length === 0 && result.text) {
      const recovered = recoverTextToolCalls(result.text, (name) => toolbox.find(name) !== undefined);
      recovered.forEach((call, i) => result.calls.push({ id: recovered.length === 1 ? `text-${step}` : `text-${step}-${i + 1}`, ...call }));
    }
    if (result.calls.length === 0) {
      requireFinished(result); // an answer cut at the length limit is not the answer
      const written = textFinalResponse(result.text);
      answer = written ?? (result.text.trim() ? result.text : "");
      if (written !== null && streamed) yield { type: "retract", text: streamed };
      // Held text that was not a tool call after all is the answer (or a JSON final answer's response): show it now.
      if ((!streamed || written !== null) && answer) yield { type: "token", text: answer };
      if (!answer.trim()) throw new ProviderError("bad-response", `The model (${model.id}) returned an empty answer. Try again, or try another model.`);
      return "answered";
    }
    if (streamed) yield { type: "retract", text: streamed };
    messages.push({ role: "assistant", content: result.text, toolCalls: result.calls, providerData: result.providerData });
    let first = true;
    for (const call of result.calls) {
      const done = await runCall(step, call, first ? result.text || result.thinking : "", first ? result.usage : undefined);
      first = false;
      steps.push(done);
      yield { type: "step", step: done };
      messages.push({ role: "tool", content: done.result, toolCallId: call.id, toolName: call.name, isError: done.isError });
    }
    return "continue";
  }

  async function* jsonStep(step: number, reminder: ChatMessage[]): AsyncGenerator<AgentLoopEvent, "continue" | "answered"> {
    const corrections: ChatMessage[] = [];
    let noThinking = false;
    for (let attempt = 0; ; attempt++) {
      const streamer = new FinalResponseStreamer();
      let shown = "";
      const request: Omit<ChatRequest, "messages" | "signal"> = { jsonSchema: AGENT_ACTION_JSON_SCHEMA, temperature: 0, ...(noThinking ? { noThinking } : {}) };
      const result = yield* turn(request, [...reminder, ...corrections], (t) => {
        const out = streamer.push(t);
        shown += out;
        return out;
      });
      // A cut reply is invalid even when what arrived parses: whatever came after the cut is missing.
      const { cut } = result;
      const parsed: ReturnType<typeof parseAction> = cut ? { ok: false, problem: cutOffReason(cut, "it") } : parseAction(result.text);
      // A reply that looked like a final answer but did not parse: take back what was shown of it.
      if (!parsed.ok && shown) yield { type: "retract", text: shown };
      if (!parsed.ok) {
        if (attempt >= MAX_CORRECTIONS) {
          // A model that keeps answering in prose has answered: better its words than an error.
          if (!cut && result.text.trim() && !/[{[]/.test(result.text.trim()[0])) {
            answer = result.text.trim();
            yield { type: "notice", code: "agent-invalid-json", message: "The model did not follow the JSON action format; its reply is shown as is." };
            yield { type: "token", text: answer };
            return "answered";
          }
          throw new ProviderError(
            "bad-response",
            `The model (${model.id}) did not return a valid action (${parsed.problem}), even after ${MAX_CORRECTIONS} corrections. ${(cut && cutOffAdvice(cut)) ?? "Try again or use a larger model."}`,
          );
        }
        if (cut) {
          // askJson's repair for a cut: the step is asked again with the note alone, the cut reply not sent
          // back (a model shown its own loop tends to go on with it); one that spent its room thinking is
          // asked with thinking off where the provider can.
          corrections.splice(0, corrections.length, { role: "user", content: cutOffCorrection(cut) });
          noThinking = cut.whileThinking;
        } else {
          corrections.push({ role: "assistant", content: result.text }, { role: "user", content: correctionMessage(parsed.problem) });
        }
        continue;
      }
      const action = parsed.action;
      if (action.action === "final") {
        answer = action.response;
        if (!streamer.started) yield { type: "token", text: answer };
        return "answered";
      }
      messages.push({ role: "assistant", content: result.text });
      const call: ToolCall = { id: `json-${step}`, name: action.tool, arguments: action.arguments };
      const done = await runCall(step, call, action.thought ?? "", result.usage);
      steps.push(done);
      yield { type: "step", step: done };
      if (done.isError) {
        messages.push({ role: "user", content: `Tool ${done.tool.name} failed: ${done.result}\nCorrect the call, choose another tool, or answer.` });
      } else {
        // The result may be shortened to fit the model's window, as a native tool message may.
        const lead = `Result of ${done.tool.name}:\n`;
        messages.push({ role: "user", content: `${lead}${done.result}`, quoted: { start: lead.length, end: lead.length + done.result.length, kind: "tool-result" } });
      }
      return "continue";
    }
  }

  /** At the step limit: one call without tools writes the answer from what was gathered. */
  async function* synthesize(): AsyncGenerator<AgentLoopEvent, void> {
    const limit: ChatMessage[] = [{ role: "system", content: stepLimitMessage(maxSteps) }];
    const request: Omit<ChatRequest, "messages" | "signal"> = protocol === "native" ? { tools: toolbox.specs(), toolChoice: "none" } : {};
    const result = yield* turn(request, limit, (t) => t);
    requireFinished(result);
    answer = result.text.trim() ? result.text : "I could not finish within the step limit.";
    if (!result.text.trim()) yield { type: "token", text: answer };
    const marker = stepLimitMarker(maxSteps);
    answer += marker;
    yield { type: "token", text: marker };
  }
}

/** AgentLoopResult.limit: which limit ended the loop, in words, with the number it had. */
function limitText(reason: AgentEndReason, limits: { maxSteps: number; timeoutMs: number }): string | undefined {
  switch (reason) {
    case "step-limit":
      return `stopped at the step limit (${countOf(limits.maxSteps, "step")})`;
    case "time-limit":
      return `stopped at the time limit (${seconds(limits.timeoutMs)} s)`;
    case "loop-guard":
      return `stopped by the loop guard (${BLOCK_LIMIT} repeated tool calls blocked)`;
    default:
      return undefined;
  }
}

/** Whole seconds, or tenths below 10 s (a test's or a tiny setting's limit still reads as a number). */
function seconds(ms: number): string {
  return ms >= 10_000 ? String(Math.round(ms / 1000)) : String(Math.round(ms / 100) / 10);
}

interface TurnResult {
  text: string;
  thinking: string;
  calls: ToolCall[];
  finish: FinishReason;
  detail?: string;
  /** finish "length": how the turn was cut (the cap sent, whether the model spent it thinking). */
  cut?: AnswerCut;
  usage?: TokenUsage;
  providerData?: unknown;
}

/** JSON with sorted keys, so {a,b} and {b,a} count as the same arguments. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
