import type { Condition, DeclaredValueType } from "./flow-schema";
import { clip } from "../util/text";

/** A value passed between agents. A verify agent's output keeps the value it checked as `input`. */
export type FlowValue =
  | { type: "string"; data: string }
  | { type: "int"; data: number }
  | { type: "double"; data: number }
  | { type: "boolean"; data: boolean }
  | { type: "string[]"; data: string[] }
  | { type: "int[]"; data: number[] }
  | { type: "double[]"; data: number[] }
  | { type: "boolean[]"; data: boolean[] }
  | { type: "critique"; success: boolean; feedback: string; input: FlowValue };

export type FlowValueType = FlowValue["type"];

export const text = (data: string): FlowValue => ({ type: "string", data });

/** The value a condition variable names: "input"/"input.data" the value itself; critique fields by name. */
export function resolveVariable(value: FlowValue, variable: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  const path = variable.trim().replace(/^input\.?/, "");
  if (value.type === "critique") {
    if (path === "success") return { ok: true, value: value.success };
    if (path === "feedback") return { ok: true, value: value.feedback };
    if (path === "input" || path.startsWith("input.")) return resolveVariable(value.input, path);
    if (path === "" || path === "data") return { ok: true, value: value.success };
    return { ok: false, problem: `"${variable}" does not exist on a verify result (use input.success, input.feedback or input.input)` };
  }
  if (path === "" || path === "data") return { ok: true, value: value.data };
  return { ok: false, problem: `"${variable}" does not exist on a ${value.type} value (use input.data)` };
}

/** Which value types a condition variable can see for an agent that outputs `type`. */
export function variableType(type: FlowValueType | "any", variable: string): FlowValueType | "any" | null {
  const path = variable.trim().replace(/^input\.?/, "");
  if (type === "any") return "any";
  if (type === "critique") {
    if (path === "success" || path === "" || path === "data") return "boolean";
    if (path === "feedback") return "string";
    if (path === "input" || path.startsWith("input.")) return "any";
    return null;
  }
  return path === "" || path === "data" ? type : null;
}

