import type { FlowRunResult, FlowStep } from "./flow-engine";
import type { Flow } from "./flow-schema";
import { valueText, type FlowValue } from "./flow-values";
import { countOf } from "../util/text";

/**
 * The run's result as text (what "copy", "insert" and `krypton flow run` print). A failed run has none: the
 * output of the step before the failure is not the flow's result, and shown as one it would be taken for it
 * (the trace keeps every step's output). A run stopped at a limit keeps its last output on purpose (see `onLimit`).
 */
export function resultText(result: FlowRunResult): string {
  return result.output && result.status !== "failed" ? valueText(result.output) : "";
}

/**
 * A run as scripts get it (`krypton flow run --json`, MCP run_workflow's structured result): one shape for
 * both. A type, not an interface, so that it passes as a tool's structured output (a plain record).
 */
export type FlowRunReport = {
  status: FlowRunResult["status"];
  result: string;
  message: string;
  path: string[];
  /** Why steps' searches matched by keywords only: each distinct remark once, in order, joined (a string, as every other result's keywordOnly). */
  keywordOnly?: string;
  /** Tool calls of the run's steps that failed or were refused, "agent: tool failed: why". */
  toolErrors?: string[];
};

export function runReport(result: FlowRunResult): FlowRunReport {
  const toolErrors = result.steps.flatMap((s) => (s.toolErrors ?? []).map((e) => `${s.agent}: ${e}`));
  return {
    status: result.status,
    result: resultText(result),
    message: result.message,
    path: result.steps.map((s) => s.agent),
    ...(result.keywordOnlyRemarks?.length ? { keywordOnly: result.keywordOnlyRemarks.join(" ") } : {}),
    ...(toolErrors.length > 0 ? { toolErrors } : {}),
  };
}

/**
 * One line per step for progress displays: "3. verify (verify) 1.2 s · 210 tokens", then what fitting the
 * window cut, then the tool calls that failed (a model may answer on after one), then the limit its tool
 * loop stopped at or the error of a step that failed (the cut may be why, as a chat answer says it first too).
 */
export function stepLine(step: FlowStep, index: number): string {
  return [stepMeasure(step, index), step.notice, ...(step.toolErrors ?? []), step.limit, step.error].filter(Boolean).join(" · ");
}

function stepHeading(step: FlowStep, index: number): string {
  return [stepMeasure(step, index), step.limit, step.error].filter(Boolean).join(" · ");
}

function stepMeasure(step: FlowStep, index: number): string {
  const seconds = (step.durationMs / 1000).toFixed(1);
  const tokens = step.tokens ? ` · ${countOf(step.tokens, "token")}` : "";
  return `${index + 1}. ${step.agent} (${step.type}) ${seconds} s${tokens}`;
}

/**
 * The trace as a markdown note: path taken, each agent's input and output, timings and tokens. Saved only
 * when the user asks; values are fenced so a model's output cannot turn into live links or embeds.
 */
export function traceMarkdown(flow: Flow, input: string, result: FlowRunResult, when: string): string {
  const tokens = result.steps.reduce((sum, s) => sum + (s.tokens ?? 0), 0);
  const lines = [
    "---",
    `krypton-flow-trace: ${JSON.stringify(flow.id)}`,
    `status: ${JSON.stringify(result.status)}`,
    `ran: ${JSON.stringify(when)}`,
    "---",
    `# Workflow trace: ${flow.id}`,
    "",
    `**Status:** ${result.status}: ${result.message}`,
    `**Path:** ${result.steps.map((s) => s.agent).join(" → ") || "(no step ran)"}`,
    `**Time:** ${(result.steps.reduce((sum, s) => sum + s.durationMs, 0) / 1000).toFixed(1)} s${tokens ? ` · ${countOf(tokens, "token")}` : ""}`,
    ...(result.keywordOnlyRemarks ?? []).flatMap((remark) => ["", `_${remark}_`]),
    "",
    "## Input",
    fenced(input),
  ];
  result.steps.forEach((step, i) => {
    lines.push("", `## ${stepHeading(step, i)}`, "", ...(step.notice ? [`_${step.notice}_`, ""] : []), "Input:", fenced(valueText(step.input)));
    // Fenced: a tool's error may quote what the model asked for.
    if (step.toolErrors?.length) lines.push("Tool errors:", fenced(step.toolErrors.join("\n")));
    if (step.output) lines.push("Output:", fenced(describe(step.output)));
  });
  lines.push("", "## Result", result.status === "failed" ? "_None: the run failed._" : fenced(resultText(result)));
  return lines.join("\n") + "\n";
}

function describe(value: FlowValue): string {
  return value.type === "critique" ? `success: ${value.success}\nfeedback: ${value.feedback}` : valueText(value);
}

function fenced(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  return `${fence}text\n${text}\n${fence}`;
}
