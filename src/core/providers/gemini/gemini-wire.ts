/**
 * Krypton's chat messages, tools and turn events to and from Gemini's generateContent format.
 *   request:  tools [{functionDeclarations:[{name, description, parametersJsonSchema}]}], toolConfig
 *             {functionCallingConfig:{mode AUTO|NONE|ANY, allowedFunctionNames}}; model turns are echoed
 *             back with their parts VERBATIM (Gemini 3 rejects a function call that lost its
 *             thoughtSignature); tool results are user turns of functionResponse parts with the call's id.
 *   response: parts {text, thought?, thoughtSignature?, functionCall?{id?, name, args}}, finishReason, usageMetadata.
 */
import type { Content, FunctionCallingConfigMode, GenerateContentResponse, Part, ThinkingConfig, ThinkingLevel, Tool, ToolConfig } from "@google/genai/web";
import type { ChatMessage, ChatRequest, FinishReason, TokenUsage } from "../../ports/chat-model";

/** Google's documented stand-in signature for function calls that Gemini did not produce. */
export const FOREIGN_CALL_SIGNATURE = "skip_thought_signature_validator";

/** What a Gemini turn stores on its assistant message (ChatMessage.providerData), to be sent back as is. */
export interface GeminiProviderData {
  provider: "gemini";
  parts: Part[];
}

export function isGeminiProviderData(value: unknown): value is GeminiProviderData {
  const v = value as GeminiProviderData | null;
  return typeof v === "object" && v !== null && v.provider === "gemini" && Array.isArray(v.parts) && v.parts.every((p) => typeof p === "object" && p !== null);
}

/**
 * Leading system messages become the systemInstruction; a system message later in the history (the agent
 * loop's "answer in the user's language", sent after the tool results) stays where it is, as text in the
 * user turn, so it is still the last thing the model reads. Assistant turns are "model" turns (their own parts when
 * this provider made them); consecutive tool results form one user turn of functionResponse parts.
 */
export function toGeminiContents(messages: ChatMessage[]): { system: string | undefined; contents: Content[] } {
  const firstOther = messages.findIndex((m) => m.role !== "system");
  const leading = firstOther < 0 ? messages : messages.slice(0, firstOther);
  const system = leading.map((m) => m.content).join("\n\n");
  const contents: Content[] = [];
  // A functionResponse names the call's id only when Gemini gave the call one (ids Krypton made up mean nothing to it).
  const geminiCallIds = new Set<string>();
  for (const m of messages.slice(leading.length)) {
    if (m.role === "system") {
      const previous = contents[contents.length - 1];
      if (previous?.role === "user") (previous.parts ??= []).push({ text: m.content });
      else contents.push({ role: "user", parts: [{ text: m.content }] });
      continue;
    }
    if (m.role === "assistant") {
      contents.push({ role: "model", parts: modelParts(m, geminiCallIds) });
    } else if (m.role === "tool") {
      const response = m.isError ? { error: m.content } : { output: m.content };
      const part: Part = {
        functionResponse: { ...(m.toolCallId && geminiCallIds.has(m.toolCallId) ? { id: m.toolCallId } : {}), name: m.toolName ?? "", response },
      };
      const previous = contents[contents.length - 1];
      if (previous?.role === "user" && previous.parts?.every((p) => p.functionResponse)) previous.parts.push(part);
      else contents.push({ role: "user", parts: [part] });
    } else {
      contents.push({ role: "user", parts: [{ text: m.content }] });
    }
  }
  return { system: system || undefined, contents };
}

function modelParts(m: ChatMessage, geminiCallIds: Set<string>): Part[] {
  if (isGeminiProviderData(m.providerData)) {
    for (const p of m.providerData.parts) if (p.functionCall?.id) geminiCallIds.add(p.functionCall.id);
    return m.providerData.parts;
  }
  // Another provider's turn (a model switched mid-conversation): its text and calls. Gemini 3 rejects a
  // step whose first call has no thoughtSignature; for calls it did not make, Google documents this value.
  const parts: Part[] = m.content ? [{ text: m.content }] : [];
  (m.toolCalls ?? []).forEach((call, i) =>
    parts.push({ functionCall: { name: call.name, args: call.arguments }, ...(i === 0 ? { thoughtSignature: FOREIGN_CALL_SIGNATURE } : {}) }),
  );
  return parts.length ? parts : [{ text: "" }];
}

/** Tool declarations and the calling mode for a request's tool choice. */
export function toolConfigOf(request: ChatRequest): { tools?: Tool[]; toolConfig?: ToolConfig } {
  if (!request.tools?.length) return {};
  const tools: Tool[] = [
    { functionDeclarations: request.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.parameters })) },
  ];
  const choice = request.toolChoice ?? "auto";
  const mode = (choice === "auto" ? "AUTO" : choice === "none" ? "NONE" : "ANY") as FunctionCallingConfigMode;
  const functionCallingConfig = typeof choice === "object" ? { mode, allowedFunctionNames: [choice.name] } : { mode };
  return { tools, toolConfig: { functionCallingConfig } };
}

/**
 * The thinkingConfig for a request asked with noThinking, by model, since a wrong one fails the request
 * (400): 2.5 Flash and Flash-Lite turn thinking off with thinkingBudget 0; Gemini 3 cannot turn it off
 * and takes thinkingLevel instead (LOW, which every Gemini 3 model accepts; 2.5 models refuse any level);
 * 2.5 Pro refuses budget 0 and any other model is not known, so those think as usual.
 */
export function thinkingConfigOf(model: string, request: ChatRequest): { thinkingConfig?: ThinkingConfig } {
  if (!request.noThinking) return {};
  const id = model.replace(/^models\//, "");
  if (/^gemini-2\.5-flash/.test(id)) return { thinkingConfig: { thinkingBudget: 0 } };
  if (/^gemini-3(\.\d+)?-/.test(id)) return { thinkingConfig: { thinkingLevel: "LOW" as ThinkingLevel } };
  return {};
}

export function finishReasonOf(reason: string | undefined, toolCalls: number): FinishReason {
  if (reason === "MALFORMED_FUNCTION_CALL" || reason === "UNEXPECTED_TOOL_CALL") return "malformed-tool-call";
  if (toolCalls > 0) return "tool-calls";
  if (reason === undefined || reason === "STOP" || reason === "FINISH_REASON_UNSPECIFIED") return "stop";
  if (reason === "MAX_TOKENS") return "length";
  return "other";
}

export function usageOf(chunk: GenerateContentResponse | undefined): TokenUsage | undefined {
  const u = chunk?.usageMetadata;
  if (!u) return undefined;
  const usage: TokenUsage = {};
  if (typeof u.promptTokenCount === "number") usage.promptTokens = u.promptTokenCount;
  const completion = (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0);
  if (typeof u.candidatesTokenCount === "number" || typeof u.thoughtsTokenCount === "number") usage.completionTokens = completion;
  // Gemini sends no thought parts unless asked (includeThoughts): this count is how a cut knows it was spent thinking.
  if (typeof u.thoughtsTokenCount === "number") usage.thinkingTokens = u.thoughtsTokenCount;
  return usage.promptTokens !== undefined || usage.completionTokens !== undefined ? usage : undefined;
}
