/**
 * `krypton ask/chat --agent` end to end: the bundled CLI in a real process, a temp vault, the loopback
 * Ollama server scripted with JSON actions (the path every Ollama model can take).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { useCliTestBed } from "../support/cli-test-bed";
import { startSilentServer, type SilentServer } from "../support/servers/silent-server";
import { runCli } from "./cli-harness";
import { ConversationStore } from "../../src/core/chat/conversation-store";
import { silentLogger } from "../../src/core/ports/logger";
import { nodeClock } from "../../src/node/node-clock";
import { FsDataDir, dataDirOf } from "../../src/node/fs-data-dir";

const NOTES: Record<string, string> = {
  "Projects/Plan.md": "# Plan\n\nShip agent mode by Friday.\n",
  "Cooking/Bread.md": "# Bread\n\nFlour, water, salt.\n",
};
const call = (tool: string, args: Record<string, unknown>) => JSON.stringify({ action: "call_tool", tool, arguments: args });
const final = (response: string) => JSON.stringify({ action: "final", response });

interface AgentJson {
  answer: string;
  steps?: { tool: { name: string }; outcome: string; result: string }[];
  error?: { message: string };
  conversationId: string | null;
}

describe("krypton ask/chat --agent", () => {
  const bed = useCliTestBed({ notes: NOTES });
  beforeEach(() => {
    // A model without native tools: the JSON action protocol (the path every Ollama model can take).
    bed.ollama.modelInfo["llama3.1:8b"] = { capabilities: ["completion"] };
    bed.ollama.modelInfo["qwen2.5:7b"] = { capabilities: ["completion"] };
  });

  it("runs the loop end to end: tools, streamed answer, steps on stderr and in --json, saved with the conversation", async () => {
    bed.ollama.script([
      { route: "chat", reply: call("search_notes", { query: "plan deadline" }) },
      { route: "chat", reply: call("read_note", { path: "Projects/Plan.md" }) },
      { route: "chat", reply: final("Agent mode ships by Friday [[Projects/Plan]].") },
    ]);
    const text = await runCli(["ask", bed.vault.root, "When does agent mode ship?", "--agent"], { env: bed.env });
    expect(text.code).toBe(0);
    expect(text.stdout.trim()).toBe("Agent mode ships by Friday [[Projects/Plan]].");
    expect(text.stderr).toMatch(/↳ \[1\] search_notes \{"query":"plan deadline"\} → ok/);
    expect(text.stderr).toMatch(/↳ \[2\] read_note \{"path":"Projects\/Plan.md"\} → ok/);

    bed.ollama.reset();
    bed.ollama.script([
      { route: "chat", reply: call("read_note", { path: "Projects/Plan.md" }) },
      { route: "chat", reply: final("Friday.") },
    ]);
    const r = await runCli(["ask", bed.vault.root, "When?", "--agent", "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as AgentJson;
    expect(json.answer).toBe("Friday.");
    expect(json.steps).toEqual([expect.objectContaining({ tool: expect.objectContaining({ name: "read_note" }), outcome: "ok", result: expect.stringContaining("Ship agent mode by Friday.") })]);
    // The stored answer keeps its steps (the optional `steps` field).
    const stored = (await new ConversationStore(new FsDataDir(dataDirOf(bed.vault.root)), nodeClock, silentLogger).get(json.conversationId as string))!;
    expect(stored.messages.at(-1)).toMatchObject({ role: "assistant", steps: [expect.objectContaining({ tool: expect.objectContaining({ name: "read_note" }) })] });
  });

  it("a query's vector fails during the run: the answer says notes were matched by keywords only (stderr; --json: notices)", async () => {
    expect((await runCli(["index", bed.vault.root], { env: bed.env })).code).toBe(0);
    // The embedder answered at start-up and the notes have vectors; from now on it fails every query.
    bed.ollama.script({ route: "embed", status: 500, times: Infinity });
    const failed = /^Semantic search failed \(the embedding server failed .*\): notes were matched by keywords only\.$/;
    const script = () =>
      bed.ollama.script([
        { route: "chat", reply: call("search_notes", { query: "bread" }) },
        { route: "chat", reply: final("Flour, water, salt.") },
      ]);

    script();
    const text = await runCli(["ask", bed.vault.root, "What goes into my bread?", "--agent"], { env: bed.env });
    expect(text.code).toBe(0);
    expect(text.stdout.trim()).toBe("Flour, water, salt.");
    const warnings = text.stderr.split("\n").filter((line) => line.startsWith("krypton: warning: "));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].slice("krypton: warning: ".length)).toMatch(failed);

    script();
    const r = await runCli(["ask", bed.vault.root, "What goes into my bread?", "--agent", "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as AgentJson & { notices?: string[] };
    expect(json.answer).toBe("Flour, water, salt.");
    expect(json.notices).toEqual([expect.stringMatching(failed)]);
    expect(r.stderr).toBe("");
  });

  it("native tool calls end to end (a model whose /api/show lists tools)", async () => {
    delete bed.ollama.modelInfo["llama3.1:8b"];
    bed.ollama.script([
      { route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Projects/Plan.md" } }] } },
      { route: "chat", reply: "By Friday." },
    ]);
    const r = await runCli(["ask", bed.vault.root, "When does agent mode ship?", "--agent", "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as AgentJson & { usage?: unknown };
    expect(json.answer).toBe("By Friday.");
    expect(json.steps).toEqual([expect.objectContaining({ tool: expect.objectContaining({ name: "read_note" }), outcome: "ok" })]);
    expect(json.usage).toEqual({ promptTokens: expect.any(Number), completionTokens: expect.any(Number) });
    const first = bed.ollama.requestsTo("chat")[0].body as { tools?: unknown[]; options?: { num_ctx?: number } };
    expect(first.tools!.length).toBeGreaterThan(5);
    expect(first.options?.num_ctx).toBeGreaterThan(0);
  });

  it("a remark before a tool call written as text stays off stdout: only the answer is printed there", async () => {
    delete bed.ollama.modelInfo["llama3.1:8b"];
    const readPlan = JSON.stringify({ name: "read_note", arguments: { path: "Projects/Plan.md" } });
    bed.ollama.script([
      { route: "chat", tokens: ["Sure.", "\n```json", readPlan, "```"] },
      { route: "chat", reply: "By Friday." },
    ]);
    const r = await runCli(["ask", bed.vault.root, "When does agent mode ship?", "--agent"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("By Friday.");
    expect(r.stderr).toMatch(/↳ \[1\] read_note \{"path":"Projects\/Plan.md"\} → ok/);
  });

  it("refuses writes without --yes when not on a terminal, and the vault is unchanged; --yes allows them", async () => {
    bed.ollama.script([
      { route: "chat", reply: call("append_to_note", { path: "Projects/Plan.md", content: "- README" }) },
      { route: "chat", reply: final("I could not change the note.") },
    ]);
    const refused = await runCli(["ask", bed.vault.root, "Add README to my plan", "--agent", "--json"], { env: bed.env });
    expect(refused.code).toBe(0);
    expect((JSON.parse(refused.stdout) as AgentJson).steps![0]).toMatchObject({ tool: { name: "append_to_note" }, outcome: "denied" });
    expect(await bed.vault.read("Projects/Plan.md")).toBe(NOTES["Projects/Plan.md"]);
    // The step line says it in the word the chat view and the README's Troubleshooting use.
    bed.ollama.reset();
    bed.ollama.script([
      { route: "chat", reply: call("append_to_note", { path: "Projects/Plan.md", content: "- README" }) },
      { route: "chat", reply: final("I could not change the note.") },
    ]);
    const line = await runCli(["ask", bed.vault.root, "Add README to my plan", "--agent"], { env: bed.env });
    expect(line.stderr).toMatch(/↳ \[1\] append_to_note \{[^\n]*\} → declined: append_to_note changes the vault and needs the user's approval, which cannot be asked here\./);

    bed.ollama.reset();
    bed.ollama.script([
      { route: "chat", reply: call("append_to_note", { path: "Projects/Plan.md", content: "- README" }) },
      { route: "chat", reply: final("Added.") },
    ]);
    const allowed = await runCli(["ask", bed.vault.root, "Add README to my plan", "--agent", "--yes"], { env: bed.env });
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).toContain("Allowed by --yes: Append 1 line to Projects/Plan.md");
    expect(await bed.vault.read("Projects/Plan.md")).toBe("# Plan\n\nShip agent mode by Friday.\n- README\n");
  });

  it("krypton chat --agent: /tools, /config, /steps and /log (secrets redacted)", async () => {
    const key = "tvly-SECRET-never-shown-0123";
    bed.ollama.script([
      { route: "chat", reply: call("list_notes", { folder: "Projects" }) },
      { route: "chat", reply: final("You have one project note.") },
    ]);
    const r = await runCli(["chat", bed.vault.root, "--agent"], {
      env: { ...bed.env, TAVILY_API_KEY: key },
      input: "How many project notes?\n/steps\n/log\n/tools\n/config\n",
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("You have one project note.");
    expect(r.stdout).toMatch(/Step 1: list_notes \{"folder":"Projects"\} \(ok, \d+ ms\)\n {2}- Projects\/Plan\.md/);
    expect(r.stdout).toContain("── request 1 ──");
    expect(r.stdout).toMatch(/\[system\] Write your answer in English/);
    expect(r.stdout).toMatch(/Built-in:\n {2}search_notes — /);
    expect(r.stdout).toContain("append_to_note (asks first)");
    expect(r.stdout).toContain("web_search"); // a Tavily key is set
    expect(r.stdout).toMatch(/Model: ollama:llama3\.1:8b/);
    expect(r.stdout).toMatch(/Limits: 8 steps, 180 s per turn/);
    expect(r.stdout + r.stderr).not.toContain(key);
  });

  it("krypton chat --agent /log: each request as sent, the line saying what fitting the window cut, the reply", async () => {
    // A note of ~12,000 characters read into a 4,096-token window: the second request shortens the tool result.
    await bed.vault.write("Projects/Long.md", `# Long\n\n${"word ".repeat(2_400)}`);
    bed.ollama.script([
      { route: "chat", reply: call("read_note", { path: "Projects/Long.md" }) },
      { route: "chat", reply: final("It is long.") },
    ]);
    const r = await runCli(["chat", bed.vault.root, "--agent"], { env: { ...bed.env, KRYPTON_OLLAMA_MAX_CONTEXT: "4096" }, input: "/log\nWhat is in Long?\n/log\n" });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^No agent exchange yet in this conversation\.\n/);
    const log = r.stdout.slice(r.stdout.indexOf("── request 1 ──"));
    const blocks = log.split(/^(?=── )/m);
    expect(blocks.map((b) => b.split("\n")[0])).toEqual(["── request 1 ──", "── reply 1 ──", "── request 2 ──", "── reply 2 ──"]);
    expect(blocks[0]).toMatch(/^── request 1 ──\n\[system\] /);
    expect(blocks[0]).toContain("\n[user] What is in Long?\n");
    expect(blocks[1]).toBe(`── reply 1 ──\n${call("read_note", { path: "Projects/Long.md" })}\n`);
    expect(blocks[2]).toMatch(/^── request 2 ──\n\(To fit llama3\.1:8b's context window \(4,096 tokens\), this request shortened 1 tool result\.\)\n\[system\] /);
    expect(blocks[2]).toMatch(/\n\[user\] Result of read_note:\n# Long\n\nword word [^\n]*\n\[… 6,087 of 12,000 characters cut here by Krypton/);
    expect(blocks[3]).toBe(`── reply 2 ──\n${final("It is long.")}\n`);
  });

  it("--preset: its persona, its provider/model and only its tools", async () => {
    bed.ollama.models = ["llama3.1:8b", "nomic-embed-text:latest", "qwen2.5:7b"];
    await bed.vault.write(
      ".obsidian/plugins/krypton/data.json",
      JSON.stringify({ agentPresets: [{ name: "Pirate", persona: "You are a pirate librarian.", model: "ollama/qwen2.5:7b", tools: ["read_note"] }] }),
    );
    bed.ollama.script([
      { route: "chat", reply: call("list_notes", {}) },
      { route: "chat", reply: final("Arr, only read_note.") },
    ]);
    const r = await runCli(["ask", bed.vault.root, "What notes do I have?", "--agent", "--preset", "Pirate", "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as AgentJson;
    expect(json.steps![0].result).toMatch(/^Unknown tool: list_notes\. Available tools: read_note$/);
    const chats = bed.ollama.requestsTo("chat");
    expect(chats.map((c) => (c.body as { model: string }).model)).toEqual(["qwen2.5:7b", "qwen2.5:7b"]);
    const system = (chats[0].body as { messages: { content: string }[] }).messages[0].content;
    expect(system).toMatch(/^You are a pirate librarian\./);
    expect(system).toContain("- read_note:");
    expect(system).not.toContain("- list_notes:");

    const unknown = await runCli(["ask", bed.vault.root, "x", "--agent", "--preset", "Nobody"], { env: bed.env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no agent preset named "Nobody" \(saved presets: "Pirate"\)/);
  });

  it("an answer a limit cut short is printed but exits 1 (as `flow run`), with the limit on stderr and in --json", async () => {
    // The same call forever: the step limit (2) ends the loop, and one call without tools writes the answer.
    const loop = () => bed.ollama.script({ route: "chat", reply: call("read_note", { path: "Projects/Plan.md" }), times: Infinity });
    loop();
    const text = await runCli(["ask", bed.vault.root, "When?", "--agent", "--max-steps", "2"], { env: bed.env });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("*(Stopped at the step limit: 2 steps.)*");
    expect(text.stderr).toContain("stopped at the step limit (2 steps)");

    bed.ollama.reset();
    loop();
    const r = await runCli(["ask", bed.vault.root, "When?", "--agent", "--max-steps", "2", "--json"], { env: bed.env });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ limit: "stopped at the step limit (2 steps)" });

    // The loop guard: the same call a third time is blocked, three blocks end the answer.
    bed.ollama.reset();
    loop();
    const guarded = await runCli(["ask", bed.vault.root, "When?", "--agent", "--json"], { env: bed.env });
    expect(guarded.code).toBe(1);
    expect(JSON.parse(guarded.stdout)).toMatchObject({ limit: "stopped by the loop guard (3 repeated tool calls blocked)" });
  });

  it("krypton chat --agent: each answer a limit cut short says so on stderr and at the end of /log, and piped input exits 1", async () => {
    bed.ollama.script({ route: "chat", reply: call("read_note", { path: "Projects/Plan.md" }), times: Infinity });
    const r = await runCli(["chat", bed.vault.root, "--agent", "--max-steps", "2"], { env: bed.env, input: "When?\n/log\n" });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("*(Stopped at the step limit: 2 steps.)*");
    expect(r.stderr).toContain("stopped at the step limit (2 steps)");
    expect(r.stdout.trimEnd()).toMatch(/── stopped at the step limit \(2 steps\) ──$/);
  });

  it("--json has `steps` (an empty list) when no tool was called", async () => {
    bed.ollama.script([{ route: "chat", reply: final("Hello.") }]);
    const r = await runCli(["ask", bed.vault.root, "Say hello", "--agent", "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as AgentJson;
    expect(json.answer).toBe("Hello.");
    expect(json.steps).toEqual([]);
    expect(json).not.toHaveProperty("limit");
  });

  it("a broken model reply ends with a clear error and exit 1, nothing written", async () => {
    bed.ollama.script({ route: "chat", reply: '{"action":"call_tool"}', times: 3 });
    const r = await runCli(["ask", bed.vault.root, "Do something", "--agent"], { env: bed.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/did not return a valid action .* even after 2 corrections/);
    expect(await bed.vault.read("Projects/Plan.md")).toBe(NOTES["Projects/Plan.md"]);
  });

  describe("a preset whose tools never search", () => {
    // Reads and writes notes: no tool of it needs the index (ToolDefinition.needsIndex), as a flow's tasks.
    const presets = (tools: string[]) => JSON.stringify({ agentsEnabled: false, agentPresets: [{ name: "Scribe", persona: "", model: "", tools }] });
    /** A Gemini embedder that counts connections; the agent's model stays the loopback Ollama. */
    const geminiEmbedder = (baseUrl: string) => ({ ...bed.env, KRYPTON_EMBEDDING_PROVIDER: "gemini", KRYPTON_EMBEDDING_MODEL: "gemini-embedding-001", KRYPTON_GEMINI_API_KEY: "test-key", KRYPTON_GEMINI_BASE_URL: baseUrl });
    const copyPlan = () =>
      bed.ollama.script([
        { route: "chat", reply: call("read_note", { path: "Projects/Plan.md" }) },
        { route: "chat", reply: call("write_note", { title: "Plan copy", content: "Ship agent mode by Friday.", folder: "Copies" }) },
        { route: "chat", reply: final("Copied.") },
      ]);
    let embedder: SilentServer;
    beforeEach(async () => {
      embedder = await startSilentServer();
    });
    afterEach(() => embedder.close());

    it.each([
      ["ask", ["ask", "Copy my plan", "--agent", "--preset", "Scribe", "--yes"], undefined],
      ["chat", ["chat", "--agent", "--preset", "Scribe", "--yes"], "Copy my plan\n/quit\n"],
    ])("%s --agent: opens no index and contacts no embedder; its tools still read and write the notes", async (_name, [command, ...rest], input) => {
      await bed.vault.write(".obsidian/plugins/krypton/data.json", presets(["read_note", "write_note", "list_notes"]));
      copyPlan();
      const r = await runCli([command, bed.vault.root, ...rest], { env: geminiEmbedder(embedder.url), ...(input ? { input } : {}) });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Copied.");
      expect(readdirSync(join(bed.vault.root, "Copies"))).toEqual(["plan-copy.md"]);
      // The embedding server was never connected to (not even the start-up check), and no index was made:
      // .krypton holds the saved conversation only.
      expect(embedder.connections()).toBe(0);
      expect(readdirSync(join(bed.vault.root, ".krypton"))).toEqual(["chat"]);
    });

    it("a preset with search_notes still checks the embedder first and opens the index", async () => {
      await bed.vault.write(".obsidian/plugins/krypton/data.json", presets(["read_note", "search_notes"]));
      bed.ollama.script([
        { route: "chat", reply: call("search_notes", { query: "plan" }) },
        { route: "chat", reply: final("Projects/Plan.md") },
      ]);
      // Nothing listens there: the start-up check says so, and the index is opened by keywords.
      const r = await runCli(["ask", bed.vault.root, "Find my plan", "--agent", "--preset", "Scribe"], { env: geminiEmbedder("http://127.0.0.1:9") });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain("Gemini is not reachable at http://127.0.0.1:9");
      expect(readdirSync(join(bed.vault.root, ".krypton")).length).toBeGreaterThan(1);
      const searched = (bed.ollama.requestsTo("chat")[1].body as { messages: { role: string; content: string }[] }).messages.at(-2)!;
      expect(searched.content).toContain("Projects/Plan.md");
    });
  });
});
