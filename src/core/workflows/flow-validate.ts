import type { z } from "zod";
import { parseModelRef } from "../providers/model-ref";
import { FINISH, flowSchema, toolName, type Condition, type Flow, type FlowAgent } from "./flow-schema";
import { variableType, type FlowValueType } from "./flow-values";

/** A problem found before anything runs, located by a JSON pointer into the flow ("/transitions/3/to"). */
export interface FlowIssue {
  pointer: string;
  message: string;
}

export interface FlowValidation {
  flow: Flow | null;
  errors: FlowIssue[];
  warnings: FlowIssue[];
}

/** What the host knows, for the checks that depend on it. Absent fields skip those checks. */
export interface FlowEnvironment {
  /** Built-in tool names, configured MCP server names and their `server:tool` names. */
  knownTools?: ReadonlySet<string>;
  /** Installed Ollama models ("llama3.1:8b"); a name without a tag means ":latest". */
  ollamaModels?: readonly string[];
}

/** Parses and checks a flow. Errors stop a run; warnings are shown beside the flow. */
export function validateFlow(input: unknown, env: FlowEnvironment = {}): FlowValidation {
  const parsed = flowSchema.safeParse(input);
  if (!parsed.success) return { flow: null, errors: zodIssues(parsed.error), warnings: [] };
  const flow = parsed.data;
  const errors: FlowIssue[] = [];
  const warnings: FlowIssue[] = [];
  const index = new Map<string, number>();
  /** Errors in the agent names and references: the graph cannot be followed past them. Others are independent. */
  let unresolved = 0;
  const unresolvable = (issue: FlowIssue) => {
    errors.push(issue);
    unresolved++;
  };

  flow.agents.forEach((agent, i) => {
    if (index.has(agent.name)) unresolvable({ pointer: `/agents/${i}/name`, message: `duplicate agent name "${agent.name}" (also /agents/${index.get(agent.name)})` });
    else index.set(agent.name, i);
  });

  checkModels(flow, env, errors);
  checkTools(flow, env, errors, warnings);
  checkMisplacedParams(input, warnings);

  const start = startAgent(flow);
  if (flow.start !== undefined && !index.has(flow.start)) unresolvable({ pointer: "/start", message: `unknown start agent "${flow.start}"` });
  if (flow.onLimit !== undefined && flow.onLimit !== FINISH && !index.has(flow.onLimit)) unresolvable({ pointer: "/onLimit", message: `unknown agent "${flow.onLimit}"` });

  const outgoing = new Map<string, number[]>();
  flow.transitions.forEach((t, i) => {
    if (!index.has(t.from)) unresolvable({ pointer: `/transitions/${i}/from`, message: `unknown agent "${t.from}"${suggest(t.from, index)}` });
    if (t.to !== FINISH && !index.has(t.to)) unresolvable({ pointer: `/transitions/${i}/to`, message: `unknown agent "${t.to}"${suggest(t.to, index)}` });
    const list = outgoing.get(t.from) ?? [];
    list.push(i);
    outgoing.set(t.from, list);
  });

  // Transitions are tried in file order: anything after an unconditional one is never taken.
  for (const list of outgoing.values()) {
    const firstUnconditional = list.find((i) => !flow.transitions[i].condition);
    if (firstUnconditional === undefined) continue;
    for (const i of list) {
      if (i > firstUnconditional) warnings.push({ pointer: `/transitions/${i}`, message: `never taken: /transitions/${firstUnconditional} from "${flow.transitions[i].from}" has no condition and comes first` });
    }
  }

  checkConditionTypes(flow, index, errors);
  // A wrong model, tool or condition value leaves the graph intact: its problems are reported with them.
  if (unresolved > 0) return { flow, errors, warnings };

  checkGraph(flow, start, outgoing, errors, warnings);
  checkModelSwitchingLoops(flow, outgoing, warnings);
  return { flow, errors, warnings };
}

/** The agent a run starts at: `start`, else the first transition's source, else the first agent. */
export function startAgent(flow: Flow): string {
  return flow.start ?? flow.transitions[0]?.from ?? flow.agents[0].name;
}

export function defaultMaxSteps(flow: Flow): number {
  return flow.maxSteps ?? Math.max(10 * flow.agents.length, 50);
}

