import { z } from "zod";
import { askJson } from "../model/ask-json";
import { cutOffAdvice, cutOffReason } from "../model/ask-model";
import { ANSWER_BUDGET } from "../model/answer-budget";
import { stripThinkBlocks } from "../util/think-blocks";
import { emptyReplyNudge } from "../agent-loop/agent-prompts";
import { IncompleteAnswerError } from "../providers/provider-error";
import { collectTurn, finishedText, reportingFits } from "../providers/turn-views";
import { fitNotice, mergeFits } from "../providers/context-fit";
import { AgentError } from "../notes/agent-error";
import type { ChatMessage, ChatModel, ChatRequest, ContextFit } from "../ports/chat-model";
import { parseModelRef, type ModelRef } from "../providers/model-ref";
import { geminiKeyFix } from "../providers/provider-factory";
import { errorMessage, isAbortError } from "../util/errors";
import { formatCount } from "../util/text";
import type { Flow, FlowAgent } from "./flow-schema";
import type { FlowAgentOutcome, FlowAgentRunner } from "./flow-engine";
import { outputChoices, outputType } from "./flow-validate";
import { fillTemplate, hasPlaceholder, valueText, type FlowValue } from "./flow-values";

type ModelAgent = Exclude<FlowAgent, { type: "transform" }>;

/**
 * Runs a task with tools through the agent loop; absent where the host has no agent mode. `limit`: the
 * loop ended at a limit before the model finished (AgentLoopResult's endReason and limit).
 */
export type ToolTaskRunner = (request: {
  model: ChatModel;
  messages: ChatMessage[];
  toolNames: string[];
  maxIterations?: number;
  /** The task's config.temperature, topP and maxTokens (a cap per model turn). */
  sampling: Pick<ChatRequest, "temperature" | "topP" | "maxTokens">;
  signal?: AbortSignal;
  /** Told each tool call that failed or was refused, as it happens (FlowStepReport.toolError). */
  toolError: (text: string) => void;
}) => Promise<{ text: string; tokens?: number; limit?: FlowAgentOutcome["limit"] }>;

export interface FlowModelRunnerOptions {
  /** A chat model for a provider/model reference, or null when it cannot be used (no Gemini key). */
  modelFor: (ref: ModelRef) => ChatModel | null;
  runToolTask?: ToolTaskRunner;
  /** The host the flow runs in (Host.platform.kind), so a missing Gemini key says how this host takes one. */
  hostKind?: "obsidian" | "cli";
}

/**
 * The markers around a value: `<<<` and `>>>`, longer when the value itself holds them, so a value cannot
 * close its own markers early (a line ">>>" in an input, then text read as instructions).
 */
function markersFor(value: string): { open: string; close: string } {
  let n = 3;
  while (value.includes(">".repeat(n)) || value.includes("<".repeat(n))) n++;
  return { open: "<".repeat(n), close: ">".repeat(n) };
}

/** Marks where a value starts and ends inside a prompt, so text in a value is read as data, never as instructions. */
function delimited(value: string): string {
  const { open, close } = markersFor(value);
  return `\n${open}\n${value}\n${close}\n`;
}

const verdictSchema = z.object({ success: z.boolean(), feedback: z.string() });

