import type { AgentLimitReason } from "../agent-loop/agent-types";
import type { Clock } from "../ports/clock";
import { errorMessage, isAbortError } from "../util/errors";
import { FINISH, type Flow, type FlowAgent } from "./flow-schema";
import { applyTransform } from "./flow-transform";
import { defaultMaxSteps, startAgent } from "./flow-validate";
import { evaluateCondition, valueText, type FlowValue } from "./flow-values";
import { countOf, oneLine } from "../util/text";

/**
 * What a step tells as it runs, so that a step that fails afterwards still says it: `notice`, what its
 * prompts lost to fit the window; `toolError`, each tool call of a task with tools that failed or was refused
 * (the model may carry on and answer, but the run's report must not hide it).
 */
export interface FlowStepReport {
  notice: (text: string) => void;
  toolError: (text: string) => void;
}

/**
 * What a model-backed agent gave back. `limit`: its tool loop ended at a limit before the model finished,
 * which one and in words ("stopped at the step limit (8 steps)", AgentLoopResult.limit): the output is what
 * it had then, not an answer.
 */
export interface FlowAgentOutcome {
  output: FlowValue;
  tokens?: number;
  limit?: { reason: AgentLimitReason; text: string };
}

/** Runs the model-backed agents (task, verify); transforms run here. `runInput` fills {{run.input}}. */
export interface FlowAgentRunner {
  run(agent: Exclude<FlowAgent, { type: "transform" }>, input: FlowValue, signal: AbortSignal | undefined, report: FlowStepReport, runInput?: FlowValue): Promise<FlowAgentOutcome>;
}

export interface FlowStep {
  agent: string;
  type: FlowAgent["type"];
  input: FlowValue;
  output?: FlowValue;
  error?: string;
  startedAt: number;
  durationMs: number;
  tokens?: number;
  /** What the step's prompts lost to fit the model's context window ("To fit …, this step shortened …"), when they did; also when the step failed. */
  notice?: string;
  /** The step's tool calls that failed or were refused, one line each ("search_notes failed: …"), in order. */
  toolErrors?: string[];
  /** The step ended at a limit of its tool loop: "stopped at the step limit (8 steps) before it finished". Its output is kept but not passed on. */
  limit?: string;
}

/**
 * The bound a run stopped at (or handed over to onLimit at): "step limit" for the flow's steps, an agent's
 * visits and a tool task's maxIterations; a tool task's time limit and loop guard say their own.
 */
export type FlowLimitStatus = "step limit" | "time limit" | "loop guard";

export type FlowRunStatus = "finished" | FlowLimitStatus | "failed" | "stopped";

const LIMIT_STATUS: Record<AgentLimitReason, FlowLimitStatus> = { "step-limit": "step limit", "time-limit": "time limit", "loop-guard": "loop guard" };

export interface FlowRunResult {
  status: FlowRunStatus;
  /** The last output (also at a limit or a failure, when there is one). */
  output: FlowValue | null;
  /** One line for people: what happened, naming the agent where it matters. */
  message: string;
  steps: FlowStep[];
  /**
   * Why steps' searches matched notes by keywords only (core/search/keyword-only.ts), as the search tool
   * said it: each distinct remark once, in order (the embedder may be down for one search and fail another
   * way for the next). Set by WorkflowService.run; hosts show each, scripts get them joined (runReport).
   */
  keywordOnlyRemarks?: string[];
}

export interface FlowRunOptions {
  signal?: AbortSignal;
  clock: Clock;
  /** Called when an agent starts (no output yet) and when it ends. */
  onStep?: (step: FlowStep, phase: "start" | "end") => void;
}

/**
 * Walks the flow from its start agent: run the agent, take the first transition (in file order) whose
 * condition matches its output, repeat until __finish__, a node with no transitions, a bound, an error
 * or Stop. The flow must have passed validateFlow.
 */
