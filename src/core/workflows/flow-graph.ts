import { FINISH, type Condition, type Flow } from "./flow-schema";
import { startAgent } from "./flow-validate";

/**
 * The flow as a Mermaid flowchart. Node ids are generated (a0, a1, …) so agent names such as "end",
 * names with quotes, brackets or pipes never reach Mermaid's syntax; labels are quoted with entities.
 */
export function flowToMermaid(flow: Flow): string {
  const ids = new Map(flow.agents.map((agent, i) => [agent.name, `a${i}`]));
  const lines = ["flowchart TD", `  start(("Start")) --> ${ids.get(startAgent(flow)) ?? "a0"}`];
  for (const agent of flow.agents) {
    const id = ids.get(agent.name)!;
    const label = nodeLabel(agent.name, agent.type);
    lines.push(agent.type === "verify" ? `  ${id}{${label}}` : agent.type === "transform" ? `  ${id}[/${label}/]` : `  ${id}[${label}]`);
  }
  let finishUsed = false;
  for (const t of flow.transitions) {
    const from = ids.get(t.from);
    const to = t.to === FINISH ? "finish" : ids.get(t.to);
    if (!from || !to) continue;
    if (to === "finish") finishUsed = true;
    lines.push(t.condition ? `  ${from} -->|${quote(describeCondition(t.condition))}| ${to}` : `  ${from} --> ${to}`);
  }
  const hasOutgoing = new Set(flow.transitions.map((t) => t.from));
  for (const agent of flow.agents) {
    if (!hasOutgoing.has(agent.name)) {
      lines.push(`  ${ids.get(agent.name)} --> finish`);
      finishUsed = true;
    }
  }
  if (finishUsed) lines.push(`  finish(("Finish"))`);
  return lines.join("\n");
}

function nodeLabel(name: string, type: string): string {
  return quote(type === "task" ? name : `${name} (${type})`);
}

/**
 * A Mermaid string label. Inside quotes only `"` would end the string; HTML entities (which Mermaid's
 * renderer decodes, unlike its own `#…;` codes in labels) keep quotes and angle brackets literal, and a
 * `#word;` sequence is broken with a zero-width space so Mermaid does not read it as an entity code.
 */
function quote(text: string): string {
  const safe = text
    .replace(/&/g, "&amp;")
    .replace(/"/g, "&quot;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/#(?=\w+;)/g, "#\u200b")
    .replace(/\s+/g, " ");
  return `"${safe}"`;
}

const SYMBOL: Record<string, string> = { equals: "=", not_equals: "≠", more: ">", less: "<", more_or_equal: "≥", less_or_equal: "≤" };

export function describeCondition(c: Condition): string {
  if ("conditions" in c) return c.conditions.map(describeCondition).join(c.operation === "and" ? " and " : " or ");
  if ("condition" in c) return `not (${describeCondition(c.condition)})`;
  const variable = c.variable.replace(/^input\.?/, "") || "output";
  const name = variable === "data" ? "output" : variable;
  const op = SYMBOL[c.operation] ?? c.operation;
  return `${name} ${op} ${JSON.stringify(c.value)}`;
}
