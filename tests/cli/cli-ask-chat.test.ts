/**
 * `krypton ask` and `krypton chat` end to end: the bundled CLI against a temp vault and the loopback
 * Ollama and Tavily servers.
 */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { DEFAULT_GEMINI_KEY, startGeminiServer } from "../support/servers/gemini-server";
import { DEFAULT_TAVILY_KEY, startTavilyServer, type TavilyTestServer } from "../support/servers/tavily-server";
import { useCliTestBed } from "../support/cli-test-bed";
import { runCli } from "./cli-harness";
import { ConversationStore } from "../../src/core/chat/conversation-store";
import { silentLogger } from "../../src/core/ports/logger";
import { nodeClock } from "../../src/node/node-clock";
import { FsDataDir, dataDirOf } from "../../src/node/fs-data-dir";

/** The vault's conversations as the store reads them (head and message records merged). */
const conversationStore = (root: string) => new ConversationStore(new FsDataDir(dataDirOf(root)), nodeClock, silentLogger);

/** Every saved conversation of the vault, as JSON text. */
async function savedConversations(root: string): Promise<string[]> {
  const store = conversationStore(root);
  const out: string[] = [];
  for (const summary of await store.list()) out.push(JSON.stringify(await store.get(summary.id)));
  return out;
}

const NOTES: Record<string, string> = {
  "Machine Learning/Gradient descent.md":
    "# Gradient descent\n\nGradient descent walks downhill on the loss surface. The learning rate sets the step size.\n",
  "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter. Bake at 250 degrees.\n",
  "Travel/Lisbon.md": "# Lisbon\n\nTrams, custard tarts and steep hills.\n",
};

interface AskJson {
  answer: string;
  mode: string;
  sources: { n: number; kind: "note" | "web"; path?: string; url?: string; title: string }[];
  agent?: { kind: string; path?: string; title?: string };
  notices?: string[];
  error?: { message: string };
  conversationId: string | null;
}

