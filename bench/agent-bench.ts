/**
 * Agent loop overhead: a zero-latency scripted model and a zero-cost tool, so what is left is the loop
 * itself (prompt assembly, JSON parsing or event handling, the loop guard, the toolbox's validation and
 * confirmation check, step records). Reported per model step, with the tool's own time excluded.
 */
import { z } from "zod";
import { AgentToolbox } from "../src/core/agent-loop/agent-toolbox";
import { runAgentLoop } from "../src/core/agent-loop/agent-loop";
import type { ChatEvent, ChatModel, ChatRequest, ModelCapabilities } from "../src/core/ports/chat-model";
import { nodeClock } from "../src/node/node-clock";
import { defineTool, ToolRegistry } from "../src/core/tools/tool-registry";
import { errorText, now, round, stats, target, type Measurement } from "./bench-kit";

const TOOL_STEPS = 6;
const TURNS = 300;
const WARMUP = 30;

function scriptedModel(id: string, native: boolean): ChatModel {
  let calls = 0;
  const next = (request: ChatRequest): ChatEvent[] => {
    const step = calls++ % (TOOL_STEPS + 1);
    if (step === TOOL_STEPS) {
      const answer = "The answer, from the notes you have.";
      return native
        ? [{ type: "text", text: answer }, { type: "end", finishReason: "stop" }]
        : [...chunks(JSON.stringify({ action: "final", response: answer })), { type: "end", finishReason: "stop" }];
    }
    void request;
    const args = { query: `q${step}` };
    return native
      ? [{ type: "tool-call", call: { id: `c${step}`, name: "noop", arguments: args } }, { type: "end", finishReason: "tool-calls" }]
      : [...chunks(JSON.stringify({ action: "call_tool", tool: "noop", arguments: args })), { type: "end", finishReason: "stop" }];
  };
  return {
    id,
    capabilities: (): Promise<ModelCapabilities> => Promise.resolve({ tools: native }),
    async *turn(request) {
      for (const e of next(request)) yield e;
    },
    stream: () => {
      throw new Error("not used");
    },
    complete: () => Promise.reject(new Error("not used")),
  };
}

/** A JSON reply in stream-sized pieces (about 4 characters, like tokens). */
function chunks(text: string): ChatEvent[] {
  const out: ChatEvent[] = [];
  for (let i = 0; i < text.length; i += 4) out.push({ type: "text", text: text.slice(i, i + 4) });
  return out;
}

async function measure(native: boolean): Promise<{ perStep: number[]; toolMs: number }> {
  const registry = new ToolRegistry();
  let toolMs = 0;
  registry.register(
    defineTool({
      name: "noop",
      title: "No-op",
      description: "Returns at once.",
      inputSchema: { query: z.string() },
      outputSchema: {},
      annotations: { readOnlyHint: true },
      run: (input) => {
        const t0 = now();
        const out = { structured: {}, text: `result for ${input.query}` };
        toolMs += now() - t0;
        return Promise.resolve(out);
      },
    }),
  );
  const model = scriptedModel(native ? "bench:native" : "bench:json", native);
  const perStep: number[] = [];
  for (let turn = 0; turn < TURNS + WARMUP; turn++) {
    toolMs = 0;
    const toolbox = new AgentToolbox({ registry, allowed: ["noop"] });
    const t0 = now();
    let steps = 0;
    for await (const event of runAgentLoop({ model, toolbox, question: "What do my notes say?", clock: nodeClock, noNativeTools: new Set() })) {
      if (event.type === "done") steps = event.result.steps.length + 1;
    }
    const ms = now() - t0 - toolMs;
    if (turn >= WARMUP) perStep.push(ms / steps);
  }
  return { perStep, toolMs };
}

export const agentLoop: Measurement = {
  name: "agent",
  describe: "agent loop overhead per step (zero-latency scripted model and tool), native and JSON protocols",
  async run() {
    const figures: Record<string, number | null> = {};
    const failures = [];
    const targets = [];
    for (const native of [true, false]) {
      const name = native ? "native" : "json";
      try {
        const { perStep } = await measure(native);
        const s = stats(perStep);
        figures[`${name}P50Ms`] = round(s.p50, 3);
        figures[`${name}P95Ms`] = round(s.p95, 3);
        targets.push(target(`agent-step-${name}`, `agent loop overhead per step (${name} protocol), p50 ≤ 5 ms excluding the tool`, s.p50, "ms", s.p50 <= 5));
      } catch (err) {
        failures.push({ what: `agent ${name}`, error: errorText(err) });
        targets.push(target(`agent-step-${name}`, `agent loop overhead per step (${name} protocol), p50 ≤ 5 ms excluding the tool`, null, "ms", null));
      }
    }
    return { figures: { turns: TURNS, toolStepsPerTurn: TOOL_STEPS, ...figures }, targets, failures };
  },
};