function isNumeric(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** A number inside a model's text answer ("Score: 85/100" → 85), for numeric comparisons of text. */
function numberIn(value: unknown): number | null {
  if (isNumeric(value)) return value;
  if (typeof value !== "string") return null;
  const match = /-?\d+(?:\.\d+)?/.exec(value);
  return match ? Number(match[0]) : null;
}

function booleanIn(value: unknown): boolean | null {
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") return null;
  const word = value.trim().toLowerCase().replace(/[.!]$/, "");
  if (["true", "yes", "y", "1", "pass", "passed", "ok"].includes(word)) return true;
  if (["false", "no", "n", "0", "fail", "failed"].includes(word)) return false;
  return null;
}

/**
 * Compares per the protocol: numbers numerically (42 equals 42.0; a number in a text answer counts),
 * strings case-insensitively for more/less and exactly (trimmed) for equals, booleans by value.
 */
function compare(actual: unknown, operation: string, expected: string | number | boolean): boolean {
  if (isNumeric(expected)) {
    const n = numberIn(actual);
    if (n === null) return operation === "not_equals";
    switch (operation) {
      case "equals":
        return n === expected;
      case "not_equals":
        return n !== expected;
      case "more":
        return n > expected;
      case "less":
        return n < expected;
      case "more_or_equal":
        return n >= expected;
      case "less_or_equal":
        return n <= expected;
    }
  }
  if (typeof expected === "boolean") {
    const b = booleanIn(actual);
    if (b === null) return operation === "not_equals";
    switch (operation) {
      case "equals":
        return b === expected;
      case "not_equals":
        return b !== expected;
      case "not":
        return !b === expected;
      case "and":
        return b && expected;
      case "or":
        return b || expected;
    }
    return false;
  }
  const a = Array.isArray(actual) ? actual.join(", ") : String(actual);
  const left = a.trim();
  const right = String(expected).trim();
  const order = left.toLowerCase().localeCompare(right.toLowerCase());
  switch (operation) {
    case "equals":
      return left === right;
    case "not_equals":
      return left !== right;
    case "more":
      return order > 0;
    case "less":
      return order < 0;
    case "more_or_equal":
      return order >= 0;
    case "less_or_equal":
      return order <= 0;
  }
  return false;
}

/** Evaluates a transition condition against an agent's output. Unknown variables make it false. */
export function evaluateCondition(condition: Condition, value: FlowValue): boolean {
  if ("conditions" in condition) {
    return condition.operation === "and" ? condition.conditions.every((c) => evaluateCondition(c, value)) : condition.conditions.some((c) => evaluateCondition(c, value));
  }
  if ("condition" in condition) return !evaluateCondition(condition.condition, value);
  const resolved = resolveVariable(value, condition.variable);
  if (!resolved.ok) return false;
  return compare(resolved.value, condition.operation, condition.value);
}

/** Plain text of a value, for prompts, results and traces. */
export function valueText(value: FlowValue): string {
  switch (value.type) {
    case "critique":
      return value.success ? `Passed. ${value.feedback}`.trim() : `Failed: ${value.feedback}`;
    case "string":
      return value.data;
    case "string[]":
    case "int[]":
    case "double[]":
    case "boolean[]":
      return value.data.map(String).join("\n");
    default:
      return String(value.data);
  }
}

/**
 * Fills {{input}} / {{input.feedback}} / {{input.input}} placeholders once, and {{run.input}} with what the
 * run started from: a step after a classifier or a verdict still reaches the note itself. Values are
 * inserted as data: a value that itself contains "{{…}}" is not expanded again.
 */
export function fillTemplate(template: string, value: FlowValue, wrap: (text: string) => string = (t) => t, runInput?: FlowValue): string {
  return template.replace(PLACEHOLDER, (whole: string, variable: string) => {
    if (variable.toLowerCase() === "run.input") return runInput ? wrap(valueText(runInput)) : whole;
    if (variable === "input") return wrap(valueText(value));
    const resolved = resolveVariable(value, variable);
    if (!resolved.ok) return whole;
    const inner = resolved.value;
    if (typeof inner === "object" && inner !== null && "type" in inner) return wrap(valueText(inner as FlowValue));
    return wrap(Array.isArray(inner) ? inner.join("\n") : String(inner));
  });
}

const PLACEHOLDER = /\{\{\s*(input(?:\.[a-z_]+)*|run\.input)\s*\}\}/gi;

export function hasPlaceholder(template: string): boolean {
  return /\{\{\s*(input(?:\.[a-z_]+)*|run\.input)\s*\}\}/i.test(template);
}

/** Converts text into a declared type, or explains why it cannot. */
export function parseAs(raw: string, type: DeclaredValueType | "number" | "json"): { ok: true; value: FlowValue } | { ok: false; problem: string } {
  const textValue = raw.trim();
  switch (type) {
    case "string":
      return { ok: true, value: text(raw) };
    case "int":
    case "double":
    case "number": {
      const n = numberIn(textValue);
      if (n === null) return { ok: false, problem: `"${clip(textValue, 58)}" is not a number` };
      if (type === "int") return { ok: true, value: { type: "int", data: Math.round(n) } };
      return { ok: true, value: { type: Number.isInteger(n) && type === "number" ? "int" : "double", data: n } };
    }
    case "boolean": {
      const b = booleanIn(textValue);
      return b === null ? { ok: false, problem: `"${clip(textValue, 58)}" is not true or false` } : { ok: true, value: { type: "boolean", data: b } };
    }
    case "json":
      try {
        return fromJson(JSON.parse(textValue));
      } catch {
        return { ok: false, problem: `"${clip(textValue, 58)}" is not JSON` };
      }
    default: {
      const element = type.slice(0, -2) as "string" | "int" | "double" | "boolean";
      let items: unknown;
      try {
        items = JSON.parse(textValue);
      } catch {
        items = textValue.split(/\r?\n|,/).map((s) => s.trim()).filter(Boolean);
      }
      if (!Array.isArray(items)) return { ok: false, problem: `expected a list, got "${clip(textValue, 58)}"` };
      const parsed = items.map((item) => parseAs(String(item), element));
      const bad = parsed.find((p) => !p.ok);
      if (bad && !bad.ok) return bad;
      const data = parsed.map((p) => (p.ok && p.value.type !== "critique" ? p.value.data : null));
      return { ok: true, value: { type, data } as unknown as FlowValue };
    }
  }
}

/** A JSON value as a flow value (objects become their JSON text). */
export function fromJson(json: unknown): { ok: true; value: FlowValue } | { ok: false; problem: string } {
  if (typeof json === "string") return { ok: true, value: text(json) };
  if (typeof json === "boolean") return { ok: true, value: { type: "boolean", data: json } };
  if (isNumeric(json)) return { ok: true, value: Number.isInteger(json) ? { type: "int", data: json } : { type: "double", data: json } };
  if (Array.isArray(json)) {
    if (json.every((x) => typeof x === "string")) return { ok: true, value: { type: "string[]", data: json } };
    if (json.every((x) => typeof x === "boolean")) return { ok: true, value: { type: "boolean[]", data: json } };
    if (json.every(isNumeric)) return { ok: true, value: json.every(Number.isInteger) ? { type: "int[]", data: json } : { type: "double[]", data: json } };
  }
  return { ok: true, value: text(JSON.stringify(json)) };
}