describe("krypton ask / chat", () => {
  const bed = useCliTestBed({ notes: NOTES });
  let tavily: TavilyTestServer;
  /** The bed's Ollama and the loopback Tavily, with its key. */
  let env: Record<string, string>;

  beforeAll(async () => {
    tavily = await startTavilyServer();
  });
  afterAll(() => tavily.close());
  beforeEach(() => {
    tavily.reset();
    env = { ...bed.env, KRYPTON_TAVILY_BASE_URL: tavily.url, TAVILY_API_KEY: DEFAULT_TAVILY_KEY };
  });

  const ask = async (question: string, ...flags: string[]) => {
    const r = await runCli(["ask", bed.vault.root, question, "--json", ...flags], { env });
    return { ...r, json: r.stdout ? (JSON.parse(r.stdout) as AskJson) : null };
  };

  it("--mode none: the model's answer, no sources, no retrieval", async () => {
    bed.ollama.script({ route: "chat", reply: "Paris is the capital of France." });
    const r = await ask("What is the capital of France?", "--mode", "none");
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ answer: "Paris is the capital of France.", mode: "none", sources: [] });
    expect(tavily.requests).toHaveLength(0);
    expect(bed.ollama.requestsTo("chat")).toHaveLength(1);
  });

  it("--mode rag: answers from the vault with note sources", async () => {
    bed.ollama.script({ route: "chat", reply: "Use a smaller learning rate [1]." });
    const r = await ask("how does gradient descent choose its step size?", "--mode", "rag");
    expect(r.code).toBe(0);
    expect(r.json!.mode).toBe("rag");
    expect(r.json!.answer).toBe("Use a smaller learning rate [1].");
    expect(r.json!.sources.length).toBeGreaterThan(0);
    expect(r.json!.sources[0]).toMatchObject({ n: 1, kind: "note", path: "Machine Learning/Gradient descent.md" });
    // The note's text reached the prompt.
    const prompt = JSON.stringify(bed.ollama.requestsTo("chat")[0].body);
    expect(prompt).toContain("walks downhill on the loss surface");
    expect(tavily.requests).toHaveLength(0);
  });

  it("--mode web: Tavily results as sources, no notes", async () => {
    bed.ollama.script({ route: "chat", reply: "It was released last week [1]." });
    const r = await ask("latest ollama release", "--mode", "web");
    expect(r.code).toBe(0);
    expect(r.json!.mode).toBe("web");
    expect(r.json!.sources.length).toBeGreaterThan(0);
    expect(r.json!.sources.every((s) => s.kind === "web")).toBe(true);
    expect(tavily.requestsTo("search")).toHaveLength(1);
  });

  it("--mode hybrid: notes and web results together", async () => {
    bed.ollama.script({ route: "chat", reply: "Both say so [1][2]." });
    const r = await ask("gradient descent learning rate", "--mode", "hybrid");
    expect(r.code).toBe(0);
    const kinds = new Set(r.json!.sources.map((s) => s.kind));
    expect(kinds).toEqual(new Set(["note", "web"]));
  });

  it("web mode without a Tavily key still answers, with a notice (exit 0)", async () => {
    bed.ollama.script({ route: "chat", reply: "From memory: no idea." });
    const r = await runCli(["ask", bed.vault.root, "latest news", "--mode", "web", "--json"], { env: { KRYPTON_OLLAMA_URL: bed.ollama.url, KRYPTON_TAVILY_BASE_URL: tavily.url } });
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as AskJson;
    expect(json.answer).toBe("From memory: no idea.");
    expect(json.notices).toEqual(["Web search is not set up (set TAVILY_API_KEY), so this answer does not use the web."]);
  });

  it("streams the answer to stdout, then the sources", async () => {
    bed.ollama.script({ route: "chat", reply: "Bake it hot [1]." });
    const r = await runCli(["ask", bed.vault.root, "how hot do I bake sourdough bread?", "--mode", "rag"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Bake it hot \[1\]\.\n\nSources:\n {2}\[1\] Cooking\/Bread\.md/);
  });

  it("saves the exchange to .krypton/chat like the plugin", async () => {
    bed.ollama.script({ route: "chat", reply: "Saved answer." });
    const r = await ask("remember this", "--mode", "none");
    expect(r.code).toBe(0);
    const files = await fs.readdir(join(bed.vault.root, ".krypton", "chat"));
    const id = r.json!.conversationId!;
    expect(files).toContain(`${id}.json`);
    const raw = JSON.stringify(await conversationStore(bed.vault.root).get(id));
    expect(raw).toContain("remember this");
    expect(raw).toContain("Saved answer.");
  });

  it('"create a note on X" writes a new note, and never overwrites one', async () => {
    bed.ollama.script({ route: "chat", reply: "# Photosynthesis\n\nPlants turn light into sugar.\n", times: 2 });
    const first = await ask("create a note on photosynthesis");
    expect(first.code).toBe(0);
    expect(first.json!.agent).toMatchObject({ kind: "note-created" });
    const path = first.json!.agent!.path!;
    expect(path).toMatch(/^Krypton\/photosynthesis\.md$/);
    expect(await bed.vault.read(path)).toContain("Plants turn light into sugar.");

    await bed.vault.write(path, "# My own edits\n");
    const second = await ask("create a note on photosynthesis");
    expect(second.code).toBe(0);
    expect(second.json!.agent!.path).toBe("Krypton/photosynthesis-1.md");
    expect(await bed.vault.read(path)).toBe("# My own edits\n");
  });

  it('"create a note on X" without --json prints the created path', async () => {
    bed.ollama.script({ route: "chat", reply: "# Tides\n\nThe moon pulls the sea.\n" });
    const r = await runCli(["ask", bed.vault.root, "create a note about tides", "--folder", "Inbox"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Inbox/tides.md");
    expect(await bed.vault.exists("Inbox/tides.md")).toBe(true);
  });

  it('"find notes about X" is answered by the search agent, printed with real paths', async () => {
    const r = await runCli(["ask", bed.vault.root, "find notes about sourdough"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ 1\. Sourdough bread {2}Cooking\/Bread\.md:\d+/m);
    expect(bed.ollama.requestsTo("chat")).toHaveLength(0);
    const json = await ask("find notes about sourdough");
    expect(json.json!.agent).toMatchObject({ kind: "search-results" });
    expect(json.json!.agent).not.toHaveProperty("keywordOnly");
    expect(r.stderr).not.toMatch(/keywords only/);
  });

  it('"summarize this note" uses --note as the current note', async () => {
    bed.ollama.script({ route: "chat", reply: "A bread made with a starter.", times: Infinity });
    const r = await runCli(["ask", bed.vault.root, "summarize this note", "--note", "Cooking/Bread.md"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("A bread made with a starter.");
    expect(r.stdout).toMatch(/Sources:\n {2}Cooking\/Bread\.md/);
    expect(JSON.stringify(bed.ollama.requestsTo("chat")[0].body)).toContain("lively starter");
  });

  it('"summarize my notes on X" whose excerpts were shortened to fit the window says so after the summary', async () => {
    const long = (i: number) => Array.from({ length: 1000 }, (_, j) => `w${i}x${j}`).join(" ");
    for (let i = 0; i < 10; i++) await bed.vault.write(`Kafka/kafka-${i}.md`, `# Kafka ${i}\n\nkafka topic ${i} ${long(i)}\n`);
    bed.ollama.script({ route: "chat", reply: "Kafka everywhere.", times: Infinity });
    const small = { ...env, KRYPTON_OLLAMA_MAX_CONTEXT: "2048" };
    const r = await runCli(["ask", bed.vault.root, "summarize my notes on kafka", "--mode", "none"], { env: small });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Kafka everywhere.\n\nSources:\n  Kafka/kafka-");
    expect(r.stderr).toContain("krypton: warning: To fit llama3.1:8b's context window (2,048 tokens), this summary shortened the excerpts given with the question.\n");
    const json = await runCli(["ask", bed.vault.root, "summarize my notes on kafka", "--mode", "none", "--json"], { env: small });
    expect(JSON.parse(json.stdout)).toMatchObject({ agent: { kind: "summary", fitted: expect.stringMatching(/^To fit .*, this summary shortened the excerpts/) } });
  });

  it("--no-agents sends even an agent-like request to the chat model", async () => {
    bed.ollama.script({ route: "chat", reply: "Plain answer." });
    const r = await ask("create a note on photosynthesis", "--no-agents", "--mode", "none");
    expect(r.json).toMatchObject({ answer: "Plain answer." });
    expect(r.json!.agent).toBeUndefined();
    expect(await bed.vault.exists("Krypton")).toBe(false);
  });

  it("an unreachable chat model: a clear one-line error and exit 1", async () => {
    const r = await runCli(["ask", bed.vault.root, "hello?", "--mode", "none"], { env: { KRYPTON_OLLAMA_URL: "http://127.0.0.1:9" } });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trim().split("\n");
    expect(lines[lines.length - 1]).toMatch(/^krypton: .*(reach|running|connect)/i);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("Gemini chosen without a key: the error says which environment variable to set", async () => {
    const r = await runCli(["ask", bed.vault.root, "hello?", "--mode", "none", "--chat-provider", "gemini", "--chat-model", "gemini-2.5-flash"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("there is no Gemini API key: set GEMINI_API_KEY.");
  });

  it("--json: a model that streams only whitespace gave no answer: \"\" and the empty-answer error, not the whitespace", async () => {
    bed.ollama.script({ route: "chat", tokens: ["\n", "  ", "\n\n"], times: Infinity });
    const r = await ask("hello?", "--mode", "none");
    expect(r.code).toBe(1);
    expect(r.json?.answer).toBe("");
    expect(r.json?.error?.message).toMatch(/returned an empty answer/);
    expect(r.stderr).toMatch(/returned an empty answer/);
  });

  it("a model that streams only whitespace prints nothing on stdout, only the empty-answer error on stderr", async () => {
    bed.ollama.script({ route: "chat", tokens: ["\n", "  ", "\n\n"], times: Infinity });
    const r = await runCli(["ask", bed.vault.root, "hello?", "--mode", "none"], { env });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/returned an empty answer/);
  });

  it("whitespace streamed before, between and after the words is printed with them: the answer's text is unchanged", async () => {
    bed.ollama.script({ route: "chat", tokens: ["\n", "  ", "Paris", " ", "is", "\n\n", "sunny.", "  \n"] });
    const r = await runCli(["ask", bed.vault.root, "weather?", "--mode", "none"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("\n  Paris is\n\nsunny.  \n");
  });

  it("a chat model that is not pulled: the error says which model", async () => {
    const r = await runCli(["ask", bed.vault.root, "hello?", "--mode", "none", "--chat-model", "nonexistent:7b"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/nonexistent:7b/);
  });

  it("never prints API keys, even in errors", async () => {
    tavily.script({ route: "search", status: 401 });
    bed.ollama.script({ route: "chat", reply: "ok" });
    const secret = "tvly-super-secret-key-0123";
    const r = await runCli(["ask", bed.vault.root, "news", "--mode", "web", "--verbose"], { env: { ...env, TAVILY_API_KEY: secret, GEMINI_API_KEY: "AIza-secret-gemini" } });
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(r.stdout + r.stderr).not.toContain("AIza-secret-gemini");
  });

  it("Gemini for chat and embeddings (gemini-embedding-001), hybrid with Tavily: works, and no key reaches .krypton or the output", async () => {
    const geminiKey = "AIzaSy-cli-SECRET-gemini-0123456789";
    const tavilyKey = "tvly-cli-SECRET-tavily-0123456789";
    const gemini = await startGeminiServer({ apiKey: geminiKey });
    const keyedTavily = await startTavilyServer({ apiKey: tavilyKey });
    try {
      const geminiEnv = {
        KRYPTON_CHAT_PROVIDER: "gemini",
        KRYPTON_CHAT_MODEL: "gemini-2.5-flash",
        KRYPTON_EMBEDDING_PROVIDER: "gemini",
        KRYPTON_EMBEDDING_MODEL: "gemini-embedding-001",
        KRYPTON_GEMINI_BASE_URL: gemini.url,
        KRYPTON_TAVILY_BASE_URL: keyedTavily.url,
        GEMINI_API_KEY: geminiKey,
        TAVILY_API_KEY: tavilyKey,
      };
      gemini.script({ route: "stream", reply: "Smaller steps [1], says the web too [2]." });
      const r = await runCli(["ask", bed.vault.root, "gradient descent learning rate step size", "--mode", "hybrid", "--json", "--verbose"], { env: geminiEnv });
      expect(r.code).toBe(0);
      const json = JSON.parse(r.stdout) as AskJson;
      expect(json).toEqual(expect.objectContaining({ answer: "Smaller steps [1], says the web too [2].", mode: "hybrid", sources: expect.any(Array) }));
      expect(json.sources[0]).toMatchObject({ n: 1, kind: "note", path: "Machine Learning/Gradient descent.md" });
      expect(json.sources.some((s) => s.kind === "web")).toBe(true);
      expect(gemini.requestsTo("batchEmbed").length).toBeGreaterThan(0);

      // A failing run whose service echoes the key back.
      gemini.script({ route: "stream", status: 500, error: `backend error for ${geminiKey}`, times: Infinity });
      const failed = await runCli(["ask", bed.vault.root, "again?", "--mode", "none", "--verbose"], { env: geminiEnv });
      expect(failed.code).toBe(1);

      for (const out of [r.stdout + r.stderr, failed.stdout + failed.stderr]) {
        expect(out).not.toContain(geminiKey);
        expect(out).not.toContain(tavilyKey);
      }
      const walk = async (dir: string): Promise<string[]> => {
        const found: string[] = [];
        for (const e of await fs.readdir(dir, { withFileTypes: true })) {
          const full = join(dir, e.name);
          if (e.isDirectory()) found.push(...(await walk(full)));
          else found.push(full);
        }
        return found;
      };
      const files = await walk(join(bed.vault.root, ".krypton"));
      expect(files.length).toBeGreaterThan(2);
      for (const file of files) {
        const text = (await fs.readFile(file)).toString("latin1");
        expect({ file, leaks: text.includes(geminiKey) || text.includes(tavilyKey) }).toEqual({ file, leaks: false });
      }
    } finally {
      await gemini.close();
      await keyedTavily.close();
    }
  });

  it("Ctrl+C during ask stops the answer: partial text kept and saved, exit code 130", async () => {
    bed.ollama.script({ route: "chat", reply: "alpha beta gamma delta epsilon zeta eta theta iota kappa", tokenDelayMs: 200 });
    const r = await runCli(["ask", bed.vault.root, "a long answer please", "--mode", "none"], {
      env,
      onSpawn: (child) => {
        child.stdin.end();
        child.stdout.on("data", (d: Buffer) => {
          if (d.toString().includes("alpha")) child.kill("SIGINT");
        });
      },
    });
    expect(r.code).toBe(130);
    expect(r.stdout).toContain("alpha");
    expect(r.stdout).not.toContain("kappa");
    const saved = await savedConversations(bed.vault.root);
    expect(saved.some((c) => c.includes("alpha") && /"stopped":\s*true/.test(c))).toBe(true);
  });

  describe("chat", () => {
    it("reads messages from piped stdin, handles /mode and /new, and saves to .krypton/chat", async () => {
      bed.ollama.script([
        { route: "chat", reply: "First answer." },
        { route: "chat", reply: "Second answer." },
        { route: "chat", reply: "Third answer." },
      ]);
      const input = ["hello there", "/mode none", "and again", "/new", "a new topic", "/quit", "never sent"].join("\n") + "\n";
      const r = await runCli(["chat", bed.vault.root, "--mode", "rag"], { env, input });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("First answer.");
      expect(r.stdout).toContain("Second answer.");
      expect(r.stdout).toContain("Third answer.");
      expect(r.stderr).toContain("Mode: none");
      expect(bed.ollama.requestsTo("chat")).toHaveLength(3);
      expect(bed.ollama.requestsTo("chat").map((q) => q.userText).join("|")).not.toContain("never sent");

      const conversations = await savedConversations(bed.vault.root);
      const withBoth = conversations.find((c) => c.includes("hello there") && c.includes("and again"));
      expect(withBoth).toBeDefined();
      expect(withBoth).not.toContain("a new topic");
      expect(conversations.some((c) => c.includes("a new topic") && c.includes("Third answer."))).toBe(true);

      // /new says where the conversation it leaves was saved, as the end of the chat does for the last one.
      const first = (JSON.parse(withBoth!) as { id: string }).id;
      const last = (JSON.parse(conversations.find((c) => c.includes("a new topic"))!) as { id: string }).id;
      const saved = (id: string) => `Saved conversation ${id} in .krypton/chat/ (continue with --conversation ${id})`;
      expect(r.stderr).toContain(`${saved(first)}\nNew conversation.\n`);
      expect(r.stderr.trimEnd().endsWith(saved(last))).toBe(true);
    });

    it("with the embedder down, --mode none says nothing about keywords; after /mode rag the answer says notes were matched by keywords only", async () => {
      // Chat from Gemini, embeddings from an Ollama that is not running (the harness's dead port).
      const gemini = await startGeminiServer();
      try {
        const chatEnv = { KRYPTON_CHAT_PROVIDER: "gemini", KRYPTON_CHAT_MODEL: "gemini-2.5-flash", KRYPTON_GEMINI_BASE_URL: gemini.url, GEMINI_API_KEY: DEFAULT_GEMINI_KEY };
        const r = await runCli(["chat", bed.vault.root, "--mode", "none"], { env: chatEnv, input: "hello\n/mode rag\nsourdough?\n" });
        expect(r.code).toBe(0);
        expect(gemini.requestsTo("stream")).toHaveLength(2);
        const [beforeRag, afterRag] = r.stderr.split("Mode: rag");
        expect(beforeRag).not.toMatch(/keywords|not reachable/);
        expect(afterRag).toContain(
          "krypton: warning: Semantic search is unavailable (Ollama is not reachable at http://127.0.0.1:9 (connection refused: is it running?)): notes were matched by keywords only.\n",
        );
      } finally {
        await gemini.close();
      }
    });

    it("says the index's warnings (a skipped note) once per run, however many /mode and /agent switches follow", async () => {
      await fs.writeFile(join(bed.vault.root, "Image.md"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0]));
      bed.ollama.script({ route: "chat", reply: "Noted.", times: 2 });
      // Mode none opens the index for the intent agents only; /mode rag then needs it for searching too.
      const input = ["hi", "/mode rag", "/mode hybrid", "/agent on", "/agent off", "/mode none", "/mode rag", "sourdough?"].join("\n") + "\n";
      const r = await runCli(["chat", bed.vault.root, "--mode", "none"], { env, input });
      expect(r.code).toBe(0);
      expect(r.stdout.split("Noted.")).toHaveLength(3);
      expect(r.stderr.match(/skipped Image\.md: /g)).toHaveLength(1);
      expect(r.stderr).toMatch(/^krypton: warning: skipped Image\.md: [^\n]*binary file[^\n]*\nMode: rag\nMode: hybrid\nAgent mode: on\nAgent mode: off\nMode: none\nMode: rag\n/);
    });

    it("an answer of only whitespace leaves no blank output: the next answer is the first thing on stdout", async () => {
      bed.ollama.script([
        { route: "chat", tokens: ["\n", "  ", "\n\n"] },
        { route: "chat", tokens: ["\n", "Noted."] },
      ]);
      const r = await runCli(["chat", bed.vault.root, "--mode", "none"], { env, input: "hello\nagain\n/quit\n" });
      expect(r.stderr).toMatch(/returned an empty answer/);
      expect(r.stdout).toBe("\nNoted.\n");
    });

    it("a bad /mode is reported and the chat goes on", async () => {
      bed.ollama.script({ route: "chat", reply: "Still here." });
      const r = await runCli(["chat", bed.vault.root, "--mode", "none"], { env, input: "/mode turbo\nhi\n" });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/\/mode must be one of none, rag, web, hybrid/);
      expect(r.stdout).toContain("Still here.");
    });

    it("Ctrl+C during an answer stops that answer, keeps the partial text and the process carries on", async () => {
      bed.ollama.script([
        { route: "chat", reply: "one two three four five six seven eight nine ten", tokenDelayMs: 200 },
        { route: "chat", reply: "After the stop." },
      ]);
      const r = await runCli(["chat", bed.vault.root, "--mode", "none"], {
        env,
        onSpawn: (child) => {
          // Both lines are queued at once: the second is answered after the first one is stopped.
          child.stdin.end("tell me a long story\nnext question\n");
          let sent = false;
          child.stdout.on("data", (d: Buffer) => {
            if (!sent && d.toString().includes("one")) {
              sent = true;
              child.kill("SIGINT");
            }
          });
        },
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("one");
      expect(r.stdout).not.toContain("ten");
      expect(r.stdout).toContain("After the stop.");
      const saved = await savedConversations(bed.vault.root);
      expect(saved.some((c) => c.includes('"stopped": true') || c.includes('"stopped":true'))).toBe(true);
    });
  });
});
