import type { AgentResult } from "../../core/agents/agent";
import type { AgentStep } from "../../core/agent-loop/agent-types";
import type { TokenUsage } from "../../core/ports/chat-model";
import { stepLine } from "./agent-cli";
import { AGENT_NAMES } from "../../core/notes/note-operations-impl";
import { withoutKeywordOnlyRemark } from "../../core/notes/result-text";
import type { ChatEvent, Source } from "../../core/chat/chat-types";
import type { RetrievalMode } from "../../core/settings";
import { oneLine, printHits, type Output } from "../output";
import type { WarnOnce } from "../warn-once";

/** Everything one answer produced, for `--json` and for the exit code. */
export interface CollectedAnswer {
  answer: string;
  sources: Source[];
  mode: RetrievalMode;
  agent?: AgentResult;
  notices: string[];
  error?: { code: string; message: string };
  conversationId?: string;
  stopped: boolean;
  /** Agent mode ended at a limit before the model finished ("stopped at the step limit (8 steps)"): exit 1. */
  limit?: string;
  /** Agent mode: the tool calls. */
  steps: AgentStep[];
  usage?: TokenUsage;
}

export interface ConsumeOptions {
  /** Print as the answer comes (tokens on stdout, notices on stderr); false for --json, which prints nothing here. */
  stream: boolean;
  /** The run's warnings that are said once, however many answers it has. */
  once: WarnOnce;
  /**
   * Agent mode: why its searches match notes by keywords only (IndexPreparation.agentKeywordOnly). Its
   * searches tell only the model, so the answer says it: asked before the answer (the embedder is down) and
   * after it (a query's vector failed during the run).
   */
  agentKeywordOnly?: () => string | null;
}

/**
 * Consumes ChatService events. With `stream` the answer's tokens go to stdout as they arrive, notices to
 * stderr, and the agent result and sources follow the answer; without it (--json) nothing is printed here.
 * Why notes were matched by keywords only (core/search/keyword-only.ts) is said once per run (`once`): each
 * answer of a chat would repeat it. With --json it is in the answer's `notices` (an intent agent's result
 * carries its own `keywordOnly`), and not on stderr.
 */
export async function consumeAnswer(
  events: AsyncIterable<ChatEvent>,
  mode: RetrievalMode,
  output: Output,
  { stream, once, agentKeywordOnly }: ConsumeOptions,
): Promise<CollectedAnswer> {
  const collected: CollectedAnswer = { answer: "", sources: [], mode, notices: [], stopped: false, steps: [] };
  const before = agentKeywordOnly?.() ?? null;
  if (stream) once.warn(before);
  let streamed = "";
  // Whitespace not printed yet: it goes out before the next visible token, so an answer that stays
  // whitespace only (an empty answer, an error on stderr) leaves stdout empty.
  let held = "";
  for await (const event of events) {
    switch (event.type) {
      case "sources":
        collected.sources = event.sources;
        break;
      case "token":
        streamed += event.text;
        if (!stream) break;
        if (event.text.trim() === "") held += event.text;
        else {
          output.out(held + event.text);
          held = "";
        }
        break;
      case "agent":
        collected.agent = event.result;
        break;
      case "step":
        collected.steps.push(event.step);
        if (stream) output.info(output.dim(stepLine(event.step)));
        break;
      case "retract": {
        // The model thought aloud before a tool call: already printed (unless only held whitespace), so end
        // its line; not part of the answer.
        const printed = event.text.length > held.length;
        streamed = streamed.slice(0, Math.max(0, streamed.length - event.text.length));
        held = held.slice(0, Math.max(0, held.length - event.text.length));
        if (stream && printed) output.line();
        break;
      }
      case "usage":
        collected.usage = event.usage;
        break;
      case "notice":
        collected.notices.push(event.message);
        if (!stream) break;
        if (event.code === "rag-keyword-only") once.warn(event.message);
        else output.warn(event.message);
        break;
      case "error":
        collected.error = { code: event.code, message: event.message };
        break;
      case "done":
        // The answer as saved: one of only whitespace is none (ChatService), whatever was streamed.
        collected.answer = event.answer;
        collected.conversationId = event.conversationId;
        collected.stopped = event.stopped;
        if (event.limit) collected.limit = event.limit;
        break;
    }
  }
  // Trailing whitespace of a visible answer is part of its text.
  if (stream && held && streamed.trim()) output.out(held);
  if (stream) printAfterAnswer(output, collected, streamed, once);
  const after = agentKeywordOnly?.() ?? null;
  if (stream) once.warn(after);
  else for (const remark of [before, after]) addKeywordOnlyNotice(collected, remark);
  return collected;
}

/** --json: the keyword-only remark once in the answer, as stderr has it once in a streamed run. */
function addKeywordOnlyNotice(answer: CollectedAnswer, remark: string | null): void {
  if (!remark || answer.notices.includes(remark) || agentKeywordOnlyOf(answer.agent) === remark) return;
  answer.notices.push(remark);
}

