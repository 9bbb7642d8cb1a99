/**
 * Krypton's chat messages, tools and turn events to and from Ollama's /api/chat wire format.
 *   request:  tools [{type:"function", function:{name, description, parameters}}]; assistant messages
 *             carry tool_calls [{function:{name, arguments: object}}]; results are {role:"tool", tool_name, content}
 *   response: NDJSON chunks {message:{content, thinking?, tool_calls?}, done, done_reason?, prompt_eval_count?, eval_count?}
 */
import type { ChatMessage, ChatRequest, FinishReason, TokenUsage, ToolCall } from "../../ports/chat-model";
import { newToolCallId } from "../turn-views";

export interface OllamaWireToolCall {
  id?: string;
  function?: { index?: number; name?: string; arguments?: Record<string, unknown> | string };
}

export interface OllamaWireMessage {
  role: string;
  content: string;
  thinking?: string;
  tool_calls?: OllamaWireToolCall[];
  tool_name?: string;
}

export interface OllamaWireChunk {
  message?: Partial<OllamaWireMessage>;
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
}

export interface OllamaWireTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export function toOllamaMessages(messages: ChatMessage[]): OllamaWireMessage[] {
  return messages.map((m) => {
    if (m.role === "tool") {
      const content = m.isError && !/^error\b/i.test(m.content) ? `Error: ${m.content}` : m.content;
      return { role: "tool", content, ...(m.toolName ? { tool_name: m.toolName } : {}) };
    }
    if (m.role === "assistant" && m.toolCalls?.length) {
      return { role: "assistant", content: m.content, tool_calls: m.toolCalls.map((c) => ({ function: { name: c.name, arguments: c.arguments } })) };
    }
    return { role: m.role, content: m.content };
  });
}

/**
 * The tools and messages for a request's tool choice. Ollama has no tool_choice: "none" sends no tools;
 * a named tool is sent alone and the system message says it must be called.
 */
export function applyToolChoice(request: ChatRequest): { tools: OllamaWireTool[] | undefined; messages: OllamaWireMessage[] } {
  const messages = toOllamaMessages(request.messages);
  const choice = request.toolChoice ?? "auto";
  if (!request.tools?.length || choice === "none") return { tools: undefined, messages };
  let specs = request.tools;
  if (typeof choice === "object") {
    specs = request.tools.filter((t) => t.name === choice.name);
    const instruction = `Call the tool "${choice.name}" now.`;
    const system = messages.findIndex((m) => m.role === "system");
    if (system >= 0) messages[system] = { ...messages[system], content: `${messages[system].content}\n\n${instruction}` };
    else messages.unshift({ role: "system", content: instruction });
  }
  const tools = specs.map((t): OllamaWireTool => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));
  return { tools: tools.length ? tools : undefined, messages };
}

/**
 * Tool calls of one streamed answer. Ollama usually sends each call whole, but calls may come in several
 * chunks (one call per chunk, or one call's parts under the same `function.index`): they are merged here
 * and handed out once the stream ends. Arguments are objects (a JSON string is parsed, for proxies).
 */
export class ToolCallCollector {
  private readonly calls: { index?: number; id?: string; name: string; arguments: Record<string, unknown> }[] = [];

  add(wire: OllamaWireToolCall[] | undefined): void {
    for (const call of wire ?? []) {
      const fn = call.function ?? {};
      const args = parseArguments(fn.arguments);
      const index = typeof fn.index === "number" ? fn.index : undefined;
      const same = index !== undefined ? this.calls.find((c) => c.index === index) : undefined;
      if (same) {
        if (fn.name && !same.name) same.name = fn.name;
        Object.assign(same.arguments, args);
        continue;
      }
      this.calls.push({ index, id: call.id, name: fn.name ?? "", arguments: args });
    }
  }

  get size(): number {
    return this.calls.length;
  }

  done(): ToolCall[] {
    return this.calls.filter((c) => c.name).map((c) => ({ id: c.id || newToolCallId(), name: c.name, arguments: c.arguments }));
  }
}

function parseArguments(value: unknown): Record<string, unknown> {
  if (value && typeof value === "object" && !Array.isArray(value)) return { ...(value as Record<string, unknown>) };
  if (typeof value === "string" && value.trim()) {
    try {
      const parsed: unknown = JSON.parse(value);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // Not JSON: the loop reports the call's bad arguments to the model.
    }
  }
  return {};
}

export function finishReasonOf(doneReason: string | undefined, toolCalls: number): FinishReason {
  if (toolCalls > 0) return "tool-calls";
  if (doneReason === "length") return "length";
  if (doneReason === "stop" || doneReason === undefined || doneReason === "") return "stop";
  return "other";
}

export function usageOf(chunk: OllamaWireChunk): TokenUsage | undefined {
  const usage: TokenUsage = {};
  if (typeof chunk.prompt_eval_count === "number") usage.promptTokens = chunk.prompt_eval_count;
  if (typeof chunk.eval_count === "number") usage.completionTokens = chunk.eval_count;
  return usage.promptTokens !== undefined || usage.completionTokens !== undefined ? usage : undefined;
}