/** The model-backed agents of a flow: task (plain, typed or with tools) and verify. */
export function createFlowModelRunner(flow: Flow, options: FlowModelRunnerOptions): FlowAgentRunner {
  const models = new Map<string, ChatModel>();
  const modelOf = (agent: ModelAgent): ChatModel => {
    const text = agent.model ?? flow.defaultModel ?? "";
    const cached = models.get(text);
    if (cached) return cached;
    const ref = parseModelRef(text);
    if ("error" in ref) throw new AgentError(ref.error, "invalid-input");
    const model = options.modelFor(ref);
    if (!model) {
      const why = ref.provider !== "gemini" ? "the model is not configured" : `no Gemini API key is set${options.hostKind ? ` (${geminiKeyFix(options.hostKind)})` : ""}`;
      throw new AgentError(`cannot use ${text}: ${why}`, "no-model");
    }
    models.set(text, model);
    return model;
  };

  return {
    async run(agent, input, signal, report, runInput) {
      // Every model call of the step (plain, typed, verify, each agent-loop turn of a tool task) reports here,
      // before its request goes out: a step that fails later still says what was cut.
      let fit: ContextFit | null = null;
      const model = reportingFits(modelOf(agent), (f) => {
        fit = mergeFits(fit, f) ?? f;
        report.notice(fitNotice(fit, "this step").message);
      });
      const system = agent.prompt?.system?.trim() || `You are "${agent.name}", one step of a workflow. Do exactly the task you are given.`;
      try {
        if (agent.type === "verify") {
          const checked = input.type === "critique" ? input.input : input;
          const text = valueText(checked);
          const { open, close } = markersFor(text);
          const messages: ChatMessage[] = [
            { role: "system", content: system },
            {
              role: "user",
              content: `Check the text between ${open} and ${close} against these criteria: ${agent.params.task}\n${delimited(text)}\nAnswer as JSON: {"success": true|false, "feedback": "what is wrong and how to fix it, or why it passes"}.`,
            },
          ];
          const verdict = await askJson(model, messages, verdictSchema, { signal, temperature: agent.config?.temperature ?? 0, maxTokens: agent.config?.maxTokens ?? ANSWER_BUDGET.verdict, what: `run the verify agent "${agent.name}"` });
          return { output: { type: "critique", success: verdict.success, feedback: verdict.feedback, input: checked } };
        }
        const task = fillTemplate(agent.params.task, input, delimited, runInput);
        const prompt = hasPlaceholder(agent.params.task) ? task : `${task}\n\nInput:${delimited(valueText(input))}`;
        const messages: ChatMessage[] = [{ role: "system", content: system }, { role: "user", content: prompt }];
        const type = outputType(flow, agent);
        const choices = outputChoices(flow, agent);
        const tools = agent.params.toolNames ?? [];
        if (tools.length > 0) {
          if (!options.runToolTask) throw new AgentError(`agent "${agent.name}" uses tools, which need agent mode in this host`, "failed");
          const { temperature, topP, maxTokens } = agent.config ?? {};
          const result = await options.runToolTask({
            model,
            messages,
            toolNames: tools,
            maxIterations: agent.config?.maxIterations,
            sampling: { temperature, topP, maxTokens },
            signal,
            toolError: report.toolError,
          });
          return { output: { type: "string", data: result.text }, tokens: result.tokens, ...(result.limit ? { limit: result.limit } : {}) };
        }
        if (type === "string" && choices.length === 0) return await plainAnswer(model, messages, agent, signal);
        return { output: await typedAnswer(model, messages, agent, type, choices, signal) };
      } catch (err) {
        if (isAbortError(err) || signal?.aborted) throw err;
        throw err instanceof AgentError ? err : new AgentError(errorMessage(err), "failed");
      }
    },
  };
}

/**
 * The turn is read whole (complete()'s rule: a cut or stopped answer is an error) because the step reports
 * its tokens. Capped like askModel's answers (a run may go unwatched), at config.maxTokens when set. An empty
 * answer is asked for once more, as agent mode asks (emptyReplyNudge); a second one fails the step.
 */
async function plainAnswer(model: ChatModel, messages: ChatMessage[], agent: ModelAgent, signal: AbortSignal | undefined): Promise<{ output: FlowValue; tokens?: number }> {
  let tokens: number | undefined;
  for (const nudge of [[], [{ role: "user", content: emptyReplyNudge(false) }]] as ChatMessage[][]) {
    const turn = await plainTurn(model, [...messages, ...nudge], agent, signal);
    if (turn.tokens !== undefined) tokens = (tokens ?? 0) + turn.tokens;
    if (turn.answer) return { output: { type: "string", data: turn.answer }, tokens };
  }
  throw new AgentError(`the model gave "${agent.name}" an empty answer, even when asked once more. Try again, or try another model.`, "failed");
}

