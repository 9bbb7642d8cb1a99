import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { ChatModel } from "../../../src/core/ports/chat-model";
import type { ModelRef } from "../../../src/core/providers/model-ref";
import { GeminiChatModel } from "../../../src/core/providers/gemini/gemini-chat-model";
import { OllamaChatModel } from "../../../src/core/providers/ollama/ollama-chat-model";
import { flowBlocksIn } from "../../../src/core/workflows/flow-block";
import { nodeClock } from "../../../src/node/node-clock";
import { DEFAULT_GEMINI_KEY } from "../../support/servers/gemini-server";
import type { RecordedRequest } from "../../support/servers/scripted-server";
import { FAST_RETRY, nodeFetch } from "../providers/provider-fixtures";

export const WORKFLOWS_DIR = join(__dirname, "..", "..", "..", "examples", "demo-vault", "Workflows");

/** The shipped example flows, parsed from their notes: { "Retry loop": {...} }. */
export function exampleFlows(): Record<string, unknown> {
  const flows: Record<string, unknown> = {};
  for (const file of readdirSync(WORKFLOWS_DIR).filter((f) => f.endsWith(".md"))) {
    const [block] = flowBlocksIn(readFileSync(join(WORKFLOWS_DIR, file), "utf8"));
    flows[file.replace(/\.md$/, "")] = JSON.parse(block.json);
  }
  return flows;
}

/** Real provider clients pointed at the loopback servers. */
export function loopbackModels(urls: { ollama?: string; gemini?: string }): (ref: ModelRef) => ChatModel | null {
  const common = { fetch: nodeFetch, clock: nodeClock, timeoutMs: 5_000, retry: FAST_RETRY };
  return (ref) => {
    if (ref.provider === "ollama" && urls.ollama) return new OllamaChatModel({ ...common, baseUrl: urls.ollama, model: ref.model });
    if (ref.provider === "gemini" && urls.gemini) return new GeminiChatModel({ ...common, apiKey: DEFAULT_GEMINI_KEY, baseUrl: urls.gemini, model: ref.model });
    return null;
  };
}

/** The agent a request was made for, read from the system prompt the runner sends. */
export function agentOf(req: RecordedRequest): string {
  const body = req.body as { messages?: { role: string; content: string }[]; systemInstruction?: { parts?: { text?: string }[] } };
  const system = body.messages?.find((m) => m.role === "system")?.content ?? body.systemInstruction?.parts?.map((p) => p.text ?? "").join("") ?? "";
  return /^\[agent:([^\]]+)\]/.exec(system)?.[1] ?? /You are "([^"]+)"/.exec(system)?.[1] ?? "";
}
