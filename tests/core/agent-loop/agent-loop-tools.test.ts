import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { defineTool } from "../../../src/core/tools/tool-registry";
import { ProviderError } from "../../../src/core/providers/provider-error";
import { OllamaChatModel } from "../../../src/core/providers/ollama/ollama-chat-model";
import { FAST_RETRY } from "../providers/provider-fixtures";
import { call, final, makeLoopWorld, ScriptedToolModel, type LoopWorld } from "./agent-loop-fixtures";
import { snapshotFiles } from "../../support/temp-vault";

const NOTES = { "Projects/Plan.md": "# Plan\n\nShip the agent mode." };
const READ_PLAN = JSON.stringify({ name: "read_note", arguments: { path: "Projects/Plan.md" } });

describe("agent loop: confirmation of write tools", () => {
  let world: LoopWorld;
  afterEach(async () => {
    await world?.close();
  });

  it("deny leaves the vault byte-identical and tells the model", async () => {
    world = await makeLoopWorld({ files: { ...NOTES, "Bin.md": "caf\u00e9\r\nno newline at end" } });
    world.ollama.script([
      { route: "chat", reply: call("append_to_note", { path: "Projects/Plan.md", content: "- [ ] Write the README" }) },
      { route: "chat", reply: call("write_note", { title: "New idea", content: "# New idea" }) },
      { route: "chat", reply: final("OK, I changed nothing.") },
    ]);
    const before = await snapshotFiles(world.vault.root);
    world.decisions = ["deny", "deny"];

    const { result } = await world.run("Add a README task to my plan and save an idea");

    expect(await snapshotFiles(world.vault.root)).toEqual(before);
    expect(world.confirms).toHaveLength(2);
    expect(world.confirms[0].title).toBe("Append 2 lines to Projects/Plan.md");
    expect(world.confirms[0].preview).toBe(
      ["--- Projects/Plan.md", "+++ Projects/Plan.md", "@@ -1,3 +1,4 @@", " # Plan", " ", " Ship the agent mode.", "+- [ ] Write the README"].join("\n"),
    );
    expect(world.confirms[1]).toMatchObject({ title: "Create a new note Krypton/new-idea.md", preview: "# New idea" });
    expect(result.steps.map((s) => s.outcome)).toEqual(["denied", "denied"]);
    expect(world.bodies()[1].messages.at(-2)!.content).toMatch(/The user declined append_to_note .*Nothing was changed/);
  });

  it("the diff shows every line the append writes: a blank line the model starts with on a note that ends its last line", async () => {
    world = await makeLoopWorld({ files: { "Projects/Plan.md": "# Plan\n\nShip the agent mode.\n" } });
    world.ollama.script([
      { route: "chat", reply: call("append_to_note", { path: "Projects/Plan.md", content: "\n- [ ] Write the README" }) },
      { route: "chat", reply: final("Added.") },
    ]);
    world.decisions = ["once"];
    await world.run("Add a README task to my plan");
    expect(world.confirms[0].preview).toBe(
      ["--- Projects/Plan.md", "+++ Projects/Plan.md", "@@ -1,3 +1,5 @@", " # Plan", " ", " Ship the agent mode.", "+", "+- [ ] Write the README"].join("\n"),
    );
    expect(await world.vault.read("Projects/Plan.md")).toBe("# Plan\n\nShip the agent mode.\n\n- [ ] Write the README\n");
  });

  it("appends to a CRLF note in CRLF: no LF-only lines in a Windows-edited note", async () => {
    world = await makeLoopWorld({ files: { "Projects/Win.md": "# Win\r\n\r\nText" } });
    world.ollama.script([
      { route: "chat", reply: call("append_to_note", { path: "Projects/Win.md", content: "- one\n- two\r\n" }) },
      { route: "chat", reply: final("Added.") },
    ]);
    world.decisions = ["once"];
    const { result } = await world.run("Add two items");
    expect(result.steps.map((s) => s.outcome)).toEqual(["ok"]);
    expect(await world.vault.read("Projects/Win.md")).toBe("# Win\r\n\r\nText\r\n- one\r\n- two\r\n");
  });

  it("allow once appends atomically after approval; allow for the conversation skips the next question", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script([
      { route: "chat", reply: call("append_to_note", { path: "Projects/Plan.md", content: "- one" }) },
      { route: "chat", reply: call("append_to_note", { path: "Projects/Plan.md", content: "- two\n" }) },
      { route: "chat", reply: call("append_to_note", { path: "Projects/Plan.md", content: "- three" }) },
      { route: "chat", reply: final("Added.") },
    ]);
    world.decisions = ["once", "conversation"];
    const approvals = new Set<string>();
    const { result } = await world.run("Add three items", { approvals });

    expect(result.steps.map((s) => s.outcome)).toEqual(["ok", "ok", "ok"]);
    expect(world.confirms).toHaveLength(2);
    expect(approvals.has("append_to_note")).toBe(true);
    expect(await world.vault.read("Projects/Plan.md")).toBe("# Plan\n\nShip the agent mode.\n- one\n- two\n- three\n");
  });

  it("refuses an append when the note changed after the preview; writes nothing", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script([
      { route: "chat", reply: call("append_to_note", { path: "Projects/Plan.md", content: "- late" }) },
      { route: "chat", reply: final("It changed.") },
    ]);
    const { result } = await world.run("Add an item", {
      confirm: async () => {
        await world.vault.write("Projects/Plan.md", "# Plan\n\nEdited by the user meanwhile.\n");
        return "once";
      },
    });
    expect(result.steps[0].outcome).toBe("error");
    expect(result.steps[0].result).toMatch(/Projects\/Plan\.md changed since the preview you approved; nothing was appended/);
    expect(await world.vault.read("Projects/Plan.md")).toBe("# Plan\n\nEdited by the user meanwhile.\n");
  });

  it("write_note never overwrites: a taken name gets a suffix; without a way to ask, writes are refused", async () => {
    world = await makeLoopWorld({ files: { ...NOTES, "Krypton/idea.md": "mine" } });
    world.ollama.script([
      { route: "chat", reply: call("write_note", { title: "Idea", content: "# Idea\n" }) },
      { route: "chat", reply: final("Saved.") },
    ]);
    world.decisions = ["once"];
    const { result } = await world.run("Save an idea");
    expect(result.steps[0].result).toBe("Created Krypton/idea-1.md");
    expect(await world.vault.read("Krypton/idea.md")).toBe("mine");
    expect(await world.vault.read("Krypton/idea-1.md")).toBe("# Idea\n");

    world.ollama.reset();
    world.ollama.script([
      { route: "chat", reply: call("write_note", { title: "Other", content: "x" }) },
      { route: "chat", reply: final("Could not.") },
    ]);
    const before = await snapshotFiles(world.vault.root);
    const refused = await world.run("Save another", { confirm: undefined });
    expect(refused.result.steps[0]).toMatchObject({ outcome: "denied" });
    expect(refused.result.steps[0].result).toMatch(/needs the user's approval, which cannot be asked here/);
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });

  // The preview names the note that will be created: on macOS or Windows the setting's "Krypton" is the vault's
  // empty "krypton", and a taken name gets its suffix; the user approves that path, not the one asked for.
  it("write_note's preview shows the path the note is created at: the folder as the vault spells it, the free name", async () => {
    world = await makeLoopWorld({ files: { ...NOTES, "krypton/idea.md": "mine" } });
    await mkdir(join(world.vault.root, "notes"));
    world.ollama.script([
      { route: "chat", reply: call("write_note", { title: "Idea", content: "# Idea\n" }) },
      { route: "chat", reply: call("write_note", { title: "Plan", content: "# Plan\n", folder: "Notes" }) },
      { route: "chat", reply: final("Saved.") },
    ]);
    world.decisions = ["once", "once"];
    const { result } = await world.run("Save an idea and a plan");
    expect(world.confirms.map((c) => c.title)).toEqual(["Create a new note krypton/idea-1.md", "Create a new note notes/plan.md"]);
    expect(result.steps.map((s) => s.result)).toEqual(["Created krypton/idea-1.md", "Created notes/plan.md"]);
    expect(await world.vault.read("krypton/idea.md")).toBe("mine");
  });

  it("agent-only write tools are invisible and refused for outside callers (MCP)", async () => {
    world = await makeLoopWorld({ files: NOTES });
    const external = world.registry.list().map((t) => t.name);
    expect(external).not.toContain("append_to_note");
    expect(external).not.toContain("write_note");
    expect(external.sort()).toEqual(["create_note", "read_note", "search_notes", "summarize_notes"]);
    await expect(world.registry.call("append_to_note", { path: "Projects/Plan.md", content: "x" })).rejects.toThrow(/^Unknown tool: append_to_note/);
    await expect(world.registry.call("append_to_note", { path: "Projects/Plan.md", content: "x" }, { caller: "agent" })).rejects.toThrow(
      /needs the user's approval of the diff first/,
    );
    expect(await world.vault.read("Projects/Plan.md")).toBe(NOTES["Projects/Plan.md"]);
  });
});