function agentKeywordOnlyOf(result: AgentResult | undefined): string | undefined {
  return result && "keywordOnly" in result ? result.keywordOnly : undefined;
}

function printAfterAnswer(output: Output, answer: CollectedAnswer, streamed: string, once: WarnOnce): void {
  if (streamed.trim() && !streamed.endsWith("\n")) output.line();
  if (answer.stopped) output.info("(stopped)");
  if (answer.usage) output.info(output.dim(`tokens: ${answer.usage.promptTokens ?? 0} in, ${answer.usage.completionTokens ?? 0} out`));
  if (answer.agent) printAgentResult(output, answer.agent, streamed, once);
  // Sources belong to an answer: after an error there is none to cite.
  if (answer.sources.length > 0 && !answer.error) {
    output.line();
    output.line("Sources:");
    for (const source of answer.sources) output.line(`  ${formatSource(source)}`);
  }
}

/** A terminal rendering of what an agent did: real file paths (not wikilinks), one result per line. */
function printAgentResult(output: Output, result: AgentResult, streamed: string, once: WarnOnce): void {
  switch (result.kind) {
    case "note-created":
      output.line(`Created ${result.path} (${result.title})`);
      for (const line of result.preview.trim().split("\n").slice(0, 6)) output.line(output.dim(`  ${line}`));
      break;
    case "search-results":
      if (result.hits.length === 0) output.line(`No notes match "${result.query}".`);
      printHits(output, result.hits);
      once.warn(result.keywordOnly);
      break;
    case "summary":
      output.line(output.bold(result.title));
      output.line();
      output.line(result.summary.trim());
      if (result.sourceFiles.length > 0) {
        output.line();
        output.line("Sources:");
        for (const file of result.sourceFiles) output.line(`  ${file}`);
      }
      // On stderr like an answer's context-fitted notice; about this summary, so said for each one.
      if (result.fitted) output.warn(result.fitted);
      once.warn(result.keywordOnly);
      break;
    case "message": {
      // "No notes match": why keywords alone were used is said once on stderr, as under found notes.
      once.warn(result.keywordOnly);
      if (agentFailure(result)) break; // said on stderr by the command, not printed as an answer
      const text = withoutKeywordOnlyRemark(result.text, result.keywordOnly);
      // Agents that wrote their answer as tokens already showed it.
      if (!streamed.includes(text.trim())) output.line(text.trimEnd());
      break;
    }
  }
}

export function formatSource(source: Source): string {
  if (source.kind === "web") return `[${source.n}] ${oneLine(source.title, 80)} — ${source.url}`;
  const heading = source.headings.length > 0 ? ` › ${source.headings.join(" › ")}` : "";
  const lines = source.startLine === source.endLine ? `line ${source.startLine}` : `lines ${source.startLine}-${source.endLine}`;
  return `[${source.n}] ${source.path}${heading} (${lines})`;
}

/** The `--json` document of `krypton ask`; in agent mode `steps` is always there (an empty list: no tool called). */
export function answerJson(answer: CollectedAnswer, { agent }: { agent: boolean }): Record<string, unknown> {
  return {
    answer: answer.answer,
    sources: answer.sources,
    mode: answer.mode,
    ...(answer.agent ? { agent: answer.agent } : {}),
    ...(answer.notices.length > 0 ? { notices: answer.notices } : {}),
    ...(answer.error ? { error: answer.error } : {}),
    ...(answer.stopped ? { stopped: true } : {}),
    ...(answer.limit ? { limit: answer.limit } : {}),
    ...(agent || answer.steps.length > 0 ? { steps: answer.steps } : {}),
    ...(answer.usage ? { usage: answer.usage } : {}),
    conversationId: answer.conversationId ?? null,
  };
}

/**
 * Why an answer is no success, for stderr and the exit code; the same for `ask` and each `chat` answer: an
 * error, an agent that could not do its job, or agent mode stopped at a limit (the answer was printed: it is
 * what the agent had, but not a finished one, as `flow run`).
 */
export function answerFailure(answer: CollectedAnswer): string | undefined {
  return answer.error?.message ?? agentFailure(answer.agent) ?? answer.limit;
}

/** An agent that could not do its job, in the CLI's words (for stderr and exit 1); undefined when it did. */
export function agentFailure(result: AgentResult | undefined): string | undefined {
  if (result?.kind !== "message" || !result.failed) return undefined;
  // A search that finds nothing did its job: "No notes match" is the answer (exit 0, like `krypton search`).
  if (result.agent === AGENT_NAMES.search && result.failed === "not-found") return undefined;
  if (result.failed === "no-active-note") return "no note to summarize: pass --note PATH (vault-relative, or absolute inside the vault)";
  // The keyword-only remark is a warning of its own (printAgentResult), not part of the error.
  return withoutKeywordOnlyRemark(result.text, result.keywordOnly);
}