/** The value type an agent produces; task agents without `params.output` take the type their conditions compare with. */
export function outputType(flow: Flow, agent: FlowAgent): FlowValueType | "any" {
  if (agent.type === "verify") return "critique";
  if (agent.type === "transform") {
    const parse = agent.params.parse;
    if (parse === "int" || parse === "double" || parse === "boolean" || parse === "string") return parse;
    if (parse === "number") return "double";
    if (parse === "json") return "any";
    return agent.params.template !== undefined ? "string" : "any";
  }
  if (agent.params.output) return agent.params.output;
  const literals = flow.transitions.filter((t) => t.from === agent.name && t.condition).flatMap((t) => leaves(t.condition!).map((c) => c.value));
  if (literals.length > 0 && literals.every((v) => typeof v === "number")) return "double";
  if (literals.length > 0 && literals.every((v) => typeof v === "boolean")) return "boolean";
  return "string";
}

/** For a task agent routed by string equality: the literals it must answer with (given to the model as choices). */
export function outputChoices(flow: Flow, agent: FlowAgent): string[] {
  if (agent.type !== "task" || outputType(flow, agent) !== "string") return [];
  const values = flow.transitions
    .filter((t) => t.from === agent.name && t.condition)
    .flatMap((t) => leaves(t.condition!))
    .filter((c) => c.operation === "equals" && typeof c.value === "string")
    .map((c) => String(c.value));
  // With a fallback transition the model may also answer "other": the fallback takes it.
  const hasFallback = flow.transitions.some((t) => t.from === agent.name && !t.condition);
  const choices = [...new Set(values)];
  if (hasFallback && choices.length > 0 && !choices.includes("other")) choices.push("other");
  return choices;
}

function leaves(condition: Condition): Extract<Condition, { variable: string }>[] {
  if ("conditions" in condition) return condition.conditions.flatMap(leaves);
  if ("condition" in condition) return leaves(condition.condition);
  return [condition];
}

function checkModels(flow: Flow, env: FlowEnvironment, errors: FlowIssue[]): void {
  const installed = env.ollamaModels ? new Set(env.ollamaModels.map(withTag)) : null;
  const check = (text: string | undefined, pointer: string) => {
    if (text === undefined) return;
    const ref = parseModelRef(text);
    if ("error" in ref) errors.push({ pointer, message: ref.error });
    else if (ref.provider === "ollama" && installed && !installed.has(withTag(ref.model))) {
      errors.push({ pointer, message: `Ollama model "${ref.model}" is not installed: run \`ollama pull ${ref.model}\`` });
    }
  };
  check(flow.defaultModel, "/defaultModel");
  flow.agents.forEach((agent, i) => {
    check(agent.model, `/agents/${i}/model`);
    if (agent.type !== "transform" && agent.model === undefined && flow.defaultModel === undefined) {
      errors.push({ pointer: `/agents/${i}/model`, message: `agent "${agent.name}" needs a model: set its "model" or the flow's "defaultModel"` });
    }
  });
}

function withTag(name: string): string {
  return name.includes(":") ? name : `${name}:latest`;
}

function checkTools(flow: Flow, env: FlowEnvironment, errors: FlowIssue[], warnings: FlowIssue[]): void {
  const declared = new Set((flow.tools ?? []).map(toolName));
  (flow.tools ?? []).forEach((tool, i) => {
    if (typeof tool !== "string" && (tool.parameters?.command !== undefined || tool.parameters?.url !== undefined)) {
      warnings.push({ pointer: `/tools/${i}`, message: `flows cannot start or reach servers themselves: "${tool.name}" uses the MCP server configured in settings under that name` });
    }
    if (env.knownTools && !env.knownTools.has(toolName(tool))) {
      errors.push({ pointer: `/tools/${i}`, message: `unknown tool "${toolName(tool)}": not a built-in tool nor an MCP server configured in settings` });
    }
  });
  flow.agents.forEach((agent, i) => {
    if (agent.type !== "task") return;
    (agent.params.toolNames ?? []).forEach((name, j) => {
      const server = name.includes(":") ? name.slice(0, name.indexOf(":")) : null;
      const ok = declared.has(name) || (server !== null && declared.has(server)) || (env.knownTools?.has(name) ?? false);
      if (!ok) errors.push({ pointer: `/agents/${i}/params/toolNames/${j}`, message: `unknown tool "${name}": list it (or its MCP server) in the flow's "tools"` });
    });
  });
}

