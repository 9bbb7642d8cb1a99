/**
 * Workflows: validation time of a 200-agent flow, and the engine's own cost per transition with a
 * zero-latency in-process model (so only Krypton's work is measured: templates, prompts, conditions,
 * structured-output parsing, bookkeeping). Compared in the same run with a bare loop that calls the
 * model the same number of times (the practical limit).
 */
import type { ChatEvent, ChatModel, ChatRequest } from "../src/core/ports/chat-model";
import { createFlowModelRunner } from "../src/core/workflows/flow-model-runner";
import { runFlow } from "../src/core/workflows/flow-engine";
import { validateFlow } from "../src/core/workflows/flow-validate";
import { text } from "../src/core/workflows/flow-values";
import { nodeClock } from "../src/node/node-clock";
import { now, stats, target, type Measurement } from "./bench-kit";

/** Answers at once: a typed answer for structured requests, "ok" otherwise. */
class InstantModel implements ChatModel {
  readonly id = "bench:instant";
  calls = 0;
  async *turn(request: ChatRequest): AsyncIterable<ChatEvent> {
    this.calls++;
    yield { type: "text", text: request.jsonSchema ? '{"value": 1, "success": true, "feedback": "ok"}' : "ok" };
    yield { type: "end", finishReason: "stop", usage: { promptTokens: 10, completionTokens: 1 } };
  }
  async *stream(request: ChatRequest): AsyncIterable<string> {
    for await (const e of this.turn(request)) if (e.type === "text") yield e.text;
  }
  async complete(request: ChatRequest): Promise<string> {
    let out = "";
    for await (const t of this.stream(request)) out += t;
    return out;
  }
  capabilities() {
    return Promise.resolve({ tools: false });
  }
}

/** A chain of n agents (task, verify, transform in turn) with a conditional exit on each verifier. */
export function chainFlow(n: number): unknown {
  const agents = Array.from({ length: n }, (_, i) => {
    const name = `agent_${i}`;
    if (i % 3 === 1) return { name, type: "verify", params: { task: `check step ${i}` } };
    if (i % 3 === 2) return { name, type: "transform", params: { template: `step ${i}: {{input}}`, trim: true } };
    return { name, type: "task", params: { task: `do step ${i} with {{input}}` } };
  });
  const transitions = [];
  for (let i = 0; i < n; i++) {
    const to = i === n - 1 ? "__finish__" : `agent_${i + 1}`;
    if (i % 3 === 1) {
      transitions.push({ from: `agent_${i}`, to, condition: { variable: "input.success", operation: "equals", value: true } });
      transitions.push({ from: `agent_${i}`, to: `agent_${i - 1}` });
    } else transitions.push({ from: `agent_${i}`, to });
  }
  return { id: `chain-${n}`, defaultModel: "ollama/llama3.1:8b", agents, transitions };
}

export const workflowMeasurement: Measurement = {
  name: "workflow",
  describe: "workflows: validating a 200-agent flow; engine overhead per transition with a zero-latency model",
  async run() {
    const big = chainFlow(200);
    for (let i = 0; i < 20; i++) validateFlow(big);
    const validateTimes: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t0 = now();
      validateFlow(big);
      validateTimes.push(now() - t0);
    }
    const v = stats(validateTimes);

    const flow = validateFlow(chainFlow(60)).flow!;
    const perTransition: number[] = [];
    const bare: number[] = [];
    const failures: { what: string; error: string }[] = [];
    let steps = 0;
    for (let round = 0; round < 30; round++) {
      const model = new InstantModel();
      const runner = createFlowModelRunner(flow, { modelFor: () => model });
      const t0 = now();
      const result = await runFlow(flow, text("start"), runner, { clock: nodeClock });
      const elapsed = now() - t0;
      steps = result.steps.length;
      if (result.status !== "finished") failures.push({ what: `run ${round}`, error: `${result.status}: ${result.message}` });
      // The practical limit: the same number of model calls with nothing around them.
      const calls = model.calls;
      const t1 = now();
      for (let i = 0; i < calls; i++) for await (const _ of model.turn({ messages: [{ role: "user", content: "x" }] }));
      const floor = now() - t1;
      if (round >= 5) {
        perTransition.push(elapsed / result.steps.length);
        bare.push(floor / result.steps.length);
      }
    }
    const t = stats(perTransition);
    const b = stats(bare);
    return {
      figures: {
        validate200P50Ms: v.p50,
        validate200P95Ms: v.p95,
        perTransitionP50Us: Math.round(t.p50 * 1000),
        perTransitionP95Us: Math.round(t.p95 * 1000),
        bareModelCallPerStepP50Us: Math.round(b.p50 * 1000),
        stepsPerRun: steps,
      },
      targets: [
        target("flow-validate-200", "validating a 200-agent flow ≤ 20 ms (p50)", v.p50, "ms", v.p50 <= 20),
        target("flow-transition", "engine overhead per transition ≤ 2 ms with a zero-latency model (p50)", t.p50, "ms", t.p50 <= 2),
      ],
      failures: failures.slice(0, 3),
    };
  },
};
