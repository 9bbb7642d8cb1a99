import * as readline from "node:readline";
import type { AgentStep, ConfirmDecision, ConfirmPort } from "../../core/agent-loop/agent-types";
import type { AgentService, AgentTurnRecord } from "../../core/agent-loop/agent-service";
import type { CommandContext } from "../command";
import type { Output } from "../output";
import { oneLine } from "../../core/util/text";
import { exchangeLogLines, NO_EXCHANGE_YET } from "../../core/agent-loop/exchange-log";
import { stepOutcome, stepOutcomeLabel } from "../../core/agent-loop/step-outcome";

/**
 * How the CLI answers the agent's "may I write?": `--yes` allows every write; on a terminal it shows the
 * preview on stderr and asks; otherwise there is nobody to ask, so writes are refused (the model is told).
 */
export function cliConfirm(ctx: CommandContext, options: { yes: boolean; rl?: readline.Interface }): ConfirmPort | undefined {
  const { output } = ctx;
  if (options.yes) {
    return (request) => {
      output.info(`Allowed by --yes: ${request.title}`);
      return Promise.resolve("once");
    };
  }
  if (ctx.stdin.isTTY !== true) return undefined;
  return async (request, signal) => {
    output.info(`The agent wants to: ${request.title}`);
    for (const line of request.preview.split("\n").slice(0, 60)) output.info(`  ${line}`);
    const own = options.rl ?? readline.createInterface({ input: ctx.stdin, output: ctx.stdout, terminal: true });
    // A terminal prompt reads Ctrl+C as a key, not a signal: without this the prompt only paused, and hung.
    if (!options.rl) own.on("SIGINT", () => ctx.interrupts.fire());
    try {
      const answer = await new Promise<string>((resolve) => {
        const onAbort = () => resolve("n");
        signal?.addEventListener("abort", onAbort, { once: true });
        const answered = (text: string) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(text);
        };
        // The signal also takes the question back: left pending, it kept its prompt on `krypton chat`'s line
        // and took the next thing typed there as its answer.
        const ask = "Allow? [y] once, [a] for this conversation, [N]o: ";
        if (signal) own.question(ask, { signal }, answered);
        else own.question(ask, answered);
      });
      return parseDecision(answer);
    } finally {
      if (!options.rl) own.close();
    }
  };
}

export function parseDecision(text: string): ConfirmDecision {
  const t = text.trim().toLowerCase();
  if (t === "y" || t === "yes" || t === "once") return "once";
  if (t === "a" || t === "always" || t === "conversation") return "conversation";
  return "deny";
}

/** One line per tool call, on stderr: "  ↳ read_note {"path":"Plan.md"} → ok, 12 ms". */
export function stepLine(step: AgentStep): string {
  const args = JSON.stringify(step.tool?.arguments ?? {});
  const status = stepOutcome(step) === "ok" ? "ok" : `${stepOutcomeLabel(step)}: ${oneLine(step.result ?? "", 120)}`;
  return `  ↳ [${step.step ?? "?"}] ${step.tool?.name ?? "(no tool)"} ${oneLine(args, 160)} → ${status} (${step.durationMs ?? 0} ms)`;
}

/** /steps: every call of the last agent turn with its result. */
export function printSteps(output: Output, steps: readonly AgentStep[]): void {
  if (steps.length === 0) {
    output.line("No tool calls in the last agent turn.");
    return;
  }
  for (const step of steps) {
    output.line(`Step ${step.step ?? "?"}: ${step.tool?.name ?? "(no tool)"} ${JSON.stringify(step.tool?.arguments ?? {})} (${stepOutcomeLabel(step)}, ${step.durationMs ?? 0} ms)`);
    if (step.thought) output.line(`  thought: ${oneLine(step.thought, 300)}`);
    for (const line of (step.result ?? "").split("\n").slice(0, 12)) output.line(`  ${line}`);
  }
}

/** /log: the raw exchange of the last agent turn, in core's words (exchange-log.ts). */
export function printExchange(output: Output, turn: AgentTurnRecord | null): void {
  if (!turn || turn.exchange.length === 0) return output.line(NO_EXCHANGE_YET);
  for (const line of exchangeLogLines(turn.exchange, turn.limit)) output.line(line);
}

/** /tools: built-in and MCP tools, by group. */
export function printTools(output: Output, agent: AgentService): void {
  let group = "";
  for (const tool of agent.describeTools()) {
    if (tool.group !== group) {
      group = tool.group;
      output.line(group === "built-in" ? "Built-in:" : `MCP server ${group}:`);
    }
    output.line(`  ${tool.name}${tool.write ? " (asks first)" : ""} — ${oneLine(tool.description, 120)}`);
  }
}