export async function runFlow(flow: Flow, input: FlowValue, runner: FlowAgentRunner, options: FlowRunOptions): Promise<FlowRunResult> {
  const agents = new Map(flow.agents.map((a) => [a.name, a]));
  const outgoing = new Map<string, Flow["transitions"]>();
  for (const t of flow.transitions) outgoing.set(t.from, [...(outgoing.get(t.from) ?? []), t]);
  let maxSteps = defaultMaxSteps(flow);
  const visits = new Map<string, number>();
  const steps: FlowStep[] = [];
  let current = startAgent(flow);
  let value = input;
  let last: FlowValue | null = null;
  // The bound handed over to onLimit, once: a run that then finishes still ends with its status.
  let handedOver: { status: FlowLimitStatus; message: string } | null = null;
  const done = (): FlowRunResult =>
    handedOver ? { status: handedOver.status, output: last, message: handedOver.message, steps } : { status: "finished", output: last, message: "Finished.", steps };
  /**
   * A bound is reached (the flow's steps, an agent's visits, a task's own limit): one hand-over to onLimit,
   * whose agent (and what follows it) gets a fresh, small budget; else the run stops with the bound as its
   * status, keeping the last output. Returns the run's end, or null to go on with the onLimit agent.
   */
  const atBound = (status: FlowLimitStatus, said: { handedOver: string; finish: string; kept: string }): FlowRunResult | null => {
    if (flow.onLimit && !handedOver) {
      handedOver = { status, message: `${said.handedOver}; handed over to "${flow.onLimit}".` };
      if (flow.onLimit === FINISH) return { status, output: last, message: said.finish, steps };
      current = flow.onLimit;
      maxSteps = steps.length + flow.agents.length;
      visits.set(current, 0);
      return null;
    }
    return { status, output: last, message: `${said.kept}; the last output is kept.`, steps };
  };

  for (;;) {
    if (options.signal?.aborted) return { status: "stopped", output: last, message: "Stopped.", steps };
    const agent = agents.get(current)!;
    const seen = visits.get(current) ?? 0;
    const bound = steps.length >= maxSteps ? `the flow's ${countOf(maxSteps, "step")}` : agent.maxVisits !== undefined && seen >= agent.maxVisits ? `"${current}"'s ${countOf(agent.maxVisits, "visit")}` : null;
    if (bound) {
      const end = atBound("step limit", { handedOver: `Reached ${bound}`, finish: `Stopped at ${bound}.`, kept: `Stopped at the step limit (${bound})` });
      if (end) return end;
      continue;
    }
    visits.set(current, seen + 1);

    const step: FlowStep = { agent: current, type: agent.type, input: value, startedAt: options.clock.now(), durationMs: 0 };
    options.onStep?.(step, "start");
    let limited: FlowLimitStatus | undefined;
    try {
      if (agent.type === "transform") step.output = applyTransform(agent, value, input);
      else {
        const result = await runner.run(agent, value, options.signal, {
          notice: (text) => (step.notice = text),
          toolError: (text) => (step.toolErrors ??= []).push(text),
        }, input);
        step.output = result.output;
        step.tokens = result.tokens;
        if (result.limit) {
          step.limit = `${result.limit.text} before it finished`;
          limited = LIMIT_STATUS[result.limit.reason];
        }
      }
    } catch (err) {
      step.durationMs = options.clock.now() - step.startedAt;
      if (isAbortError(err) || options.signal?.aborted) {
        step.error = "stopped";
        steps.push(step);
        options.onStep?.(step, "end");
        return { status: "stopped", output: last, message: "Stopped.", steps };
      }
      step.error = errorMessage(err);
      steps.push(step);
      options.onStep?.(step, "end");
      return { status: "failed", output: last, message: `Agent "${current}" failed: ${step.error}`, steps };
    }
    step.durationMs = options.clock.now() - step.startedAt;
    steps.push(step);
    options.onStep?.(step, "end");
    value = step.output;
    last = step.output;
    if (limited) {
      // What a task had when its loop hit a limit is no answer: it never goes to the next agent as one. It
      // is a bound like the flow's own: kept as the last output, or handed to onLimit, which expects it.
      const said = `Agent "${current}" ${step.limit}`;
      const end = atBound(limited, { handedOver: said, finish: `${said}.`, kept: said });
      if (end) return end;
      continue;
    }

    const transitions = outgoing.get(current) ?? [];
    if (transitions.length === 0) return done();
    const next = transitions.find((t) => !t.condition || evaluateCondition(t.condition, value));
    if (!next) {
      return { status: "failed", output: last, message: `No transition from "${current}" matches its output: ${oneLine(valueText(value), 200)}`, steps };
    }
    if (next.to === FINISH) return done();
    current = next.to;
  }
}

