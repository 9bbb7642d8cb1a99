/**
 * Task agents with toolNames run the agent loop (real core, real registry, loopback Ollama speaking the
 * JSON action protocol): only the listed tools are offered, results feed back, writes need a yes.
 */
import { createKrypton, type KryptonCore } from "../../../src/core/krypton";
import { silentLogger } from "../../../src/core/ports/logger";
import { DEFAULT_SETTINGS } from "../../../src/core/settings";
import { validateFlow } from "../../../src/core/workflows/flow-validate";
import { runReport, stepLine, traceMarkdown } from "../../../src/core/workflows/flow-report";
import { createNodeHost } from "../../../src/node/node-host";
import { gateOnIndex, IndexFreshness } from "../../../src/core/tools/index-freshness";
import { describeTools } from "../../../src/core/mcp/mcp-server";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { makeTempVault, type TempVault } from "../../support/temp-vault";

let ollama: OllamaTestServer;
let vault: TempVault;
let core: KryptonCore;

beforeEach(async () => {
  ollama = await startOllamaServer();
  vault = await makeTempVault({ "Notes/Tides.md": "# Tides\n\nTides follow the moon, twice a day.\n" });
  core = createKrypton(createNodeHost(vault.root, { logger: silentLogger }), { ...DEFAULT_SETTINGS, ollamaUrl: ollama.url, embeddingProvider: "none", requestTimeoutMs: 5_000 });
});
afterEach(async () => {
  await core.close();
  await vault.cleanup();
  await ollama.close();
});

const flowWith = (toolNames: string[]) =>
  validateFlow(
    {
      id: "tools",
      defaultModel: "ollama/llama3.1:8b",
      tools: toolNames,
      agents: [{ name: "researcher", type: "task", config: { maxIterations: 4 }, params: { task: "Answer from my notes: {{input}}", toolNames } }],
      transitions: [{ from: "researcher", to: "__finish__" }],
    },
    { knownTools: new Set(core.tools.list({ agent: true }).map((t) => t.name)) },
  );

