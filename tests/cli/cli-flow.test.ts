/**
 * `krypton flow validate|graph|run` as a real process: exit codes per the help text, progress on stderr,
 * the result on stdout, the trace file, Ctrl+C; models served by the loopback Ollama server.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useCliTestBed } from "../support/cli-test-bed";
import { startSilentServer, type SilentServer } from "../support/servers/silent-server";
import { tempDirForFile } from "../support/temp-dirs";
import { REPO_ROOT, runCli } from "./cli-harness";

const WORKFLOWS = join(REPO_ROOT, "examples", "demo-vault", "Workflows");
const retryLoop = join(WORKFLOWS, "Retry loop.md");

describe("krypton flow", () => {
  const bed = useCliTestBed({ notes: { ".obsidian/app.json": "{}", "Notes/A.md": "# A" } });

  it("validate: a shipped example is valid (exit 0); models are checked against the running Ollama", async () => {
    const r = await runCli(["flow", "validate", retryLoop], { env: bed.env });
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^valid: retry-loop \(5 agents, 6 transitions\)/);
    expect(r.code).toBe(0);
    expect(bed.ollama.requestsTo("tags")).toHaveLength(1);
  });

  it("validate: counts read as words (1 agent, 1 warning), never \"1 agents\" or \"warning(s)\"", async () => {
    // An agent no transition reaches: one warning.
    const flow = { id: "one", agents: [{ name: "a", type: "transform", params: { trim: true } }, { name: "b", type: "transform", params: { trim: true } }], transitions: [{ from: "a", to: "__finish__" }] };
    await bed.vault.write("one.json", JSON.stringify(flow));
    const r = await runCli(["flow", "validate", join(bed.vault.root, "one.json")], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("valid: one (2 agents, 1 transition), 1 warning\n");
    await bed.vault.write("single.json", JSON.stringify({ id: "single", agents: [{ name: "a", type: "transform", params: { trim: true } }] }));
    expect((await runCli(["flow", "validate", join(bed.vault.root, "single.json")], { env: bed.env })).stdout).toBe("valid: single (1 agent, 0 transitions)\n");
  });

  it("validate: errors with JSON pointers, exit 2; --json for scripts", async () => {
    await bed.vault.write("bad.json", JSON.stringify({ id: "bad", defaultModel: "ollama/qwen3:4b", agents: [{ name: "a", type: "task", params: { task: "t" } }], transitions: [{ from: "a", to: "b" }] }));
    const r = await runCli(["flow", "validate", join(bed.vault.root, "bad.json")], { env: bed.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('krypton: /defaultModel: Ollama model "qwen3:4b" is not installed: run `ollama pull qwen3:4b`');
    expect(r.stderr).toContain('krypton: /transitions/0/to: unknown agent "b"');
    const j = await runCli(["flow", "validate", join(bed.vault.root, "bad.json"), "--json"], { env: bed.env });
    expect(j.code).toBe(2);
    expect(JSON.parse(j.stdout)).toMatchObject({ valid: false, errors: expect.arrayContaining([{ pointer: "/transitions/0/to", message: 'unknown agent "b"' }]) });
  });

  it("validate: a note without a flow block, and broken JSON, say so (exit 2)", async () => {
    await bed.vault.write("Notes/plain.md", "# Just a note");
    await bed.vault.write("Notes/broken.md", "```krypton-flow\n{ \"id\": \n```");
    const plain = await runCli(["flow", "validate", join(bed.vault.root, "Notes/plain.md")]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain("plain.md has no ```krypton-flow block");
    const broken = await runCli(["flow", "validate", join(bed.vault.root, "Notes/broken.md")]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/broken.md: the flow is not valid JSON/);
  });

  it("validate and run: a note with two flow blocks is refused with both places (exit 2), never the first run silently", async () => {
    const block = (id: string) => "```krypton-flow\n" + JSON.stringify({ id, agents: [{ name: "a", type: "transform", params: { trim: true } }] }) + "\n```\n";
    await bed.vault.write("Notes/two.md", "# Two\n\n" + block("first") + "\nText.\n\n" + block("second"));
    const refused = "krypton: two.md has 2 ```krypton-flow blocks (at lines 3 and 9), and a workflow note holds one: move each other flow into a note of its own";
    const validate = await runCli(["flow", "validate", join(bed.vault.root, "Notes/two.md")], { env: bed.env });
    expect(validate.code).toBe(2);
    expect(validate.stderr).toContain(refused);
    expect(validate.stdout).toBe("");
    const run = await runCli(["flow", "run", join(bed.vault.root, "Notes/two.md"), "--input", " x "], { env: bed.env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(refused);
    expect(run.stdout).toBe("");
  });

  it("validate: a flow with gemini/… models and no Gemini key is valid with a warning naming the variable; with the key, none", async () => {
    const flow = { id: "cloud", defaultModel: "ollama/llama3.1:8b", agents: [{ name: "a", type: "task", model: "gemini/gemini-2.5-flash", params: { task: "t" } }] };
    await bed.vault.write("cloud.json", JSON.stringify(flow));
    const file = join(bed.vault.root, "cloud.json");
    const warning = "/agents/0/model: no Gemini API key is configured, so agents using gemini/gemini-2.5-flash cannot run until you set GEMINI_API_KEY";
    const r = await runCli(["flow", "validate", file], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("valid: cloud (1 agent, 0 transitions), 1 warning\n");
    expect(r.stderr).toContain(warning);
    const j = await runCli(["flow", "validate", file, "--json"], { env: bed.env });
    expect(JSON.parse(j.stdout)).toMatchObject({ valid: true, warnings: [{ pointer: "/agents/0/model", message: warning.slice("/agents/0/model: ".length) }] });
    const keyed = await runCli(["flow", "validate", file], { env: { ...bed.env, GEMINI_API_KEY: "test-key" } });
    expect(keyed.code).toBe(0);
    expect(keyed.stdout).toBe("valid: cloud (1 agent, 0 transitions)\n");
    expect(keyed.stderr).toBe("");
    // At run time the step fails saying how this host takes a key, as the warning did.
    const run = await runCli(["flow", "run", file, "--input", "x"], { env: bed.env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("cannot use gemini/gemini-2.5-flash: no Gemini API key is set (set GEMINI_API_KEY)");
  });

  it("graph: prints a Mermaid flowchart without contacting any server", async () => {
    const r = await runCli(["flow", "graph", retryLoop]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^flowchart TD\n/);
    expect(r.stdout).toContain('a1{"verify (verify)"}');
    expect(r.stdout).toContain('a1 -->|"success = true"| a4');
  });

  it("run: progress on stderr, the result on stdout, the trace file; the vault is found from the file", async () => {
    await bed.vault.write("Workflows/Pipeline.md", readFileSync(join(WORKFLOWS, "Sequential pipeline.md"), "utf8"));
    bed.ollama.setDefault({ reply: (req) => (req.userText.includes("List every fact") ? "facts" : req.userText.includes("Group these") ? "groups" : "Final summary.") });
    const r = await runCli(["flow", "run", join(bed.vault.root, "Workflows/Pipeline.md"), "--input", "my notes", "--trace", join(bed.vault.root, "trace.md")], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Final summary.\n");
    expect(r.stderr).toContain("→ extract_facts (task)…");
    expect(r.stderr).toContain("finished: extract_facts → organise → summarise");
    const trace = await bed.vault.read("trace.md");
    expect(trace).toContain("**Path:** extract_facts → organise → summarise");
    expect(trace).toContain("```text\nmy notes\n```");
  });

  it("run --trace over an existing file (a note of the user's) is refused before the run: the file stays byte for byte", async () => {
    await bed.vault.write("Workflows/Pipeline.md", readFileSync(join(WORKFLOWS, "Sequential pipeline.md"), "utf8"));
    await bed.vault.write("Notes/Plan.md", "# Plan\n\nmine\n");
    bed.ollama.setDefault({ reply: "answer" });
    const r = await runCli(["flow", "run", join(bed.vault.root, "Workflows/Pipeline.md"), "--input", "x", "--trace", join(bed.vault.root, "Notes/Plan.md")], { env: bed.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("that file already exists, and Krypton never overwrites a file: give a new name");
    expect(await bed.vault.read("Notes/Plan.md")).toBe("# Plan\n\nmine\n");
    expect(bed.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("run --json, with the input from stdin", async () => {
    bed.ollama.setDefault({ reply: "out" });
    const r = await runCli(["flow", "run", join(WORKFLOWS, "Sequential pipeline.md"), "--json"], { env: bed.env, input: "piped input" });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ status: "finished", result: "out", message: "Finished.", path: ["extract_facts", "organise", "summarise"] });
    expect((bed.ollama.requestsTo("chat")[0].body as { messages: { content: string }[] }).messages[1].content).toContain("piped input");
  });

  it("run: a step limit prints the last output and exits 1", async () => {
    bed.ollama.setDefault({ reply: (req) => (req.userText.includes("Check the text") ? '{"success": false, "feedback": "no"}' : "questions") });
    const r = await runCli(["flow", "run", retryLoop, "--input", "tides"], { env: bed.env });
    expect(r.code).toBe(1);
    // The last fix was checked too: the result is it with the problems found, not an unchecked version.
    expect(r.stdout).toBe("Questions:\nquestions\n\nProblems found:\nno\n");
    expect(r.stderr).toMatch(/step limit: Stopped at the step limit \("fix"'s 2 visits\)/);
  });

  it("run: a step that fails prints the failure, never the step before's output as the result; --json agrees", async () => {
    const failing = () =>
      bed.ollama.script([
        { route: "chat", reply: "facts" },
        { route: "chat", status: 400, error: "the organiser broke", times: Infinity },
      ]);
    failing();
    const r = await runCli(["flow", "run", join(WORKFLOWS, "Sequential pipeline.md"), "--input", "my notes", "--trace", join(bed.vault.root, "trace.md")], { env: bed.env });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/krypton: failed: Agent "organise" failed: .*the organiser broke/);
    expect(r.stderr).not.toContain("finished");
    const trace = await bed.vault.read("trace.md");
    expect(trace).toContain("```text\nfacts\n```"); // the trace keeps every step's output
    expect(trace).toMatch(/## Result\n_None: the run failed\._\n$/);

    bed.ollama.reset();
    failing();
    const j = await runCli(["flow", "run", join(WORKFLOWS, "Sequential pipeline.md"), "--input", "my notes", "--json"], { env: bed.env });
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toEqual({ status: "failed", result: "", message: expect.stringMatching(/^Agent "organise" failed: .*the organiser broke/), path: ["extract_facts", "organise"] });
    expect(j.stderr).toMatch(/krypton: failed: Agent "organise" failed: /);
  });

  it("run: an unreachable model fails with the provider's message (exit 1)", async () => {
    const r = await runCli(["flow", "run", retryLoop, "--input", "x"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Agent "generate" failed: .*(not reachable|unreachable|127\.0\.0\.1:9)/i);
  });

  it("run: Ctrl+C stops within the running step, exit 130", async () => {
    bed.ollama.setDefault({ reply: "a slow answer with a great many words in it", tokenDelayMs: 300 });
    const r = await runCli(["flow", "run", retryLoop, "--input", "x"], {
      env: bed.env,
      onSpawn: (child) => {
        child.stdin.end();
        child.stderr.on("data", (d: Buffer) => {
          if (d.toString().includes("→ generate")) setTimeout(() => child.kill("SIGINT"), 200);
        });
      },
    });
    expect(r.code).toBe(130);
    expect(bed.ollama.requestsTo("chat")).toHaveLength(1);
  });

  describe("a flow whose steps search the notes", () => {
    // Two steps search: a remark about the search is said once per run, not once per search.
    const SEARCHING_FLOW = {
      id: "bread-research",
      defaultModel: "ollama/llama3.1:8b",
      tools: ["search_notes"],
      agents: [
        { name: "find", type: "task", params: { task: "Find my notes about {{input}}", toolNames: ["search_notes"] } },
        { name: "again", type: "task", params: { task: "Find more notes about {{input}}", toolNames: ["search_notes"] } },
      ],
      transitions: [{ from: "find", to: "again" }],
    };
    const script = () => {
      bed.ollama.script([
        { route: "chat", reply: "", extra: { toolCalls: [{ name: "search_notes", arguments: { query: "bread" } }] } },
        { route: "chat", reply: "Bread.md" },
        { route: "chat", reply: "", extra: { toolCalls: [{ name: "search_notes", arguments: { query: "flour" } }] } },
        { route: "chat", reply: "Bread.md again" },
      ]);
    };
    const flowNote = () => join(bed.vault.root, "Workflows/Research.md");
    /** What the model got back from each search_notes call. */
    const toolResults = () =>
      bed.ollama
        .requestsTo("chat")
        .flatMap((r) => (r.body as { messages: { role: string; content: string }[] }).messages.filter((m) => m.role === "tool").map((m) => m.content));
    beforeEach(async () => {
      await bed.vault.write("Cooking/Bread.md", "# Bread\n\nFlour, water, salt.\n");
      await bed.vault.write("Workflows/Research.md", "```krypton-flow\n" + JSON.stringify(SEARCHING_FLOW, null, 2) + "\n```\n");
    });

    it("run: the index is opened first, so the steps' searches find the notes (not \"the index is not ready\")", async () => {
      script();
      const r = await runCli(["flow", "run", flowNote(), "--input", "bread"], { env: bed.env });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("Bread.md again\n");
      expect(toolResults()).toEqual([expect.stringContaining("(Cooking/Bread.md, score"), expect.stringContaining("(Cooking/Bread.md, score")]);
      expect(r.stderr).not.toContain("keywords only");
    });

    // A flow file outside any vault (Downloads, a home folder): its folder would be indexed and get a .krypton.
    it("run: a flow with tools in no vault asks for --vault (exit 2) and writes nothing", async () => {
      const loose = tempDirForFile("krypton-loose-flow-");
      writeFileSync(join(loose, "research.json"), JSON.stringify(SEARCHING_FLOW));
      writeFileSync(join(loose, "Diary.md"), "# Private\n");
      const r = await runCli(["flow", "run", join(loose, "research.json"), "--input", "bread"], { env: bed.env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/research\.json is in no vault \(no \.obsidian or \.krypton folder above it\) and its tasks use tools, .*: give --vault DIR/);
      expect(readdirSync(loose).sort()).toEqual(["Diary.md", "research.json"]);
      expect(bed.ollama.requests).toHaveLength(0);

      script();
      const named = await runCli(["flow", "run", join(loose, "research.json"), "--input", "bread", "--vault", bed.vault.root], { env: bed.env });
      expect(named.code).toBe(0);
      expect(toolResults()[0]).toContain("(Cooking/Bread.md, score");
      expect(readdirSync(loose).sort()).toEqual(["Diary.md", "research.json"]);
    });

    it("/run in krypton chat opens the index too, when the chat itself did not (mode none, no agents)", async () => {
      script();
      const r = await runCli(["chat", bed.vault.root, "--mode", "none", "--no-agents"], { env: bed.env, input: "/run bread-research bread\n/quit\n" });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("Bread.md again\n");
      expect(toolResults()).toEqual([expect.stringContaining("(Cooking/Bread.md, score"), expect.stringContaining("(Cooking/Bread.md, score")]);
    });

    describe("while the embedding server fails (500 on /api/embed)", () => {
      // It accepts connections (the start-up check passes), so the notes cannot be embedded: unavailable.
      const UNAVAILABLE = /^Semantic search is unavailable \(.*Ollama failed \(500\).*\): notes were matched by keywords only\.$/;
      const remarksIn = (stderr: string) => stderr.split("\n").filter((line) => line.includes("keywords only"));
      beforeEach(() => bed.ollama.script({ route: "embed", status: 500, times: Infinity }));

      it("run: the result on stdout, and why the notes were matched by keywords only once on stderr (and in the trace)", async () => {
        script();
        const trace = join(bed.vault.root, "trace.md");
        const r = await runCli(["flow", "run", flowNote(), "--input", "bread", "--trace", trace], { env: bed.env });
        expect(r.code).toBe(0);
        expect(r.stdout).toBe("Bread.md again\n");
        const remarks = remarksIn(r.stderr);
        expect(remarks).toHaveLength(1);
        expect(remarks[0]).toMatch(/^krypton: warning: /);
        const remark = remarks[0].slice("krypton: warning: ".length);
        expect(remark).toMatch(UNAVAILABLE);
        // The search tools' own words, which the model got too.
        expect(toolResults()[0]).toContain(remark);
        expect(await bed.vault.read("trace.md")).toContain(`_${remark}_`);
      });

      it("run --json: the remark is the result's keywordOnly, and not on stderr", async () => {
        script();
        const r = await runCli(["flow", "run", flowNote(), "--input", "bread", "--json"], { env: bed.env });
        expect(r.code).toBe(0);
        expect(JSON.parse(r.stdout)).toEqual({ status: "finished", result: "Bread.md again", message: "Finished.", path: ["find", "again"], keywordOnly: expect.stringMatching(UNAVAILABLE) });
        expect(r.stderr).not.toContain("keywords only");
      });

      it("/run in krypton chat: said once per chat, however many runs searched", async () => {
        script();
        script();
        const r = await runCli(["chat", bed.vault.root, "--mode", "none", "--no-agents"], { env: bed.env, input: "/run bread-research bread\n/run bread-research flour\n/quit\n" });
        expect(r.code).toBe(0);
        expect(r.stdout).toBe("Bread.md again\nBread.md again\n");
        expect(remarksIn(r.stderr)).toEqual([expect.stringMatching(/^krypton: warning: Semantic search is unavailable \(/)]);
      });
    });
  });

  it("run: a task whose tool loop ends at its step limit says so on its progress line and stops the run (exit 1); --json and /run agree", async () => {
    const LOOPING = {
      id: "looping",
      defaultModel: "ollama/llama3.1:8b",
      tools: ["read_note"],
      agents: [
        { name: "read", type: "task", config: { maxIterations: 2 }, params: { task: "Read the note about {{input}}", toolNames: ["read_note"] } },
        { name: "polish", type: "task", params: { task: "Polish: {{input}}" } },
      ],
      transitions: [{ from: "read", to: "polish" }],
    };
    await bed.vault.write("Workflows/Looping.md", "```krypton-flow\n" + JSON.stringify(LOOPING) + "\n```\n");
    // A small model that asks for the same note forever.
    const loop = () => bed.ollama.script({ route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Notes/A.md" } }] }, times: Infinity });
    const message = 'Agent "read" stopped at the step limit (2 steps) before it finished; the last output is kept.';
    const flowNote = join(bed.vault.root, "Workflows/Looping.md");
    loop();
    const r = await runCli(["flow", "run", flowNote, "--input", "a", "--no-embeddings"], { env: bed.env });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("I could not finish within the step limit.\n\n*(Stopped at the step limit: 2 steps.)*\n");
    expect(r.stderr).toMatch(/\n {2}read \(task\) [\d.]+ s · \d+ tokens · stopped at the step limit \(2 steps\) before it finished\n/);
    expect(r.stderr).toContain(`krypton: step limit: ${message}`);
    expect(r.stderr).not.toContain("polish");

    bed.ollama.reset();
    loop();
    const j = await runCli(["flow", "run", flowNote, "--input", "a", "--no-embeddings", "--json"], { env: bed.env });
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toEqual({ status: "step limit", result: "I could not finish within the step limit.\n\n*(Stopped at the step limit: 2 steps.)*", message, path: ["read"] });

    bed.ollama.reset();
    loop();
    const c = await runCli(["chat", bed.vault.root, "--no-embeddings"], { env: bed.env, input: "/run looping a\n/quit\n" });
    expect(c.stderr).toContain(`krypton: looping: step limit (read): ${message}`);
    // Piped, as flow run: a run stopped at a limit is no success.
    expect(c.code).toBe(1);
  });

  describe("a flow whose tools never search", () => {
    // Reads one note and writes another: no tool of it needs the index (ToolDefinition.needsIndex).
    const NOTES_ONLY = {
      id: "copy-plan",
      defaultModel: "ollama/llama3.1:8b",
      tools: ["read_note", "write_note", "list_notes"],
      agents: [{ name: "copy", type: "task", params: { task: "Copy {{input}} into a new note", toolNames: ["read_note", "write_note", "list_notes"] } }],
    };
    const SEARCHING = { ...NOTES_ONLY, id: "find-plan", tools: ["read_note", "search_notes"], agents: [{ ...NOTES_ONLY.agents[0], params: { task: "Find {{input}}", toolNames: ["read_note", "search_notes"] } }] };
    /** A Gemini embedder: the flow's model stays the loopback Ollama. */
    const geminiEmbedder = (baseUrl: string) => ({ ...bed.env, KRYPTON_EMBEDDING_PROVIDER: "gemini", KRYPTON_EMBEDDING_MODEL: "gemini-embedding-001", KRYPTON_GEMINI_API_KEY: "test-key", KRYPTON_GEMINI_BASE_URL: baseUrl });
    let embedder: SilentServer;
    beforeEach(async () => {
      embedder = await startSilentServer();
      await bed.vault.write("Notes/Plan.md", "# Plan\n\nCall Anna.\n");
    });
    afterEach(() => embedder.close());

    it("run: opens no index and contacts no embedder, and its tools still read and write the notes", async () => {
      await bed.vault.write("Workflows/Copy.md", "```krypton-flow\n" + JSON.stringify(NOTES_ONLY) + "\n```\n");
      bed.ollama.script([
        { route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Notes/Plan.md" } }] } },
        { route: "chat", reply: "", extra: { toolCalls: [{ name: "write_note", arguments: { title: "Plan copy", content: "Call Anna.", folder: "Copies" } }] } },
        { route: "chat", reply: "Copied to Copies/plan-copy.md." },
      ]);
      // -y, as `ask` has it: the write is allowed (not on a terminal, it would be refused).
      const r = await runCli(["flow", "run", join(bed.vault.root, "Workflows/Copy.md"), "--input", "Notes/Plan.md", "-y", "--json"], { env: geminiEmbedder(embedder.url) });
      expect(JSON.parse(r.stdout)).toMatchObject({ status: "finished", result: "Copied to Copies/plan-copy.md." });
      expect(r.code).toBe(0);
      expect(readdirSync(join(bed.vault.root, "Copies"))).toHaveLength(1);
      expect((await runCli(["flow", "--help"])).stdout).toMatch(/-y, --yes +run: allow write tools without asking/);
      // The embedding server was never connected to (not even the start-up check), and no index was made.
      expect(embedder.connections()).toBe(0);
      expect(readdirSync(bed.vault.root)).not.toContain(".krypton");
    });

    it("run: a flow that searches still checks the embedder first and opens the index", async () => {
      await bed.vault.write("Workflows/Find.md", "```krypton-flow\n" + JSON.stringify(SEARCHING) + "\n```\n");
      bed.ollama.script([
        { route: "chat", reply: "", extra: { toolCalls: [{ name: "search_notes", arguments: { query: "Anna" } }] } },
        { route: "chat", reply: "Notes/Plan.md" },
      ]);
      // Nothing listens there: the start-up check says so, and the index is opened by keywords.
      const r = await runCli(["flow", "run", join(bed.vault.root, "Workflows/Find.md"), "--input", "Anna"], { env: geminiEmbedder("http://127.0.0.1:9") });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("Notes/Plan.md\n");
      expect(r.stderr).toContain("Gemini is not reachable at http://127.0.0.1:9");
      expect(readdirSync(bed.vault.root)).toContain(".krypton");
      const searched = (bed.ollama.requestsTo("chat")[1].body as { messages: { role: string; content: string }[] }).messages.filter((m) => m.role === "tool");
      expect(searched[0].content).toContain("(Notes/Plan.md, score");
    });
  });

  it("run: a task stopped by the loop guard has that as its status (exit 1), in --json too", async () => {
    const GUARDED = {
      id: "guarded",
      defaultModel: "ollama/llama3.1:8b",
      tools: ["read_note"],
      agents: [{ name: "read", type: "task", params: { task: "Read the note about {{input}}", toolNames: ["read_note"] } }],
    };
    await bed.vault.write("Workflows/Guarded.md", "```krypton-flow\n" + JSON.stringify(GUARDED) + "\n```\n");
    bed.ollama.script({ route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Notes/A.md" } }] }, times: Infinity });
    const j = await runCli(["flow", "run", join(bed.vault.root, "Workflows/Guarded.md"), "--input", "a", "--no-embeddings", "--json"], { env: bed.env });
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({
      status: "loop guard",
      message: 'Agent "read" stopped by the loop guard (3 repeated tool calls blocked) before it finished; the last output is kept.',
      path: ["read"],
    });
  });

  it("/run in krypton chat: a flow by id, progress on stderr, the result on stdout", async () => {
    await bed.vault.write("Workflows/Pipeline.md", readFileSync(join(WORKFLOWS, "Sequential pipeline.md"), "utf8"));
    bed.ollama.setDefault({ reply: (req) => (req.userText.includes("List every fact") ? "facts" : req.userText.includes("Group these") ? "groups" : "Chat summary.") });
    const r = await runCli(["chat", bed.vault.root, "--no-embeddings"], { env: bed.env, input: "/run sequential-pipeline the meeting text\n/run nope x\n/quit\n" });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Chat summary.\n");
    expect(r.stderr).toContain("sequential-pipeline: finished (extract_facts → organise → summarise)");
    expect(r.stderr).toContain('no workflow named "nope"');
  });

  it("/run in krypton chat: a failed run says so on stderr and prints no result", async () => {
    await bed.vault.write("Workflows/Pipeline.md", readFileSync(join(WORKFLOWS, "Sequential pipeline.md"), "utf8"));
    bed.ollama.script([
      { route: "chat", reply: "facts" },
      { route: "chat", status: 400, error: "the organiser broke", times: Infinity },
    ]);
    const r = await runCli(["chat", bed.vault.root, "--no-embeddings"], { env: bed.env, input: "/run sequential-pipeline the meeting text\n/quit\n" });
    expect(r.stdout).not.toContain("facts");
    expect(r.stderr).toMatch(/krypton: sequential-pipeline: failed \(extract_facts → organise\): Agent "organise" failed: .*the organiser broke/);
    expect(r.code).toBe(1);
  });

  it("usage errors exit 2", async () => {
    const unknown = await runCli(["flow", "explode", retryLoop]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown action "explode": use validate, graph, run or schema');
    const none = await runCli(["flow"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("missing action: validate, graph, run or schema");
    expect((await runCli(["flow", "run"])).code).toBe(2);
    const missing = await runCli(["flow", "validate", join(bed.vault.root, "nope.md")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no such file");
    // A folder or an input file that cannot be read: the reason in words, never a bare error code.
    const folder = await runCli(["flow", "validate", join(bed.vault.root, "Notes")]);
    expect(folder.code).toBe(1);
    expect(folder.stderr).toBe(`krypton: cannot read ${join(bed.vault.root, "Notes")}: is a folder, not a file\n`);
    const input = await runCli(["flow", "run", retryLoop, "--input-file", join(bed.vault.root, "Notes")], { env: bed.env });
    expect(input.code).toBe(1);
    expect(input.stderr).toContain(`krypton: cannot read the input file ${join(bed.vault.root, "Notes")}: is a folder, not a file\n`);
  });
});
