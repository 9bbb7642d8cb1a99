import type { ToolSpec } from "../ports/chat-model";
import { countOf } from "../util/text";

export const DEFAULT_PERSONA =
  "You are Krypton, an assistant working inside the user's Obsidian vault. Look things up with the tools instead of guessing, " +
  "never invent what a note says, and mention the notes you used as [[wiki links]].";

/** The system prompt for native tool calling: the tools travel as provider specs. */
export function nativeSystemPrompt(persona: string | undefined, instructions: readonly string[] = []): string {
  return [
    persona?.trim() || DEFAULT_PERSONA,
    "Call tools when you need information or to act; you may call several. When you have enough, answer in plain markdown without calling a tool.",
    ...instructions,
  ].join("\n\n");
}

/** The system prompt for the JSON action protocol: the tools are described in the text. */
export function jsonSystemPrompt(persona: string | undefined, tools: readonly ToolSpec[], instructions: readonly string[] = []): string {
  const list = tools.map((t) => `- ${t.name}: ${t.description}\n  arguments (JSON Schema): ${JSON.stringify(t.parameters)}`).join("\n");
  return [
    persona?.trim() || DEFAULT_PERSONA,
    "You work in steps. Reply with exactly ONE JSON object and nothing else:\n" +
      '- to use a tool: {"action":"call_tool","thought":"<why, briefly>","tool":"<name>","arguments":{...}}\n' +
      '- to answer the user: {"action":"final","response":"<your answer in markdown>"}\n' +
      "After a tool call you get its result, then you reply again. Use only these tools:\n" +
      list,
    ...instructions,
  ].join("\n\n");
}

/**
 * Sent once after an empty reply (no text, no tool call), by the agent loop and by a flow's plain task
 * (`tools` false: it has none to call); a second empty reply is an error.
 */
export function emptyReplyNudge(tools = true): string {
  return `Your last reply was empty. Answer the user's message now${tools ? " from what you have, or call a tool if you still need one" : ""}.`;
}

export function reminderMessage(left: number): string {
  return `Only ${countOf(left, "step")} ${left === 1 ? "is" : "are"} left. Get what you still need now, then give your final answer.`;
}

export function stepLimitMessage(maxSteps: number): string {
  return `You have used all ${countOf(maxSteps, "step")}. Do not call any tool. Write your final answer now from the results above, and say briefly what you could not finish.`;
}

/** Marks an answer written at the step limit (the loop appends it). */
export function stepLimitMarker(maxSteps: number): string {
  return `\n\n*(Stopped at the step limit: ${countOf(maxSteps, "step")}.)*`;
}