it("validates against the agent tools, then runs the loop (native tool calls) over the listed tools only", async () => {
  const { flow, errors } = flowWith(["read_note"]);
  expect(errors).toEqual([]);
  ollama.script({ route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Notes/Tides.md" } }] } });
  ollama.script({ route: "chat", reply: "Twice a day, following the moon." });
  const result = await core.workflows.run(flow!, "how often are tides?");
  expect(result).toMatchObject({ status: "finished", output: { type: "string", data: "Twice a day, following the moon." } });
  const first = JSON.stringify(ollama.requestsTo("chat")[0].body);
  expect(first).toContain("read_note");
  expect(first).not.toContain("write_note");
  expect(JSON.stringify(ollama.requestsTo("chat")[1].body)).toContain("Tides follow the moon");
});

it("a tool call that fails is in the step's report (step line, trace) even when the model answers on and the run finishes", async () => {
  const { flow } = flowWith(["read_note"]);
  ollama.script({ route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Notes/Missing.md" } }] } });
  ollama.script({ route: "chat", reply: "I found no such note." });
  const result = await core.workflows.run(flow!, "what is in the missing note?");
  expect(result.status).toBe("finished");
  expect(result.steps[0].toolErrors).toEqual(["read_note failed: Note not found: Notes/Missing.md"]);
  expect(stepLine(result.steps[0], 0)).toMatch(/^1\. researcher \(task\) [\d.]+ s · \d+ tokens · read_note failed: Note not found: Notes\/Missing\.md$/);
  expect(traceMarkdown(flow!, "q", result, "now")).toContain("Tool errors:\n```text\nread_note failed: Note not found: Notes/Missing.md\n```");
});

it("the task's config.temperature, topP and maxTokens reach every model turn of its tool loop", async () => {
  const { flow, errors } = validateFlow(
    {
      id: "sampled",
      defaultModel: "ollama/llama3.1:8b",
      tools: ["read_note"],
      agents: [
        { name: "researcher", type: "task", config: { maxIterations: 4, temperature: 0.3, topP: 0.8, maxTokens: 700 }, params: { task: "Answer: {{input}}", toolNames: ["read_note"] } },
      ],
      transitions: [{ from: "researcher", to: "__finish__" }],
    },
    { knownTools: new Set(core.tools.list({ agent: true }).map((t) => t.name)) },
  );
  expect(errors).toEqual([]);
  ollama.script({ route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Notes/Tides.md" } }] } });
  ollama.script({ route: "chat", reply: "Twice a day." });
  expect((await core.workflows.run(flow!, "how often are tides?")).status).toBe("finished");
  const turns = ollama.requestsTo("chat").map((r) => (r.body as { options: Record<string, number> }).options);
  expect(turns).toHaveLength(2);
  for (const options of turns) expect(options).toMatchObject({ temperature: 0.3, top_p: 0.8, num_predict: 700 });
});

it("a write tool without a confirmation is refused: the vault stays byte-identical and the model is told", async () => {
  const { flow } = flowWith(["write_note"]);
  ollama.script({ route: "chat", reply: "", extra: { toolCalls: [{ name: "write_note", arguments: { title: "New", folder: "Notes", content: "hi" } }] } });
  ollama.script({ route: "chat", reply: "I could not write it." });
  const result = await core.workflows.run(flow!, "save a note");
  expect(result.status).toBe("finished");
  expect(result.steps[0].toolErrors).toEqual([expect.stringMatching(/^write_note was not run: The user declined write_note /)]);
  expect(await vault.exists("Notes/new.md")).toBe(false);
  expect(JSON.stringify(ollama.requestsTo("chat")[1].body)).toMatch(/declined write_note .*Nothing was changed/);
});

it("with a yes, the write happens", async () => {
  const { flow } = flowWith(["write_note"]);
  ollama.script({ route: "chat", reply: "", extra: { toolCalls: [{ name: "write_note", arguments: { title: "New", folder: "Notes", content: "hi" } }] } });
  ollama.script({ route: "chat", reply: "Saved." });
  const asked: string[] = [];
  const result = await core.workflows.run(flow!, "save a note", { confirm: (request) => (asked.push(request.title), Promise.resolve("once")) });
  expect(result.status).toBe("finished");
  expect(asked).toHaveLength(1);
  expect(await vault.read("Notes/new.md")).toContain("hi");
});

it("a flow whose task runs that same flow gets one nested run: the run inside it is refused, not nested again", async () => {
  const self = { id: "self", defaultModel: "ollama/llama3.1:8b", tools: ["run_workflow"], agents: [{ name: "a", type: "task", params: { task: "{{input}}", toolNames: ["run_workflow"] } }], transitions: [{ from: "a", to: "__finish__" }] };
  await vault.write("Flows/Self.md", "```krypton-flow\n" + JSON.stringify(self) + "\n```\n");
  const call = { route: "chat", reply: "", extra: { toolCalls: [{ name: "run_workflow", arguments: { flow_path: "Flows/Self.md", input: "again" } }] } };
  ollama.script([call, call, { route: "chat", reply: "inner done" }, { route: "chat", reply: "outer done" }]);
  const found = await core.workflows.flowNamed("Flows/Self.md");
  if (!("flow" in found)) throw new Error(found.error);
  const result = await core.workflows.run(found.flow, "run yourself");
  expect(result).toMatchObject({ status: "finished", output: { type: "string", data: "outer done" } });
  const chats = ollama.requestsTo("chat");
  expect(chats).toHaveLength(4);
  expect(JSON.stringify(chats[2].body)).toContain("Flows/Self.md is already running (Flows/Self.md → Flows/Self.md): a workflow cannot run itself");
});

it("flowNamed (the /run lookup) finds a flow by id, and names an invalid one's problems", async () => {
  await vault.write("Flows/Good.md", '```krypton-flow\n{"id":"good","agents":[{"name":"t","type":"transform","params":{"lowercase":true}}]}\n```\n');
  await vault.write("Flows/Bad.md", '```krypton-flow\n{"id":"bad","agents":[{"name":"t","type":"transform","params":{}}],"transitions":[{"from":"t","to":"zz"}]}\n```\n');
  const good = await core.workflows.flowNamed("good");
  expect(good).toMatchObject({ path: "Flows/Good.md", flow: { id: "good" } });
  const bad = await core.workflows.flowNamed("Flows/Bad");
  expect(bad).toEqual({ error: "Flows/Bad.md is not a valid workflow", issues: [{ pointer: "/transitions/0/to", message: 'unknown agent "zz"' }] });
  expect(await core.workflows.flowNamed("missing")).toEqual({ error: 'no workflow named "missing": give a note\'s path or name, or a flow id', issues: [] });
  // The read policy applies: an excluded folder's flows cannot be run.
  core.applySettings({ ...core.settings(), excludePatterns: ["flows/"] });
  expect(await core.workflows.flowNamed("good")).toMatchObject({ error: expect.stringMatching(/no workflow named "good"/) });
  expect(await core.workflows.flowNamed("Flows/Good")).toMatchObject({ error: expect.stringMatching(/no workflow named|exclude patterns/) });
});

const FIT_NOTICE = "To fit llama3.1:8b's context window (8,192 tokens), this step shortened 2 tool results.";

/**
 * Two tool results of 12,000 characters do not fit an 8,192-token window whole: the loop's next turn
 * (answered by `next`) shortens them. Runs the flow and checks that the fitted request went out.
 */
async function runReadingBigNotes(next: Parameters<OllamaTestServer["script"]>[0]) {
  await core.close();
  await vault.write("Notes/Big1.md", `# Big1\n\n${"word ".repeat(6_000)}`);
  await vault.write("Notes/Big2.md", `# Big2\n\n${"word ".repeat(6_000)}`);
  core = createKrypton(createNodeHost(vault.root, { logger: silentLogger }), { ...DEFAULT_SETTINGS, ollamaUrl: ollama.url, embeddingProvider: "none", requestTimeoutMs: 5_000, ollamaMaxContext: 8192 });
  const { flow } = flowWith(["read_note"]);
  ollama.script({ route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Notes/Big1.md" } }, { name: "read_note", arguments: { path: "Notes/Big2.md" } }] } });
  ollama.script(next);
  const result = await core.workflows.run(flow!, "what do the big notes say?");
  expect(JSON.stringify(ollama.requestsTo("chat")[1].body)).toMatch(/characters cut here by Krypton/);
  return { flow: flow!, result };
}

it("a step whose prompt was fitted to the window says so in its report (step line, trace)", async () => {
  const { flow, result } = await runReadingBigNotes({ route: "chat", reply: "They are long." });
  expect(result.status).toBe("finished");
  expect(result.steps[0].notice).toBe(FIT_NOTICE);
  expect(stepLine(result.steps[0], 0)).toMatch(new RegExp(`^1\\. researcher \\(task\\) [\\d.]+ s · \\d+ tokens · ${FIT_NOTICE.replace(/[.()]/g, "\\$&")}$`));
  expect(traceMarkdown(flow, "q", result, "now")).toContain(`\n_${FIT_NOTICE}_\n`);
});

it("a step whose prompt was fitted and which then fails says what was cut, before its error (step line, trace)", async () => {
  // The fitted request is sent, then the model is gone for good.
  const { flow, result } = await runReadingBigNotes({ route: "chat", status: 404, error: 'model "llama3.1:8b" not found, try pulling it first' });
  expect(result.status).toBe("failed");
  const [step] = result.steps;
  expect(step.notice).toBe(FIT_NOTICE);
  expect(step.error).toMatch(/is not installed in Ollama/);
  expect(stepLine(step, 0)).toBe(`1. researcher (task) ${(step.durationMs / 1000).toFixed(1)} s · ${FIT_NOTICE} · ${step.error}`);
  expect(traceMarkdown(flow, "q", result, "now")).toContain(`\n_${FIT_NOTICE}_\n`);
});

describe("a step whose search matched notes by keywords only", () => {
  const FAILED = /^Semantic search failed \(the embedding server failed .*\): notes were matched by keywords only\.$/;
  // Two steps search: the run says it once, however many searches said it.
  const searching = () =>
    validateFlow(
      {
        id: "research",
        defaultModel: "ollama/llama3.1:8b",
        tools: ["search_notes"],
        agents: [
          { name: "find", type: "task", params: { task: "Find my notes about {{input}}", toolNames: ["search_notes"] } },
          { name: "again", type: "task", params: { task: "Find more notes about {{input}}", toolNames: ["search_notes"] } },
        ],
        transitions: [{ from: "find", to: "again" }],
      },
      { knownTools: new Set(core.tools.list({ agent: true }).map((t) => t.name)) },
    ).flow!;
  const scriptSearches = () =>
    ollama.script([
      { route: "chat", reply: "", extra: { toolCalls: [{ name: "search_notes", arguments: { query: "tides" } }] } },
      { route: "chat", reply: "Tides.md" },
      { route: "chat", reply: "", extra: { toolCalls: [{ name: "search_notes", arguments: { query: "moon" } }] } },
      { route: "chat", reply: "Tides.md again" },
    ]);

  beforeEach(async () => {
    // The notes have vectors from a working embedder; then it fails every query.
    await core.close();
    core = createKrypton(createNodeHost(vault.root, { logger: silentLogger }), { ...DEFAULT_SETTINGS, ollamaUrl: ollama.url, requestTimeoutMs: 5_000 });
    await core.index.open();
    await core.index.idle();
    expect(core.index.status().embedded).toBeGreaterThan(0);
  });

  it("the run's result and its trace say why once, in the search tool's words", async () => {
    ollama.script({ route: "embed", status: 500, times: Infinity });
    scriptSearches();
    const flow = searching();
    const result = await core.workflows.run(flow, "tides");
    expect(result).toMatchObject({ status: "finished", output: { data: "Tides.md again" }, keywordOnlyRemarks: [expect.stringMatching(FAILED)] });
    const [remark] = result.keywordOnlyRemarks!;
    // The model was told too, by the tool itself.
    expect(JSON.stringify(ollama.requestsTo("chat")[1].body)).toContain(remark);
    const trace = traceMarkdown(flow, "tides", result, "now");
    expect(trace.split(remark)).toHaveLength(2);
    expect(trace).toMatch(new RegExp(`\\n\\n_${escaped(remark)}_\\n\\n## Input`));
  });

  it("each distinct reason once, in order: the embedder fails one way for a step's search, another way for the next", async () => {
    // A minute passes after each step (a slow model would take it), so the next search asks the embedder
    // again instead of holding back after the last failure.
    let skew = 0;
    const base = createNodeHost(vault.root, { logger: silentLogger });
    await core.close();
    core = createKrypton({ ...base, clock: { ...base.clock, now: () => base.clock.now() + skew } }, { ...DEFAULT_SETTINGS, ollamaUrl: ollama.url, requestTimeoutMs: 5_000 });
    await core.index.open();
    await core.index.idle();
    const flow = validateFlow(
      {
        ...searching(),
        agents: [...searching().agents, { name: "last", type: "task", params: { task: "Find the last notes about {{input}}", toolNames: ["search_notes"] } }],
        transitions: [
          { from: "find", to: "again" },
          { from: "again", to: "last" },
        ],
      },
      { knownTools: new Set(core.tools.list({ agent: true }).map((t) => t.name)) },
    ).flow!;
    ollama.script([
      { route: "embed", status: 500, error: "the embedder broke" },
      { route: "embed", extra: { embed: () => [1, 0, 0] } },
      { route: "embed", status: 500, error: "the embedder broke" },
    ]);
    scriptSearches();
    ollama.script([
      { route: "chat", reply: "", extra: { toolCalls: [{ name: "search_notes", arguments: { query: "sea" } }] } },
      { route: "chat", reply: "Tides.md at last" },
    ]);
    const result = await core.workflows.run(flow, "tides", { onStep: (_step, phase) => void (phase === "end" && (skew += 61_000)) });
    expect(result.status).toBe("finished");
    // Each step's query went to the embedder (the notes' vectors were made before).
    expect(ollama.requestsTo("embed").map((r) => (r.body as { input: string[] }).input).slice(-3)).toEqual([["tides"], ["moon"], ["sea"]]);
    const broke = /^Semantic search failed \(the embedding server failed \(.*the embedder broke.*\)\): notes were matched by keywords only\.$/;
    const unusable = /^Semantic search failed \(the embedding model returned unusable data \(a vector of 3 numbers, .*\)\): notes were matched by keywords only\.$/;
    expect(result.keywordOnlyRemarks).toEqual([expect.stringMatching(broke), expect.stringMatching(unusable)]);
    const [first, second] = result.keywordOnlyRemarks!;
    // Each in the trace once, in order; scripts get both in keywordOnly, a string as before.
    const trace = traceMarkdown(flow, "tides", result, "now");
    expect(trace).toMatch(new RegExp(`\\n\\n_${escaped(first)}_\\n\\n_${escaped(second)}_\\n\\n## Input`));
    expect(runReport(result).keywordOnly).toBe(`${first} ${second}`);
  });

  it("run_workflow (MCP) carries it as keywordOnly, and after its text", async () => {
    ollama.script({ route: "embed", status: 500, times: Infinity });
    scriptSearches();
    const flow = { ...searching(), agents: searching().agents.slice(0, 1), transitions: [] };
    await vault.write("Flows/Research.md", "```krypton-flow\n" + JSON.stringify(flow) + "\n```\n");
    const out = await core.tools.call("run_workflow", { flow_path: "Flows/Research.md", input: "tides" });
    expect(out.structured).toMatchObject({ status: "finished", result: "Tides.md", keywordOnly: expect.stringMatching(FAILED) });
    expect(out.text.endsWith(`\n\n${out.structured.keywordOnly as string}`)).toBe(true);
  });

  it("a search that finds nothing says it too: a paraphrase finds nothing by keywords", async () => {
    ollama.script({ route: "embed", status: 500, times: Infinity });
    ollama.script([
      { route: "chat", reply: "", extra: { toolCalls: [{ name: "search_notes", arguments: { query: "xyzzy" } }] } },
      { route: "chat", reply: "Nothing found." },
    ]);
    const flow = { ...searching(), agents: searching().agents.slice(0, 1), transitions: [] };
    const result = await core.workflows.run(flow, "xyzzy");
    expect(result).toMatchObject({ status: "finished", output: { data: "Nothing found." }, keywordOnlyRemarks: [expect.stringMatching(FAILED)] });
    // The model was told, in the tool's error.
    expect(JSON.stringify(ollama.requestsTo("chat")[1].body)).toContain(`No notes match 'xyzzy'\\n\\n${result.keywordOnlyRemarks![0]}`);
  });

  it("a search that had its query's vector says nothing", async () => {
    scriptSearches();
    const result = await core.workflows.run(searching(), "tides");
    expect(result.status).toBe("finished");
    expect(result).not.toHaveProperty("keywordOnlyRemarks");
    expect(traceMarkdown(searching(), "tides", result, "now")).not.toContain("keywords only");
  });
});

describe("which flows need the vault index (a host opens it only for them)", () => {
  const withTools = (...toolNames: string[][]) =>
    validateFlow({
      id: "needs",
      defaultModel: "ollama/llama3.1:8b",
      agents: [{ name: "plain", type: "task", params: { task: "t" } }, ...toolNames.map((names, i) => ({ name: `t${i}`, type: "task", params: { task: "t", toolNames: names } }))],
    }).flow!;

  it("each built-in tool declares whether it needs the index: the ones that search read it, run_workflow's flows may", () => {
    const declared = Object.fromEntries(core.tools.list({ agent: true }).map((t) => [t.name, t.needsIndex ?? null]));
    expect(declared).toEqual({
      create_note: null,
      search_notes: "reads",
      summarize_notes: "reads",
      read_note: null,
      list_notes: null,
      write_note: null,
      append_to_note: null,
      web_search: null,
      get_current_time: null,
      list_tools: null,
      run_workflow: "through-tools",
      generate_flashcards: "reads",
      study_goals: null,
    });
  });

  it("each built-in tool that creates or changes notes declares it, so the index gate marks the index behind after it (the standalone server sees no vault events)", () => {
    const changing = core.tools
      .list({ agent: true })
      .filter((t) => t.changesVault)
      .map((t) => t.name);
    // run_workflow writes only through its tasks' tools, whose own calls pass the gate.
    expect(changing).toEqual(["create_note", "write_note", "append_to_note", "generate_flashcards", "study_goals"]);
  });

  it("study_goals marks the index behind only for the actions that write a goal note, yet is never shown as read-only", async () => {
    let scans = 0;
    // Long enough that only a mark, never age, makes a scan due during the test.
    const clock = core.host.clock;
    const freshness = new IndexFreshness((signal) => (scans++, core.index.sync(signal)), { maxAgeMs: 3_600_000, clock });
    gateOnIndex(core.tools, { index: core.index, maxWaitMs: 60_000, clock, freshness });
    const scansAfter = async (action: Record<string, unknown>) => {
      await core.tools.call("study_goals", action);
      await core.tools.call("search_notes", { query: "tides" });
      return scans;
    };
    expect(await scansAfter({ action: "list" })).toBe(1); // the first search's own scan
    expect(await scansAfter({ action: "create", goal: "Learn tides" })).toBe(2);
    expect(await scansAfter({ action: "progress", goal: "tides" })).toBe(2);
    expect(await scansAfter({ action: "list" })).toBe(2);
    expect(await scansAfter({ action: "log", goal: "tides", minutes: 20 })).toBe(3);
    // What MCP clients and agent mode's confirmation go by: the tool as a whole writes.
    expect(describeTools(core.tools).find((t) => t.name === "study_goals")?.annotations).toMatchObject({ readOnlyHint: false });
  });

  it("a flow needs it when a task may call such a tool, not when its tools only read, list or write notes", () => {
    expect(core.workflows.needsIndex(withTools())).toBe(false);
    expect(core.workflows.needsIndex(withTools(["read_note", "write_note", "append_to_note", "list_notes"], ["get_current_time"]))).toBe(false);
    expect(core.workflows.needsIndex(withTools(["read_note"], ["read_note", "summarize_notes"]))).toBe(true);
    expect(core.workflows.needsIndex(withTools(["run_workflow"]))).toBe(true);
  });
});

describe("a task whose tool loop ends at a limit before it finished", () => {
  /** A small model that asks for the same note (forever, or `times` turns), never answering. */
  const loopForever = (times = Infinity) => ollama.script({ route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Notes/Tides.md" } }] }, times });
  const twoSteps = (extra: Record<string, unknown> = {}, config: Record<string, unknown> = { maxIterations: 3 }) =>
    validateFlow(
      {
        id: "limited",
        defaultModel: "ollama/llama3.1:8b",
        tools: ["read_note"],
        agents: [
          { name: "researcher", type: "task", config, params: { task: "Answer from my notes: {{input}}", toolNames: ["read_note"] } },
          { name: "polish", type: "task", params: { task: "Polish: {{input}}" } },
          { name: "wrap_up", type: "task", params: { task: "Say what is known so far: {{input}}" } },
        ],
        transitions: [{ from: "researcher", to: "polish" }],
        ...extra,
      },
      { knownTools: new Set(core.tools.list({ agent: true }).map((t) => t.name)) },
    ).flow!;
  const asked = () => ollama.requestsTo("chat").map((r) => agentOfRequest(r.body));

  it("at its step limit (maxIterations): the step says so, the run stops at a step limit and nothing flows on", async () => {
    loopForever();
    const flow = twoSteps();
    const result = await core.workflows.run(flow, "how often are tides?");
    const limit = "stopped at the step limit (3 steps) before it finished";
    expect(result).toMatchObject({ status: "step limit", message: `Agent "researcher" ${limit}; the last output is kept.` });
    expect(result.steps.map((s) => s.agent)).toEqual(["researcher"]);
    expect(result.steps[0].limit).toBe(limit);
    // The output it had is kept, marked the way agent mode marks it, for the trace and the run's last output.
    expect(result.output).toEqual({ type: "string", data: "I could not finish within the step limit.\n\n*(Stopped at the step limit: 3 steps.)*" });
    // The third call was blocked (a tool error, said first), then the limit.
    expect(result.steps[0].toolErrors).toEqual([expect.stringMatching(/^read_note failed: Blocked: you already called read_note/)]);
    expect(stepLine(result.steps[0], 0)).toMatch(new RegExp(`^1\\. researcher \\(task\\) [\\d.]+ s · \\d+ tokens · read_note failed: Blocked: .* · ${limit.replace(/[()]/g, "\\$&")}$`));
    const trace = traceMarkdown(flow, "q", result, "now");
    expect(trace).toMatch(new RegExp(`## 1\\. researcher \\(task\\) [\\d.]+ s · \\d+ tokens · ${limit.replace(/[()]/g, "\\$&")}\\n`));
    expect(trace).toContain(`**Status:** step limit: Agent "researcher" ${limit}`);
    // Three turns with tools and the tool-less one that writes the answer; "polish" never ran.
    expect(asked()).toEqual(["researcher", "researcher", "researcher", "researcher"]);
  });

  it("by the loop guard (the same call blocked three times): the step says so and the run stops", async () => {
    loopForever();
    const result = await core.workflows.run(twoSteps({}, {}), "how often are tides?");
    const limit = "stopped by the loop guard (3 repeated tool calls blocked) before it finished";
    expect(result).toMatchObject({ status: "loop guard", message: `Agent "researcher" ${limit}; the last output is kept.` });
    expect(result.steps.map((s) => [s.agent, s.limit])).toEqual([["researcher", limit]]);
    expect(asked()).toEqual(Array(5).fill("researcher"));
    expect(runReport(result).status).toBe("loop guard");
    expect(traceMarkdown(twoSteps({}, {}), "q", result, "now")).toContain(`status: "loop guard"\n`);
  });

  it("at the agent-mode time limit (the setting): the step says so and the run stops", async () => {
    await core.close();
    core = createKrypton(createNodeHost(vault.root, { logger: silentLogger }), { ...DEFAULT_SETTINGS, ollamaUrl: ollama.url, embeddingProvider: "none", agentTimeoutMs: 100 });
    ollama.script({ route: "chat", stall: true });
    const result = await core.workflows.run(twoSteps(), "how often are tides?");
    const limit = "stopped at the time limit (0.1 s) before it finished";
    expect(result).toMatchObject({ status: "time limit", message: `Agent "researcher" ${limit}; the last output is kept.` });
    expect(result.steps.map((s) => [s.agent, s.limit])).toEqual([["researcher", limit]]);
    expect(runReport(result).status).toBe("time limit");
    expect(traceMarkdown(twoSteps(), "q", result, "now")).toContain(`**Status:** time limit: Agent "researcher" ${limit}`);
  });

  it("onLimit takes it over once, as it does at the flow's own bounds", async () => {
    // Three turns with tools and the tool-less one; then wrap_up answers.
    loopForever(4);
    ollama.script({ route: "chat", reply: "Tides: not found yet." });
    const result = await core.workflows.run(twoSteps({ onLimit: "wrap_up" }), "how often are tides?");
    expect(result.steps.map((s) => s.agent)).toEqual(["researcher", "wrap_up"]);
    expect(result).toMatchObject({
      status: "step limit",
      output: { data: "Tides: not found yet." },
      message: 'Agent "researcher" stopped at the step limit (3 steps) before it finished; handed over to "wrap_up".',
    });
  });

  it("onLimit keeps the cause as the run's status: a time limit handed over is still a time limit", async () => {
    await core.close();
    core = createKrypton(createNodeHost(vault.root, { logger: silentLogger }), { ...DEFAULT_SETTINGS, ollamaUrl: ollama.url, embeddingProvider: "none", agentTimeoutMs: 100 });
    ollama.script({ route: "chat", stall: true, times: 1 });
    ollama.script({ route: "chat", reply: "Tides: not found yet." });
    const result = await core.workflows.run(twoSteps({ onLimit: "wrap_up" }), "how often are tides?");
    expect(result.steps.map((s) => s.agent)).toEqual(["researcher", "wrap_up"]);
    expect(result).toMatchObject({
      status: "time limit",
      output: { data: "Tides: not found yet." },
      message: 'Agent "researcher" stopped at the time limit (0.1 s) before it finished; handed over to "wrap_up".',
    });
  });

  it("run_workflow (MCP) says it in its status, message and text", async () => {
    loopForever();
    const flow = twoSteps();
    await vault.write("Flows/Limited.md", "```krypton-flow\n" + JSON.stringify(flow) + "\n```\n");
    const out = await core.tools.call("run_workflow", { flow_path: "Flows/Limited.md", input: "tides" });
    const message = 'Agent "researcher" stopped at the step limit (3 steps) before it finished; the last output is kept.';
    expect(out.structured).toMatchObject({ status: "step limit", message, path: ["researcher"] });
    expect(out.text).toContain(`[step limit: researcher] ${message}`);
  });

  it("run_workflow (MCP) names the loop guard as its status", async () => {
    loopForever();
    await vault.write("Flows/Looping.md", "```krypton-flow\n" + JSON.stringify(twoSteps({}, {})) + "\n```\n");
    const out = await core.tools.call("run_workflow", { flow_path: "Flows/Looping.md", input: "tides" });
    const message = 'Agent "researcher" stopped by the loop guard (3 repeated tool calls blocked) before it finished; the last output is kept.';
    expect(out.structured).toMatchObject({ status: "loop guard", message, path: ["researcher"] });
    expect(out.text).toContain(`[loop guard: researcher] ${message}`);
  });
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The agent a chat request was made for, from the system prompt the flow runner sends. */
function agentOfRequest(body: unknown): string {
  const system = (body as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === "system")?.content ?? "";
  return /You are "([^"]+)"/.exec(system)?.[1] ?? "";
}
