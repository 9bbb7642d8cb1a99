import { z } from "zod";
import { cutOffNote, extractJsonText, jsonSchemaOf, parseAgainst } from "../model/ask-json";
import { cleanModelText, type AnswerCut } from "../model/ask-model";
import { escapeRegExp } from "../util/text";

/**
 * The JSON action protocol, for models without native tool calling: every reply is one object,
 *   {"action":"call_tool","tool":"<name>","arguments":{...}}   or   {"action":"final","response":"..."}
 * constrained by the provider's structured output (Ollama `format`) where it has it.
 */
export const agentActionSchema = z.object({
  action: z.enum(["call_tool", "final"]),
  thought: z.string().optional(),
  tool: z.string().optional(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  response: z.string().optional(),
});

export type AgentAction =
  | { action: "call_tool"; thought?: string; tool: string; arguments: Record<string, unknown> }
  | { action: "final"; thought?: string; response: string };

export const AGENT_ACTION_JSON_SCHEMA = jsonSchemaOf(agentActionSchema);

/** Parses a reply (through askJson's parser) and checks the per-action fields. */
export function parseAction(raw: string): { ok: true; action: AgentAction } | { ok: false; problem: string } {
  const parsed = parseAgainst(raw, agentActionSchema);
  if (!parsed.ok) return parsed;
  const v = parsed.value;
  if (v.action === "call_tool") {
    if (!v.tool?.trim()) return { ok: false, problem: 'action "call_tool" needs "tool" (the tool\'s name)' };
    return { ok: true, action: { action: "call_tool", thought: v.thought, tool: v.tool.trim(), arguments: v.arguments ?? {} } };
  }
  if (typeof v.response !== "string") return { ok: false, problem: 'action "final" needs "response" (your answer as a string)' };
  return { ok: true, action: { action: "final", thought: v.thought, response: v.response } };
}

const ACTION_FORMS = '{"action":"call_tool","tool":"<name>","arguments":{...}} or {"action":"final","response":"<answer>"}';

export function correctionMessage(problem: string): string {
  return `Your last reply was not a valid action: ${problem}. Reply with exactly one JSON object and nothing else: ${ACTION_FORMS}.`;
}

/** The correction for a reply cut at its cap: askJson's note for that cut (spent thinking or ran on), then the two forms. */
export function cutOffCorrection(cut: Pick<AnswerCut, "whileThinking">): string {
  return `${cutOffNote(cut, "Your last reply")} The JSON is exactly one object: ${ACTION_FORMS}.`;
}

/** Text around a call a model wrote as text: fences, chat templates' call markers, a short remark. */
const CALL_WRAPPERS = /```[\w-]*|<\/?tool_call>|\[TOOL_CALLS\]|<\|python_tag\|>/g;
/** What a call written as text may start with (recoverTextToolCalls): JSON, or a fence or call marker. */
const CALL_MARKERS = ["```", "<tool_call>", "[TOOL_CALLS]", "<|python_tag|>"];

/** More text than this beside the JSON (wrappers aside) makes it an answer that shows a call, not a call. */
const LONGEST_REMARK = 200;
/** Where a call written as text may start after a remark: JSON (a list only as `[{`), a fence or a call marker. */
const CALL_START = new RegExp(["\\{", "\\[\\s*\\{", ...CALL_MARKERS.map(escapeRegExp)].join("|"), "g");
const LONGEST_MARKER = Math.max(...CALL_MARKERS.map((marker) => marker.length));
/** Fences a call may be written in: none named, or JSON's. Code in another language is an answer showing code. */
const CALL_FENCE = /^(?:json[\w-]*|tool_call|tool_code)?$/i;

/**
 * Whether a reply that starts with `start` (leading whitespace trimmed) may be a tool call written as text:
 * true when it starts like one, or a call starts after a remark short enough for recoverTextToolCalls
 * ("Sure.\n```json …"); false once more text than such a remark came with no call start; null while too
 * little has arrived to tell (a marker split over chunks, or a short remark a call may still follow).
 */
export function startsLikeTextCall(start: string): boolean | null {
  if (/^[[{]/.test(start) || CALL_MARKERS.some((marker) => start.startsWith(marker))) return true;
  let waiting = false;
  /** Inside a fence of code shown in the answer: its braces and its closing fence start no call. */
  let inCode = false;
  for (const match of start.matchAll(CALL_START)) {
    if (match.index > LONGEST_REMARK) break;
    if (inCode) {
      inCode = match[0] !== "```";
      continue;
    }
    const starts = callStartsAt(match[0], start.slice(match.index + match[0].length));
    if (starts === true) return true;
    if (starts === null) waiting = true;
    else inCode = match[0] === "```";
  }
  // A marker may be split over chunks right after the remark: wait for its length more before saying no.
  return waiting || start.length <= LONGEST_REMARK + LONGEST_MARKER ? null : false;
}

/**
 * Whether a call may start at `marker` after a remark, from what follows it: an object opening with a key
 * (not "{name}" in prose), a fence named as JSON or not named (not "```python": an answer showing code keeps
 * streaming); null while what follows has not arrived.
 */
function callStartsAt(marker: string, rest: string): boolean | null {
  if (marker.endsWith("{")) return /^\s*$/.test(rest) ? null : /^\s*"/.test(rest);
  if (marker === "```") {
    const name = /^([\w-]*)\s/.exec(rest);
    return name ? CALL_FENCE.test(name[1]) : null;
  }
  return true;
}

/** JSON values tried per reply: a call comes first or after a short remark, never deep in a long answer. */
const CANDIDATES = 8;

/**
 * The tool calls a model wrote as JSON text instead of native calls ({"name": "...", "arguments": {...}},
 * "parameters" for "arguments", or the action form), as small models do: alone, in a ```json fence, in
 * <tool_call> tags (Qwen, Hermes), after [TOOL_CALLS] (Mistral) or <|python_tag|> (Llama 3.1), with a short
 * remark before or after it. Only names from `toolNames` count, so ordinary JSON in an answer is left alone,
 * and a call shown inside a longer answer stays part of that answer. A list (Mistral's parallel calls) whose
 * first call names an offered tool gives all of its calls; one naming another tool then fails as a native
 * call would, and the model is told. Empty when the text is no call.
 */
export function recoverTextToolCalls(text: string, toolNames: (name: string) => boolean): TextToolCall[] {
  const clean = cleanModelText(text);
  let from = 0;
  for (let tried = 0; tried < CANDIDATES; tried++) {
    const start = clean.slice(from).search(/[[{]/);
    if (start < 0) return [];
    const at = from + start;
    const json = extractJsonText(clean.slice(at));
    from = at + 1;
    if (!json) continue;
    const calls = toolCallsIn(json, toolNames);
    if (calls.length === 0) continue;
    const remark = (clean.slice(0, at) + clean.slice(at + json.length)).replace(CALL_WRAPPERS, "").trim();
    return remark.length <= LONGEST_REMARK ? calls : [];
  }
  return [];
}

export interface TextToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * The response of a final action a model wrote as its whole reply in a native turn
 * ({"action":"final","response":"…"}, maybe fenced), as one that saw the JSON protocol may; else null.
 */
export function textFinalResponse(text: string): string | null {
  const clean = cleanModelText(text);
  if (!clean.startsWith("{") || !clean.endsWith("}")) return null;
  const parsed = parseAction(clean);
  return parsed.ok && parsed.action.action === "final" ? parsed.action.response : null;
}

/** The calls in one JSON text: {name, arguments}, OpenAI's {function: {…}}, the action form, or a list of them. */
function toolCallsIn(json: string, toolNames: (name: string) => boolean): TextToolCall[] {
  const value = safeParse(json);
  const items: unknown[] = Array.isArray(value) ? value : [value];
  const first = callOf(items[0]);
  if (!first || !toolNames(first.name)) return [];
  return items.map(callOf).filter((call): call is TextToolCall => call !== null);
}

function callOf(item: unknown): TextToolCall | null {
  if (!item || typeof item !== "object") return null;
  const o = item as Record<string, unknown>;
  const fn = o.function && typeof o.function === "object" ? (o.function as Record<string, unknown>) : o;
  const name = fn.name ?? fn.tool;
  const args = fn.arguments ?? fn.parameters ?? fn.args ?? {};
  if (typeof name !== "string") return null;
  const parsedArgs = typeof args === "string" ? safeParse(args) : args;
  if (!parsedArgs || typeof parsedArgs !== "object" || Array.isArray(parsedArgs)) return null;
  return { name, arguments: parsedArgs as Record<string, unknown> };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * Streams the "response" string of a final action while the JSON is still arriving, so the answer
 * appears word by word even under structured output. Only once "action":"final" was seen before
 * "response"; escapes are decoded, an escape cut between chunks waits for the next one.
 */
export class FinalResponseStreamer {
  private buffer = "";
  private pos = -1;
  private done = false;

  /** Adds a chunk; returns the newly decoded answer text (often ""). */
  push(chunk: string): string {
    this.buffer += chunk;
    if (this.done) return "";
    if (this.pos < 0) {
      const m = /"action"\s*:\s*"final"[\s\S]*?"response"\s*:\s*"/.exec(this.buffer);
      if (!m) return "";
      this.pos = m.index + m[0].length;
    }
    let out = "";
    while (this.pos < this.buffer.length) {
      const ch = this.buffer[this.pos];
      if (ch === '"') {
        this.done = true;
        break;
      }
      if (ch !== "\\") {
        out += ch;
        this.pos++;
        continue;
      }
      const next = this.buffer[this.pos + 1];
      if (next === undefined) break;
      if (next === "u") {
        const hex = this.buffer.slice(this.pos + 2, this.pos + 6);
        if (hex.length < 4) break;
        out += String.fromCharCode(parseInt(hex, 16));
        this.pos += 6;
        continue;
      }
      out += ESCAPES[next] ?? next;
      this.pos += 2;
    }
    return out;
  }

  /** True once any part of the answer was streamed. */
  get started(): boolean {
    return this.pos >= 0;
  }
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", '"': '"', "\\": "\\", "/": "/" };