/** One turn of a plain task: its answer without reasoning blocks (empty when the model said nothing) and tokens. */
async function plainTurn(model: ChatModel, messages: ChatMessage[], agent: ModelAgent, signal: AbortSignal | undefined): Promise<{ answer: string; tokens?: number }> {
  const maxTokens = agent.config?.maxTokens ?? ANSWER_BUDGET.long;
  const outcome = await collectTurn(model.turn({ messages, signal, temperature: agent.config?.temperature, maxTokens, topP: agent.config?.topP }));
  let text: string;
  try {
    text = finishedText(outcome);
  } catch (err) {
    if (err instanceof IncompleteAnswerError && err.cut === "length") {
      const configured = agent.config?.maxTokens !== undefined;
      if (err.whileThinking) {
        // The cap sent had room to think on top of the step's budget, so the budget is named apart from it.
        const cut = { limit: err.limit ?? maxTokens, whileThinking: true, moreRoom: err.moreRoom };
        const budget = configured ? `config.maxTokens (${maxTokens}) and room to think` : `the step's default of ${formatCount(maxTokens)} tokens and room to think; set config.maxTokens to allow more`;
        throw new AgentError(`${cutOffReason(cut)} (${budget}). ${cutOffAdvice(cut)}`, "failed");
      }
      const limit = configured ? `config.maxTokens (${maxTokens}) is too small for this answer` : `it reached the default limit of ${formatCount(maxTokens)} tokens (set config.maxTokens for a longer answer)`;
      throw new AgentError(`${err.message}: ${limit}`, "failed");
    }
    throw err;
  }
  const usage = outcome.usage;
  const tokens = usage ? (usage.promptTokens ?? 0) + (usage.completionTokens ?? 0) : undefined;
  return { answer: stripThinkBlocks(text).trim(), tokens };
}

/** Numbers, booleans, lists and routing choices come back as structured output, validated. */
async function typedAnswer(
  model: ChatModel,
  messages: ChatMessage[],
  agent: ModelAgent,
  type: ReturnType<typeof outputType>,
  choices: string[],
  signal: AbortSignal | undefined,
): Promise<FlowValue> {
  const valueSchema = schemaFor(type, choices);
  const hint = choices.length > 0 ? `one of ${choices.map((c) => JSON.stringify(c)).join(", ")}` : `a ${type} value`;
  // The format request joins the task's own message: small models follow one message better than two.
  const last = messages[messages.length - 1];
  const ask: ChatMessage[] = [...messages.slice(0, -1), { ...last, content: `${last.content}\n\nAnswer as JSON: {"value": ${hint}}.` }];
  const { value } = await askJson(model, ask, z.object({ value: valueSchema }), { signal, temperature: agent.config?.temperature ?? 0, maxTokens: agent.config?.maxTokens ?? ANSWER_BUDGET.long, what: `run the task agent "${agent.name}"`, nearMisses: true });
  switch (type) {
    case "int":
      return { type: "int", data: value as number };
    case "double":
      return { type: "double", data: value as number };
    case "boolean":
      return { type: "boolean", data: value as boolean };
    case "string[]":
    case "int[]":
    case "double[]":
    case "boolean[]":
      return { type, data: value } as FlowValue;
    default:
      return { type: "string", data: String(value) };
  }
}

function schemaFor(type: ReturnType<typeof outputType>, choices: string[]): z.ZodType {
  switch (type) {
    case "int":
      return z.number().int();
    case "double":
      return z.number();
    case "boolean":
      return z.boolean();
    case "string[]":
      return z.array(z.string());
    case "int[]":
      return z.array(z.number().int());
    case "double[]":
      return z.array(z.number());
    case "boolean[]":
      return z.array(z.boolean());
    default:
      return choices.length > 0 ? z.enum(choices as [string, ...string[]]) : z.string();
  }
}