describe("agent loop: Stop, limits and logs", () => {
  let world: LoopWorld;
  afterEach(async () => {
    await world?.close();
  });

  it("Stop mid-tool cancels the running tool and ends the turn as stopped", async () => {
    world = await makeLoopWorld({ files: NOTES });
    let toolSignal: AbortSignal | undefined;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    world.registry.register(
      defineTool({
        name: "slow_tool",
        title: "Slow",
        description: "Takes forever.",
        inputSchema: { q: z.string() },
        outputSchema: {},
        annotations: { readOnlyHint: true },
        run: (_input, context) => {
          toolSignal = context.signal;
          started();
          return new Promise<never>(() => undefined); // never settles on its own
        },
      }),
    );
    world.ollama.script({ route: "chat", reply: call("slow_tool", { q: "x" }) });
    const stop = new AbortController();
    const pending = world.run("Do the slow thing", { signal: stop.signal, allowed: ["slow_tool"] });
    await running;
    stop.abort();
    const { result } = await pending;
    expect(result.endReason).toBe("stopped");
    expect(toolSignal?.aborted).toBe(true);
    expect(world.ollama.requestsTo("chat")).toHaveLength(1);
  });

  it("Stop during the model request closes it", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script({ route: "chat", stall: true });
    const stop = new AbortController();
    const pending = world.run("Anything", { signal: stop.signal });
    while (world.ollama.requestsTo("chat").length === 0) await new Promise((r) => setTimeout(r, 5));
    stop.abort();
    const { result } = await pending;
    expect(result.endReason).toBe("stopped");
    while (!world.ollama.requestsTo("chat")[0].closedEarly) await new Promise((r) => setTimeout(r, 5));
  });

  it("an Ollama that takes connections but never answers is reported after one wait: /api/show's, not again for the chat request", async () => {
    world = await makeLoopWorld({ files: NOTES, nativeTools: true });
    world.ollama.setDefault({ stall: true });
    world.model = new OllamaChatModel({ baseUrl: world.ollama.url, model: "llama3.1:8b", fetch: world.host.fetch, clock: world.host.clock, timeoutMs: 100, retry: FAST_RETRY });
    await expect(world.run("What is my plan?")).rejects.toThrow(/^Ollama did not answer within 1 s at http:\/\/127\.0\.0\.1:\d+\.$/);
    expect(world.ollama.requests.map((r) => r.route)).toEqual(["show"]);
  });

  it("the wall-clock cap ends a turn with a marked message", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script({ route: "chat", stall: true });
    const { result, tokens } = await world.run("Anything", { timeoutMs: 60 });
    expect(result.endReason).toBe("time-limit");
    expect(result.limit).toBe("stopped at the time limit (0.1 s)");
    expect(tokens).toBe("*(Stopped at the time limit of 0.1 s before the agent finished.)*");
  });

  it("keeps secrets out of the exchange log (/log)", async () => {
    const key = "AIzaSy-super-secret-gemini-key-123";
    world = await makeLoopWorld({ files: { "Keys.md": `My key is ${key}` } });
    world.ollama.script([
      { route: "chat", reply: call("read_note", { path: "Keys.md" }) },
      { route: "chat", reply: final(`The key is ${key}`) },
    ]);
    const { result } = await world.run("What is my key?", { secrets: [key] });
    const log = JSON.stringify(result.exchange);
    expect(log).not.toContain(key);
    expect(log).toContain("My key is ***");
    expect(JSON.stringify(world.logs)).not.toContain(key);
  });
});