function checkConditionTypes(flow: Flow, index: Map<string, number>, errors: FlowIssue[]): void {
  flow.transitions.forEach((t, i) => {
    const at = index.get(t.from);
    if (at === undefined || !t.condition) return;
    const type = outputType(flow, flow.agents[at]);
    const visit = (c: Condition, pointer: string) => {
      if ("conditions" in c) return c.conditions.forEach((inner, k) => visit(inner, `${pointer}/conditions/${k}`));
      if ("condition" in c) return visit(c.condition, `${pointer}/condition`);
      const seen = variableType(type, c.variable);
      if (seen === null) {
        errors.push({ pointer: `${pointer}/variable`, message: `"${c.variable}" does not exist on the output of "${t.from}" (a ${type} value)` });
        return;
      }
      if (seen === "any") return;
      const problem = literalMismatch(seen, c.operation, c.value);
      if (problem) errors.push({ pointer: `${pointer}/value`, message: `${problem}: "${t.from}" outputs ${seen === type ? `a ${seen}` : `${c.variable} as a ${seen}`}` });
    };
    visit(t.condition, `/transitions/${i}/condition`);
  });
}

function literalMismatch(type: FlowValueType, operation: string, value: string | number | boolean): string | null {
  const literal = typeof value;
  if (operation === "not" || operation === "and" || operation === "or") {
    return type === "boolean" && literal === "boolean" ? null : `"${operation}" needs a boolean value and a boolean output`;
  }
  if (type === "int" || type === "double") return literal === "number" ? null : `${JSON.stringify(value)} can never match a number`;
  if (type === "boolean") {
    if (literal !== "boolean") return `${JSON.stringify(value)} can never match true/false`;
    return operation === "equals" || operation === "not_equals" ? null : `"${operation}" does not apply to true/false`;
  }
  if (type === "string" || type.endsWith("[]")) return literal === "string" ? null : `${JSON.stringify(value)} can never match a text`;
  return null;
}

/** Reachability, a way to finish, and cycles that can never be left. */
function checkGraph(flow: Flow, start: string, outgoing: Map<string, number[]>, errors: FlowIssue[], warnings: FlowIssue[]): void {
  // Only transitions up to the first unconditional one can ever be taken.
  const effective = new Map<string, string[]>();
  for (const agent of flow.agents) {
    const list = outgoing.get(agent.name) ?? [];
    const targets: string[] = [];
    for (const i of list) {
      targets.push(flow.transitions[i].to);
      if (!flow.transitions[i].condition) break;
    }
    effective.set(agent.name, targets);
  }
  const finishes = (name: string) => (outgoing.get(name)?.length ?? 0) === 0 || effective.get(name)!.includes(FINISH);

  const reached = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    for (const next of effective.get(queue.pop()!) ?? []) {
      if (next !== FINISH && !reached.has(next)) {
        reached.add(next);
        queue.push(next);
      }
    }
  }
  flow.agents.forEach((agent, i) => {
    if (!reached.has(agent.name)) warnings.push({ pointer: `/agents/${i}`, message: `"${agent.name}" is never reached from "${start}"` });
  });
  if (![...reached].some(finishes)) {
    errors.push({ pointer: "/transitions", message: `no path from "${start}" reaches ${FINISH}: add a transition to "${FINISH}"` });
    return;
  }

  for (const component of stronglyConnected(flow.agents.map((a) => a.name), effective)) {
    const members = new Set(component);
    const cyclic = component.length > 1 || effective.get(component[0])!.includes(component[0]);
    if (!cyclic || !component.some((n) => reached.has(n))) continue;
    const exits = component.some((n) => finishes(n) || effective.get(n)!.some((to) => to !== FINISH && !members.has(to)));
    if (!exits) {
      const first = flow.transitions.findIndex((t) => members.has(t.from) && members.has(t.to));
      errors.push({ pointer: `/transitions/${first}`, message: `the loop ${component.join(" → ")} has no conditional exit: it would run until the step limit` });
    }
  }
}

