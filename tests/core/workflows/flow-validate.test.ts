/** Each validation message, with its JSON pointer; the shipped examples and Koog's files validate clean. */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { flowJsonSchema } from "../../../src/core/workflows/flow-schema";
import { defaultMaxSteps, outputChoices, outputType, validateFlow, type FlowIssue } from "../../../src/core/workflows/flow-validate";
import { exampleFlows } from "./flow-fixtures";

const KOOG = join(__dirname, "..", "..", "fixtures", "koog-flows");

type Json = Record<string, unknown>;
const task = (name: string, extra: Json = {}) => ({ name, type: "task", params: { task: `do ${name}` }, ...extra });
const base = (patch: Json = {}): Json => ({
  id: "t",
  defaultModel: "ollama/llama3.1:8b",
  agents: [task("a"), task("b")],
  transitions: [
    { from: "a", to: "b" },
    { from: "b", to: "__finish__" },
  ],
  ...patch,
});
const issues = (flow: Json, env = {}) => validateFlow(flow, env);
const at = (list: FlowIssue[], pointer: string) => list.find((i) => i.pointer === pointer)?.message ?? `(nothing at ${pointer}: ${JSON.stringify(list)})`;

describe("validateFlow", () => {
  it("accepts a simple flow with no issues", () => {
    expect(issues(base())).toMatchObject({ errors: [], warnings: [] });
  });

  it.each(Object.entries(exampleFlows()))("the shipped example %s is valid and warning-free", (_name, flow) => {
    const result = validateFlow(flow, { ollamaModels: ["llama3.1:8b"] });
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it.each(readdirSync(KOOG))("Koog's %s loads unchanged (runtime ignored, upper-case operations)", (file) => {
    const result = validateFlow(JSON.parse(readFileSync(join(KOOG, file), "utf8")));
    expect(result.errors).toEqual([]);
  });

  it("duplicate agent names", () => {
    expect(at(issues(base({ agents: [task("a"), task("b"), task("a")] })).errors, "/agents/2/name")).toMatch(/duplicate agent name "a" \(also \/agents\/0\)/);
  });

  it("unknown from / to, with a suggestion", () => {
    const result = issues(base({ transitions: [{ from: "a", to: "B" }, { from: "x", to: "__finish__" }] }));
    expect(at(result.errors, "/transitions/0/to")).toBe('unknown agent "B" (did you mean "b"?)');
    expect(at(result.errors, "/transitions/1/from")).toBe('unknown agent "x"');
  });

  it("a params key written beside params is a warning naming where it goes (the schema would drop it unsaid)", () => {
    const result = issues(base({ agents: [task("a", { toolNames: ["search_notes"] }), task("b")] }));
    expect(result.errors).toEqual([]);
    expect(at(result.warnings, "/agents/0/toolNames")).toBe('"toolNames" is read only inside "params": move it there (here it is ignored)');
    expect(result.flow?.agents[0].type === "task" && result.flow.agents[0].params.toolNames).toBeUndefined();
  });

  it("unreachable agent is a warning", () => {
    const result = issues(base({ agents: [task("a"), task("b"), task("orphan")] }));
    expect(result.errors).toEqual([]);
    expect(at(result.warnings, "/agents/2")).toBe('"orphan" is never reached from "a"');
  });

  it("no path to __finish__", () => {
    const result = issues(base({ transitions: [{ from: "a", to: "b" }, { from: "b", to: "a" }] }));
    expect(at(result.errors, "/transitions")).toMatch(/no path from "a" reaches __finish__/);
  });

  it("a cycle with no conditional exit", () => {
    const flow = base({
      agents: [task("a"), task("b"), task("c")],
      transitions: [
        { from: "a", to: "__finish__", condition: { variable: "input", operation: "equals", value: "done" } },
        { from: "a", to: "b" },
        { from: "b", to: "c" },
        { from: "c", to: "b" },
      ],
    });
    expect(at(issues(flow).errors, "/transitions/2")).toBe("the loop b → c has no conditional exit: it would run until the step limit");
  });

  it("reports every independent error at once: a wrong model, an unknown tool, a never-matching value and a loop", () => {
    const flow = base({
      defaultModel: "llama3.1",
      agents: [task("a", { params: { task: "score", output: "int" } }), task("b", { params: { task: "t", toolNames: ["nope_tool"] } }), task("c")],
      transitions: [
        { from: "a", to: "__finish__", condition: { variable: "input", operation: "equals", value: "many" } },
        { from: "a", to: "b" },
        { from: "b", to: "c" },
        { from: "c", to: "b" },
      ],
    });
    const { errors } = issues(flow, { knownTools: new Set(["read_note"]) });
    expect(errors.map((e) => e.pointer)).toEqual(["/defaultModel", "/agents/1/params/toolNames/0", "/transitions/0/condition/value", "/transitions/2"]);
    expect(at(errors, "/transitions/2")).toBe("the loop b → c has no conditional exit: it would run until the step limit");
  });

  it("an unknown agent name still stops the graph checks (they cannot follow it)", () => {
    const { errors } = issues(base({ transitions: [{ from: "a", to: "bb" }, { from: "b", to: "b" }] }));
    expect(errors.map((e) => e.pointer)).toEqual(["/transitions/0/to"]);
  });

  it("a loop with a conditional exit is fine", () => {
    const flow = base({
      agents: [task("a"), { name: "v", type: "verify", params: { task: "ok?" } }],
      transitions: [
        { from: "a", to: "v" },
        { from: "v", to: "__finish__", condition: { variable: "input.success", operation: "equals", value: true } },
        { from: "v", to: "a" },
      ],
    });
    expect(issues(flow)).toMatchObject({ errors: [], warnings: [] });
  });

  it("a transition shadowed by an earlier unconditional one is a warning", () => {
    const flow = base({ transitions: [{ from: "a", to: "b" }, { from: "a", to: "__finish__", condition: { variable: "input", operation: "equals", value: "x" } }, { from: "b", to: "__finish__" }] });
    expect(at(issues(flow).warnings, "/transitions/1")).toMatch(/never taken: \/transitions\/0 from "a" has no condition and comes first/);
  });

  it("a condition literal that cannot match the output type", () => {
    const flow = base({
      agents: [task("a", { params: { task: "count", output: "int" } }), { name: "v", type: "verify", params: { task: "ok?" } }],
      transitions: [
        { from: "a", to: "v", condition: { variable: "input.data", operation: "equals", value: "many" } },
        { from: "a", to: "v" },
        { from: "v", to: "__finish__", condition: { variable: "input.success", operation: "equals", value: "yes" } },
        { from: "v", to: "__finish__", condition: { variable: "input.feedback", operation: "more", value: 3 } },
        { from: "v", to: "__finish__", condition: { variable: "input.score", operation: "equals", value: 3 } },
      ],
    });
    const { errors } = issues(flow);
    expect(at(errors, "/transitions/0/condition/value")).toBe('"many" can never match a number: "a" outputs a int');
    expect(at(errors, "/transitions/2/condition/value")).toMatch(/"yes" can never match true\/false: "v" outputs input.success as a boolean/);
    expect(at(errors, "/transitions/3/condition/value")).toMatch(/3 can never match a text/);
    expect(at(errors, "/transitions/4/condition/variable")).toMatch(/"input.score" does not exist on the output of "v" \(a critique value\)/);
  });

  it("an unknown operation, even nested", () => {
    const flow = base({ transitions: [{ from: "a", to: "b", condition: { operation: "and", conditions: [{ variable: "input", operation: "gt", value: 1 }] } }, { from: "a", to: "b" }, { from: "b", to: "__finish__" }] });
    const { errors } = issues(flow);
    expect(at(errors, "/transitions/0/condition/conditions/0/operation")).toMatch(/unknown operation "gt": use one of equals, not_equals/);
  });

  it("bad model strings and Ollama models that are not installed", () => {
    const flow = base({ defaultModel: "llama3", agents: [task("a", { model: "openai/gpt-4o" }), task("b", { model: "ollama/qwen3:4b" })] });
    const { errors } = issues(flow, { ollamaModels: ["llama3.1:8b"] });
    expect(at(errors, "/defaultModel")).toMatch(/"llama3" is not a model reference: write provider\/model/);
    expect(at(errors, "/agents/0/model")).toMatch(/Unknown provider "openai"/);
    expect(at(errors, "/agents/1/model")).toBe('Ollama model "qwen3:4b" is not installed: run `ollama pull qwen3:4b`');
  });

  it("a model-backed agent without any model", () => {
    const flow = base({ defaultModel: undefined });
    expect(at(issues(flow).errors, "/agents/0/model")).toMatch(/needs a model/);
  });

  it("unknown tools, before and after MCP discovery", () => {
    const flow = base({ tools: ["search_notes", "weather"], agents: [task("a", { params: { task: "t", toolNames: ["search_notes", "read_note", "weather:forecast"] } }), task("b")] });
    expect(at(issues(flow).errors, "/agents/0/params/toolNames/1")).toMatch(/unknown tool "read_note": list it/);
    const discovered = issues(flow, { knownTools: new Set(["search_notes", "read_note"]) });
    expect(at(discovered.errors, "/tools/1")).toMatch(/unknown tool "weather": not a built-in tool nor an MCP server configured in settings/);
    expect(discovered.errors.find((e) => e.pointer === "/agents/0/params/toolNames/1")).toBeUndefined();
  });

  it("a Koog MCP tool object never starts a process: a warning says so", () => {
    const flow = JSON.parse(readFileSync(join(KOOG, "greeting_flow_with_mcp_tool.json"), "utf8")) as Json;
    expect(at(validateFlow(flow).warnings, "/tools/0")).toMatch(/flows cannot start or reach servers themselves/);
  });

  it("a loop that alternates Ollama models is a warning", () => {
    const flow = base({
      agents: [task("a", { model: "ollama/llama3.1:8b" }), { name: "v", type: "verify", model: "ollama/qwen3:4b", params: { task: "ok?" } }],
      transitions: [
        { from: "a", to: "v" },
        { from: "v", to: "__finish__", condition: { variable: "input.success", operation: "equals", value: true } },
        { from: "v", to: "a" },
      ],
    });
    expect(at(issues(flow).warnings, "/agents/0")).toMatch(/alternates Ollama models \(ollama\/llama3.1:8b, ollama\/qwen3:4b\)/);
  });

  it("schema errors point at the field", () => {
    expect(at(issues({ id: "x", agents: [{ name: "a", type: "task", params: {} }] }).errors, "/agents/0/params/task")).toMatch(/expected string|task/);
    expect(at(issues({ id: "x", agents: [] }).errors, "/agents")).toMatch(/at least one agent/);
    expect(at(issues({ id: "x", agents: [{ name: "a", type: "parallel" }] }).errors, "/agents/0/type")).toBeTruthy();
    expect(at(issues({ id: "x", agents: [task("__finish__")] }).errors, "/agents/0/name")).toMatch(/reserved/);
  });

  it("output types and routing choices are inferred from conditions", () => {
    const flows = exampleFlows() as Record<string, { agents: { name: string }[] }>;
    const branching = validateFlow(flows["Conditional branching"]).flow!;
    expect(outputType(branching, branching.agents[0])).toBe("int");
    const koog = validateFlow(JSON.parse(readFileSync(join(KOOG, "conditional_branching_flow.json"), "utf8"))).flow!;
    expect(outputType(koog, koog.agents[0])).toBe("double");
    const tree = validateFlow(flows["Decision tree"]).flow!;
    expect(outputChoices(tree, tree.agents[0])).toEqual(["meeting", "idea", "tasks", "other"]);
    expect(defaultMaxSteps(tree)).toBe(100);
  });

  it("ships a JSON Schema generated from the zod schema", () => {
    const schema = flowJsonSchema();
    expect(schema).toMatchObject({ type: "object", required: expect.arrayContaining(["id", "agents"]) });
  });
});

describe("schemas/krypton-flow.schema.json", () => {
  const file = join(__dirname, "..", "..", "..", "schemas", "krypton-flow.schema.json");
  it("is the schema the validator uses (regenerate with UPDATE_FLOW_SCHEMA=1)", () => {
    const generated = JSON.stringify(flowJsonSchema(), null, 2) + "\n";
    if (process.env.UPDATE_FLOW_SCHEMA === "1") writeFileSync(file, generated);
    expect(readFileSync(file, "utf8")).toBe(generated);
  });
});
