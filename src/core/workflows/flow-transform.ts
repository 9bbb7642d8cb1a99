import type { FlowAgent } from "./flow-schema";
import { fillTemplate, parseAs, resolveVariable, text, type FlowValue } from "./flow-values";

type TransformAgent = Extract<FlowAgent, { type: "transform" }>;

/**
 * A transform agent: pick a field, fill a template, parse, trim, lowercase, in that order. Pure data work:
 * no model, and never code evaluation.
 */
export function applyTransform(agent: TransformAgent, input: FlowValue, runInput?: FlowValue): FlowValue {
  const { pick, template, parse, trim, lowercase } = agent.params;
  let value = input;
  if (pick !== undefined) {
    const picked = resolveVariable(input, pick);
    if (!picked.ok) throw new Error(`transform "${agent.name}": ${picked.problem}`);
    value = asValue(picked.value);
  }
  if (template !== undefined) value = text(fillTemplate(template, value, undefined, runInput));
  if (trim || lowercase) {
    if (value.type !== "string") value = text(String(valueData(value)));
    let data = value.type === "string" ? value.data : "";
    if (trim) data = data.trim();
    if (lowercase) data = data.toLowerCase();
    value = text(data);
  }
  if (parse !== undefined) {
    const source = value.type === "string" ? value.data : String(valueData(value));
    const parsed = parseAs(source, parse);
    if (!parsed.ok) throw new Error(`transform "${agent.name}" could not parse its input: ${parsed.problem}`);
    value = parsed.value;
  }
  return value;
}

function valueData(value: FlowValue): unknown {
  return value.type === "critique" ? value.feedback : value.data;
}

function asValue(raw: unknown): FlowValue {
  if (typeof raw === "object" && raw !== null && "type" in raw) return raw as FlowValue;
  if (typeof raw === "boolean") return { type: "boolean", data: raw };
  if (typeof raw === "number") return Number.isInteger(raw) ? { type: "int", data: raw } : { type: "double", data: raw };
  if (Array.isArray(raw)) return { type: "string[]", data: raw.map(String) };
  return text(String(raw));
}