/** Tarjan's algorithm, iterative (a 200-agent chain must not overflow the stack). */
function stronglyConnected(nodes: string[], edges: Map<string, string[]>): string[][] {
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const result: string[][] = [];
  let counter = 0;
  for (const root of nodes) {
    if (order.has(root)) continue;
    const work: { node: string; next: number }[] = [{ node: root, next: 0 }];
    order.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const targets = (edges.get(frame.node) ?? []).filter((t) => edges.has(t));
      if (frame.next < targets.length) {
        const target = targets[frame.next++];
        if (!order.has(target)) {
          order.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, order.get(target)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === order.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.unshift(member);
        } while (member !== frame.node);
        result.push(component);
      }
    }
  }
  return result;
}

/** Each switch between Ollama models reloads weights: a loop that alternates them is slow. */
function checkModelSwitchingLoops(flow: Flow, outgoing: Map<string, number[]>, warnings: FlowIssue[]): void {
  const edges = new Map(flow.agents.map((a) => [a.name, (outgoing.get(a.name) ?? []).map((i) => flow.transitions[i].to).filter((t) => t !== FINISH)]));
  const byName = new Map(flow.agents.map((a) => [a.name, a]));
  for (const component of stronglyConnected(flow.agents.map((a) => a.name), edges)) {
    if (component.length < 2) continue;
    const models = new Set(
      component
        .map((n) => byName.get(n)!)
        .filter((a) => a.type !== "transform")
        .map((a) => a.model ?? flow.defaultModel ?? "")
        .filter((m) => m.trim().toLowerCase().startsWith("ollama/")),
    );
    if (models.size > 1) {
      const first = flow.agents.findIndex((a) => a.name === component[0]);
      warnings.push({ pointer: `/agents/${first}`, message: `the loop ${component.join(" → ")} alternates Ollama models (${[...models].join(", ")}): each switch reloads weights` });
    }
  }
}

function zodIssues(error: z.ZodError): FlowIssue[] {
  return error.issues.map((issue) => {
    const chosen = closestIssue(issue, []);
    return { pointer: pointerOf(chosen.path), message: chosen.message };
  });
}

type IssueLike = { path: PropertyKey[]; message: string; code?: string; errors?: IssueLike[][] };

/**
 * For a value that matches no form of a union (a condition), report the closest form's deepest problem,
 * not zod's "Invalid input". Unions nest (and/or/not), so this recurses.
 */
function closestIssue(issue: IssueLike, prefix: PropertyKey[]): { path: PropertyKey[]; message: string } {
  const here = [...prefix, ...issue.path];
  if (!issue.errors || issue.errors.length === 0) return { path: here, message: issue.message };
  let best: { path: PropertyKey[]; message: string } | null = null;
  for (const branch of issue.errors) {
    const first = branch.find((e) => e.code !== "unrecognized_keys") ?? branch[0];
    if (!first) continue;
    const candidate = closestIssue(first, here);
    if (!best || candidate.path.length > best.path.length) best = candidate;
  }
  return best ?? { path: here, message: issue.message };
}

function pointerOf(path: PropertyKey[]): string {
  return path.length === 0 ? "/" : "/" + path.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
}

function suggest(name: string, index: Map<string, number>): string {
  const lower = name.toLowerCase();
  const near = [...index.keys()].find((k) => k.toLowerCase() === lower || k.replace(/[-_ ]/g, "") === name.replace(/[-_ ]/g, ""));
  return near ? ` (did you mean "${near}"?)` : "";
}

/** The keys of an agent's params, which the schema drops when they stand beside `params` instead of in it. */
const PARAM_KEYS = new Set(["task", "toolNames", "output", "pick", "template", "parse", "trim", "lowercase"]);

/**
 * An agent key that belongs in its `params` ("toolNames" beside "params"): the schema accepts unknown keys
 * (Koog's format has more of them) and drops it, so the task would run without its tools, unsaid.
 */
function checkMisplacedParams(input: unknown, warnings: FlowIssue[]): void {
  const agents = (input as { agents?: unknown } | null)?.agents;
  if (!Array.isArray(agents)) return;
  agents.forEach((agent: unknown, i) => {
    if (typeof agent !== "object" || agent === null) return;
    for (const key of Object.keys(agent)) {
      if (PARAM_KEYS.has(key)) warnings.push({ pointer: `/agents/${i}/${key}`, message: `"${key}" is read only inside "params": move it there (here it is ignored)` });
    }
  });
}