describe("agent loop, native tool calls", () => {
  let world: LoopWorld;
  afterEach(async () => {
    await world?.close();
  });

  it("runs every call of a step, answers with tool messages carrying the call id, echoes provider data", async () => {
    world = await makeLoopWorld({ files: NOTES });
    const model = new ScriptedToolModel("test:native", [
      () => [
        { type: "text", text: "Let me look." },
        { type: "tool-call", call: { id: "c1", name: "read_note", arguments: { path: "Projects/Plan.md", vault_path: "/elsewhere" } } },
        { type: "tool-call", call: { id: "c2", name: "get_current_time", arguments: { timezone: "Mars/Olympus" } } },
        { type: "end", finishReason: "tool-calls", usage: { promptTokens: 100, completionTokens: 10 }, providerData: { parts: ["sig"] } },
      ],
      () => [{ type: "text", text: "Ship " }, { type: "text", text: "it." }, { type: "end", finishReason: "stop", usage: { promptTokens: 150, completionTokens: 3 } }],
    ]);
    world.model = model;
    const { result, tokens, events } = await world.run("What's the plan?");

    expect(result.protocol).toBe("native");
    expect(result.answer).toBe("Ship it.");
    expect(tokens).toBe("Ship it.");
    // The remark before the calls was held (it might have preceded a call written as text), so nothing is taken back.
    expect(events.some((e) => e.type === "retract")).toBe(false);
    expect(result.usage).toEqual({ promptTokens: 250, completionTokens: 13 });
    expect(result.steps.map((s) => [s.tool.name, s.outcome])).toEqual([
      ["read_note", "ok"],
      ["get_current_time", "error"],
    ]);
    expect(result.steps[0]).toMatchObject({ thought: "Let me look.", tool: { callId: "c1" }, usage: { promptTokens: 100, completionTokens: 10 } });
    expect(result.steps[1].result).toMatch(/^Unknown time zone: Mars\/Olympus/);

    const [first, second] = model.requests;
    expect(first.tools?.map((t) => t.name)).toEqual(expect.arrayContaining(["search_notes", "read_note", "list_notes", "write_note", "append_to_note", "get_current_time", "list_tools"]));
    expect(first.tools?.map((t) => t.name)).not.toContain("web_search"); // no Tavily key
    expect(JSON.stringify(first.tools)).not.toContain("vault_path");
    expect(second.messages.slice(-4, -1)).toEqual([
      { role: "assistant", content: "Let me look.", toolCalls: expect.any(Array), providerData: { parts: ["sig"] } },
      expect.objectContaining({ role: "tool", toolCallId: "c1", toolName: "read_note", isError: false, content: "# Plan\n\nShip the agent mode." }),
      expect.objectContaining({ role: "tool", toolCallId: "c2", toolName: "get_current_time", isError: true }),
    ]);
    expect(second.messages.at(-1)).toMatchObject({ role: "system", content: expect.stringMatching(/^Write your answer in English/) });
  });

  it("recovers a tool call written as JSON text, only for offered names", async () => {
    world = await makeLoopWorld({ files: NOTES });
    const model = new ScriptedToolModel("test:text-calls", [
      () => [{ type: "text", text: '{"name": "read_note", "arguments": {"path": "Projects/Plan.md"}}' }, { type: "end", finishReason: "stop" }],
      () => [{ type: "text", text: '{"name": "rm_rf", "arguments": {}}' }, { type: "end", finishReason: "stop" }],
    ]);
    world.model = model;
    const { result, tokens } = await world.run("Plan?");
    expect(result.steps).toHaveLength(1);
    expect(result.steps[0]).toMatchObject({ tool: { name: "read_note" }, outcome: "ok" });
    // A JSON answer naming no offered tool is an answer, shown once.
    expect(result.answer).toBe('{"name": "rm_rf", "arguments": {}}');
    expect(tokens).toBe(result.answer);
  });

  it.each([
    ["in a fence, then a remark", ["```json\n", READ_PLAN, "\n```\n", "I will read your plan note to see what it says."]],
    ["after a remark", ["Let me read your plan note first.\n", READ_PLAN]],
    ["before a remark", [READ_PLAN, "\nThis reads the note."]],
    ["in <tool_call> tags (Qwen, Hermes)", ["<tool_call>\n", READ_PLAN, "\n</tool_call>"]],
    ["after [TOOL_CALLS] (Mistral)", ["[TOOL_CALLS] [", READ_PLAN, "]"]],
  ])("recovers a tool call a small model wrote as text %s (loopback Ollama)", async (_form, tokens) => {
    world = await makeLoopWorld({ files: NOTES, nativeTools: true });
    world.ollama.script([{ route: "chat", tokens }, { route: "chat", reply: "Ship the agent mode." }]);
    const { result, tokens: shown } = await world.run("What is my plan?");
    expect(result.steps).toEqual([expect.objectContaining({ tool: expect.objectContaining({ name: "read_note", arguments: { path: "Projects/Plan.md" } }), outcome: "ok" })]);
    expect(result.answer).toBe("Ship the agent mode.");
    expect(shown).toBe("Ship the agent mode.");
  });

  it("runs every call of a list written as text (Mistral's parallel calls), one naming no offered tool failing as a native one would", async () => {
    world = await makeLoopWorld({ files: NOTES, nativeTools: true });
    const list = JSON.stringify([
      { name: "read_note", arguments: { path: "Projects/Plan.md" } },
      { name: "list_notes", arguments: { folder: "Projects" } },
      { name: "delete_note", arguments: { path: "Projects/Plan.md" } },
    ]);
    world.ollama.script([{ route: "chat", tokens: ["[TOOL_CALLS] ", list] }, { route: "chat", reply: "Ship the agent mode." }]);
    const before = await snapshotFiles(world.vault.root);
    const { result } = await world.run("What is my plan?");
    expect(result.steps.map((s) => [s.tool?.name, s.outcome])).toEqual([
      ["read_note", "ok"],
      ["list_notes", "ok"],
      ["delete_note", "error"],
    ]);
    expect(result.steps[2].result).toMatch(/^Unknown tool: delete_note/);
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
    expect(result.answer).toBe("Ship the agent mode.");
  });

  it.each([
    ["in a fence split over chunks", ["\n", "``", "`json\n", READ_PLAN, "\n```"]],
    ["in <tool_call> tags", ["<tool", "_call>\n", READ_PLAN, "\n</tool_call>"]],
    ["after <|python_tag|> (Llama 3.1)", ["<|python_tag|>", READ_PLAN]],
    ["in a fence after a remark", ["Sure.", "\n``", "`json", READ_PLAN, "```"]],
    ["after a remark", ["Let me read ", "your plan note first.\n", READ_PLAN]],
  ])("never streams a tool call written as text %s: a host cannot take back what it printed", async (_form, tokens) => {
    world = await makeLoopWorld({ files: NOTES, nativeTools: true });
    world.ollama.script([{ route: "chat", tokens }, { route: "chat", reply: "Ship the agent mode." }]);
    const { result, events } = await world.run("What is my plan?");
    expect(result.steps).toEqual([expect.objectContaining({ tool: expect.objectContaining({ name: "read_note" }), outcome: "ok" })]);
    expect(events.some((e) => e.type === "retract")).toBe(false);
    expect(events.map((e) => (e.type === "token" ? e.text : "")).join("")).toBe("Ship the agent mode.");
  });

  it.each([
    ["code in another language early on", ["Here is the script:\n", "```python\n", "print('hi')\n", "```\n"]],
    ["braces in its prose", ["Write ", "{name} where ", "the title goes, ", "then save.\n"]],
  ])("streams an answer with %s: only a fence named as JSON (or not named) or an object with a key may start a call", async (_form, start) => {
    world = await makeLoopWorld({ files: NOTES, nativeTools: true });
    const words = Array.from({ length: 60 }, (_, i) => `word${i} `);
    world.ollama.script([{ route: "chat", tokens: [...start, ...words] }]);
    const { result, events } = await world.run("What is my plan?");
    const shown = events.filter((e) => e.type === "token");
    // Shown as it came, not held for the whole reply: held at most while it could be a remark, then a token event per chunk.
    expect(shown.length).toBeGreaterThan(30);
    expect(shown.map((e) => (e.type === "token" ? e.text : "")).join("")).toBe(result.answer);
  });

  it("still streams an answer once more text than a remark came with no call in it", async () => {
    world = await makeLoopWorld({ files: NOTES, nativeTools: true });
    const words = Array.from({ length: 60 }, (_, i) => `word${i} `);
    world.ollama.script([{ route: "chat", tokens: words }]);
    const { result, events } = await world.run("What is my plan?");
    const shown = events.filter((e) => e.type === "token");
    // Held while it could still be a remark before a call (200 characters and a marker's length), then streamed.
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.map((e) => (e.type === "token" ? e.text : "")).join("")).toBe(result.answer);
    expect(result.answer).toBe(words.join(""));
  });

  it.each([
    ["alone", [final("Ship the agent mode.")]],
    ["in a fence", ["```json\n", final("Ship the agent mode."), "\n```"]],
  ])("takes the response of a final answer a model wrote as the JSON action object (%s) in a native turn", async (_form, tokens) => {
    world = await makeLoopWorld({ files: NOTES, nativeTools: true });
    world.ollama.script({ route: "chat", tokens });
    const { result, tokens: shown } = await world.run("What is my plan?");
    expect(result).toMatchObject({ protocol: "native", answer: "Ship the agent mode." });
    expect(shown).toBe("Ship the agent mode.");
  });

  it("an answer that only shows a call among its text stays the answer", async () => {
    world = await makeLoopWorld({ files: NOTES, nativeTools: true });
    const answer = `Krypton's tools are called with JSON. For example, to read your plan you could send ${READ_PLAN} to the read_note tool; it returns the note's markdown, which you can then quote, summarize or link from another note as you like.`;
    world.ollama.script({ route: "chat", reply: answer });
    const { result } = await world.run("How are tools called?");
    expect(result.steps).toEqual([]);
    expect(result.answer).toBe(answer);
  });

  it("falls back to the JSON protocol on 'does not support tools', cached per model", async () => {
    world = await makeLoopWorld({ files: NOTES });
    const ollama = world.model!;
    const noTools = new Set<string>();
    let nativeTries = 0;
    world.model = {
      id: ollama.id,
      capabilities: () => Promise.resolve({ tools: true }),
      stream: (r) => ollama.stream(r),
      complete: (r) => ollama.complete(r),
      turn(request) {
        if (request.tools?.length && request.toolChoice !== "none") {
          nativeTries++;
          throw new ProviderError("server", `registry.ollama.ai/library/${ollama.id} does not support tools`, 400);
        }
        return ollama.turn(request);
      },
    };
    world.ollama.script([
      { route: "chat", reply: call("read_note", { path: "Projects/Plan.md" }) },
      { route: "chat", reply: final("Ship it.") },
      { route: "chat", reply: final("Again.") },
    ]);
    const first = await world.run("Plan?", { noNativeTools: noTools });
    expect(first.result).toMatchObject({ protocol: "json", answer: "Ship it." });
    expect(first.events.some((e) => e.type === "notice" && e.code === "agent-json-fallback")).toBe(true);
    const second = await world.run("Plan?", { noNativeTools: noTools });
    expect(second.result).toMatchObject({ protocol: "json", answer: "Again." });
    expect(nativeTries).toBe(1);
  });

  it("retries a malformed function call once, then falls back to JSON", async () => {
    world = await makeLoopWorld({ files: NOTES });
    const ollama = world.model!;
    const native = new ScriptedToolModel("test:malformed", [
      () => [{ type: "end", finishReason: "malformed-tool-call" }],
      () => [{ type: "end", finishReason: "malformed-tool-call" }],
    ]);
    world.model = { ...native, id: native.id, capabilities: () => native.capabilities(), stream: (r) => ollama.stream(r), complete: (r) => ollama.complete(r), turn: (r) => (r.tools ? native.turn(r) : ollama.turn(r)) };
    world.ollama.script({ route: "chat", reply: final("Fallback answer.") });
    const { result } = await world.run("Plan?");
    expect(native.requests).toHaveLength(2);
    expect(result).toMatchObject({ protocol: "json", answer: "Fallback answer." });
  });
});
