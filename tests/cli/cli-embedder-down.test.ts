/**
 * What the user sees when the embedding server is unreachable: `krypton search`, `krypton ask` (modes
 * none, rag, hybrid; "find notes about X"; agent mode), `krypton chat`, `krypton flashcards --topic` and
 * `krypton flow run` (a step that calls search_notes), on stdout, stderr and with --json. The vault was
 * indexed while the server was up, so its notes have vectors; then the server went away and the CLI's
 * start-up probe finds it down. Chat comes from the loopback Gemini, web results from
 * the loopback Tavily, and embeddings from an Ollama that is not running (the harness's dead port).
 *
 * The reason is said exactly once per command run, in the words of every host (core/search/keyword-only.ts).
 * `search` says it with its results (on stderr, also with --json, whose stdout is the bare list of results).
 * ask and chat say it where the plugin's chat does: with the answer that searched, or under "find notes
 * about X" results; agent mode, whose searches tell only the model, says it before its answer; a workflow
 * says it after its result. With --json it is in the answer (`notices`, or the agent result's `keywordOnly`;
 * a workflow's `keywordOnly`), and stderr stays quiet about it.
 */
import { startOllamaServer } from "../support/servers/ollama-server";
import { startSilentServer } from "../support/servers/silent-server";
import { DEFAULT_GEMINI_KEY, startGeminiServer, type GeminiTestServer } from "../support/servers/gemini-server";
import { DEFAULT_TAVILY_KEY, startTavilyServer, type TavilyTestServer } from "../support/servers/tavily-server";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { buildCli, runCli } from "./cli-harness";

const NOTES: Record<string, string> = {
  "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter. Bake at 250 degrees.\n",
  "Travel/Lisbon.md": "# Lisbon\n\nTrams, custard tarts and steep hills.\n",
};

/** The probe's reason, as the CLI words it. */
const REASON = "Ollama is not reachable at http://127.0.0.1:9 (connection refused: is it running?)";
/** How every host words it beside results: `krypton search`, the chat's notice, the search tools, agent mode's search_notes. */
const UNAVAILABLE = `Semantic search is unavailable (${REASON}): notes were matched by keywords only.`;
const SEARCH_WARNING = `krypton: warning: ${UNAVAILABLE}\n`;
const ANSWER = "This is the test Gemini answer.";

interface AskJson {
  answer: string;
  mode: string;
  sources: { kind: string; path?: string }[];
  notices?: string[];
  agent?: { kind: string; hits?: { path: string }[]; keywordOnly?: string };
}

describe("the embedding server is unreachable", () => {
  let gemini: GeminiTestServer;
  let tavily: TavilyTestServer;
  let vault: TempVault;
  let env: Record<string, string>;

  beforeAll(async () => {
    await buildCli();
    gemini = await startGeminiServer();
    tavily = await startTavilyServer();
    vault = await makeTempVault(NOTES);
    const ollama = await startOllamaServer();
    try {
      const indexed = await runCli(["index", vault.root], { env: { KRYPTON_OLLAMA_URL: ollama.url } });
      expect(indexed.code).toBe(0);
    } finally {
      await ollama.close();
    }
    env = {
      KRYPTON_CHAT_PROVIDER: "gemini",
      KRYPTON_CHAT_MODEL: "gemini-2.5-flash",
      KRYPTON_GEMINI_BASE_URL: gemini.url,
      GEMINI_API_KEY: DEFAULT_GEMINI_KEY,
      KRYPTON_TAVILY_BASE_URL: tavily.url,
      TAVILY_API_KEY: DEFAULT_TAVILY_KEY,
    };
  }, 120_000);
  beforeEach(() => gemini.reset());
  afterAll(async () => {
    await gemini.close();
    await tavily.close();
    await vault.cleanup();
  });

  const krypton = (args: string[], input?: string) => runCli([args[0], vault.root, ...args.slice(1)], { env, input });
  const askJson = async (...args: string[]) => {
    const r = await krypton(["ask", ...args, "--json"]);
    expect(r.code).toBe(0);
    return { ...r, json: JSON.parse(r.stdout) as AskJson };
  };

  describe("krypton search", () => {
    it("lists the keyword matches and says why once on stderr", async () => {
      const r = await krypton(["search", "sourdough"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^ 1\. Sourdough bread {2}Cooking\/Bread\.md:3/);
      expect(r.stderr).toBe(SEARCH_WARNING);
    });

    it("--json: the results on stdout, the same one warning on stderr", async () => {
      const r = await krypton(["search", "sourdough", "--json"]);
      expect(r.code).toBe(0);
      expect((JSON.parse(r.stdout) as { path: string }[]).map((h) => h.path)).toEqual(["Cooking/Bread.md"]);
      expect(r.stderr).toBe(SEARCH_WARNING);
    });
  });

  describe("krypton ask", () => {
    it("mode none searches nothing and says nothing about keywords", async () => {
      const r = await krypton(["ask", "what is bread?", "--mode", "none"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${ANSWER}\n`);
      expect(r.stderr).toBe("");
      const json = await askJson("what is bread?", "--mode", "none");
      expect(json.json).not.toHaveProperty("notices");
      expect(json.stderr).toBe("");
    });

    it.each(["rag", "hybrid"])("mode %s: the answer cites the keyword matches and says why once, as the plugin's chat does", async (mode) => {
      const r = await krypton(["ask", "what is sourdough?", "--mode", mode]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^${ANSWER}\n\nSources:\n {2}\\[1\\] Cooking/Bread\\.md › Sourdough bread \\(line 3\\)\n`));
      expect(r.stderr).toBe(`krypton: warning: ${UNAVAILABLE}\n`);
      const json = await askJson("what is sourdough?", "--mode", mode);
      expect(json.json.sources[0]).toMatchObject({ kind: "note", path: "Cooking/Bread.md" });
      expect(json.json.notices).toEqual([UNAVAILABLE]);
      expect(json.stderr).toBe("");
    });

    it.each(["none", "rag"])('"find notes about X" in mode %s: the results, then why once', async (mode) => {
      const r = await krypton(["ask", "find notes about sourdough", "--mode", mode]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^ 1\. Sourdough bread {2}Cooking\/Bread\.md:3/);
      expect(r.stderr).toBe(`krypton: warning: ${UNAVAILABLE}\n`);
      const json = await askJson("find notes about sourdough", "--mode", mode);
      expect(json.json.agent).toMatchObject({ kind: "search-results", hits: [{ path: "Cooking/Bread.md" }], keywordOnly: UNAVAILABLE });
      expect(json.stderr).toBe("");
    });

    it('"summarize my notes on X": the summary, then why once', async () => {
      const r = await krypton(["ask", "summarize my notes on sourdough", "--mode", "none"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`${ANSWER}\n\nSources:\n  Cooking/Bread.md\n`);
      expect(r.stderr).toBe(`krypton: warning: ${UNAVAILABLE}\n`);
      const json = await askJson("summarize my notes on sourdough", "--mode", "none");
      expect(json.json.agent).toMatchObject({ kind: "summary", keywordOnly: UNAVAILABLE });
      expect(json.stderr).toBe("");
    });

    it("--agent: why is said once before the answer, and the model's search_notes results say it too", async () => {
      gemini.script([
        { route: "stream", extra: { functionCalls: [{ name: "search_notes", args: { query: "sourdough" } }] } },
        { route: "stream", reply: "Your bread note." },
      ]);
      const r = await krypton(["ask", "at what temperature do I bake bread?", "--agent"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Your bread note.");
      expect(r.stderr.match(/keywords only/g)).toHaveLength(1);
      expect(r.stderr).toMatch(new RegExp(`^krypton: warning: ${escape(UNAVAILABLE)}\n`));
      expect(JSON.stringify(gemini.requestsTo("stream")[1].body)).toContain(UNAVAILABLE);

      // "find notes about X" in agent mode: the results carry the same sentence, not shown again.
      const found = await krypton(["ask", "find notes about sourdough", "--agent"]);
      expect(found.stdout).toMatch(/^ 1\. Sourdough bread {2}Cooking\/Bread\.md:3/);
      expect(found.stderr).toBe(`krypton: warning: ${UNAVAILABLE}\n`);
    });

    it("--agent --json: why is in the answer's notices, once, as in the other modes, and not on stderr", async () => {
      gemini.script([
        { route: "stream", extra: { functionCalls: [{ name: "search_notes", args: { query: "sourdough" } }] } },
        { route: "stream", reply: "Your bread note." },
      ]);
      const json = await askJson("at what temperature do I bake bread?", "--agent");
      expect(json.json.answer).toBe("Your bread note.");
      expect(json.json.notices).toEqual([UNAVAILABLE]);
      expect(json.stderr).toBe("");

      // "find notes about X" in agent mode: the results carry the sentence, not repeated in notices.
      const found = await askJson("find notes about sourdough", "--agent");
      expect(found.json.agent).toMatchObject({ kind: "search-results", hits: [{ path: "Cooking/Bread.md" }], keywordOnly: UNAVAILABLE });
      expect(found.json).not.toHaveProperty("notices");
      expect(found.stderr).toBe("");
    });
  });

  describe("krypton flashcards --topic", () => {
    it("the run's text says why once, after the cards; --json has it as keywordOnly", async () => {
      const cards = '{"cards":[{"type":"basic","front":"At what temperature is sourdough baked?","back":"250 degrees","passage":1}]}';
      gemini.script({ route: "stream", reply: cards, times: 2 });
      const r = await krypton(["flashcards", "--topic", "sourdough"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Added 1 flashcard to \[\[Flashcards\/sourdough\]\]/);
      expect(r.stdout.endsWith(`\n\n_${UNAVAILABLE}_\n`)).toBe(true);
      expect(r.stderr).toBe("");
      const json = await krypton(["flashcards", "--topic", "sourdough", "--deck", "Bread", "--json"]);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ deckPath: "Flashcards/Bread.md", keywordOnly: UNAVAILABLE });
      expect(json.stderr).toBe("");
    });
  });

  describe("krypton flow run", () => {
    // A step whose search_notes call comes from the loopback Gemini: the vault's Ollama is not running.
    const FLOW = {
      id: "bread-research",
      defaultModel: "gemini/gemini-2.5-flash",
      tools: ["search_notes"],
      agents: [{ name: "find", type: "task", params: { task: "Find my notes about {{input}}", toolNames: ["search_notes"] } }],
    };
    beforeAll(() => vault.write("Workflows/Research.md", "```krypton-flow\n" + JSON.stringify(FLOW) + "\n```\n"));
    const run = (...args: string[]) => {
      gemini.script([
        { route: "stream", extra: { functionCalls: [{ name: "search_notes", args: { query: "sourdough" } }] } },
        { route: "stream", reply: "Your bread note." },
      ]);
      return runCli(["flow", "run", `${vault.root}/Workflows/Research.md`, "--input", "bread", ...args], { env });
    };

    it("checks the embedder first, like every command that searches, and says why once after the result", async () => {
      const r = await run();
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("Your bread note.\n");
      expect(r.stderr.match(/keywords only/g)).toHaveLength(1);
      expect(r.stderr).toContain(`\nkrypton: warning: ${UNAVAILABLE}\n`);
      expect(JSON.stringify(gemini.requestsTo("stream")[1].body)).toContain(UNAVAILABLE);
    });

    // Only a run that opens the index checks the embedder: a hung one (accepts, never answers) would cost a
    // flow that searches nothing the connect wait, and a remote one down the whole connect timeout.
    it("a flow whose tasks use no tools contacts no embedder", async () => {
      const silent = await startSilentServer();
      try {
        const plain = { id: "plain", defaultModel: "gemini/gemini-2.5-flash", agents: [{ name: "answer", type: "task", params: { task: "Answer: {{input}}" } }] };
        await vault.write("Workflows/Plain.md", "```krypton-flow\n" + JSON.stringify(plain) + "\n```\n");
        gemini.script({ route: "stream", reply: "Plain answer." });
        const r = await runCli(["flow", "run", `${vault.root}/Workflows/Plain.md`, "--input", "bread"], { env: { ...env, KRYPTON_OLLAMA_URL: silent.url } });
        expect(r.code).toBe(0);
        expect(r.stdout).toBe("Plain answer.\n");
        expect(silent.connections()).toBe(0);
      } finally {
        await silent.close();
      }
    });

    it("--json: why is the result's keywordOnly, and not on stderr", async () => {
      const r = await run("--json");
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ status: "finished", result: "Your bread note.", message: "Finished.", path: ["find"], keywordOnly: UNAVAILABLE });
      expect(r.stderr).not.toContain("keywords only");
    });
  });

  describe("krypton chat", () => {
    it("says why once, with the first answer that searched, however many answers and mode switches follow", async () => {
      const r = await krypton(["chat", "--mode", "rag"], "sourdough?\ntrams?\n/mode none\nhi\n/mode hybrid\nfind notes about trams\n/agent on\nhello\n");
      expect(r.code).toBe(0);
      expect(r.stdout.split(ANSWER)).toHaveLength(5);
      expect(r.stdout).toMatch(/^ 1\. Lisbon {2}Travel\/Lisbon\.md:3/m);
      expect(r.stderr).toMatch(new RegExp(`^krypton: warning: ${escape(UNAVAILABLE)}\nMode: none\nMode: hybrid\nAgent mode: on\ntokens: \\d+ in, \\d+ out\nSaved conversation \\S+ in \\.krypton/chat/`));
    });
  });

  it("an embedding model that is not installed (the server is up): ask says why once, not once at opening and again with the answer", async () => {
    const ollama = await startOllamaServer({ models: ["llama3.1:8b"] });
    const fresh = await makeTempVault(NOTES);
    try {
      const why = "Semantic search is unavailable (Embedding model 'nomic-embed-text' is not installed: run `ollama pull nomic-embed-text`): notes were matched by keywords only.";
      for (const question of ["what is sourdough?", "find notes about sourdough"]) {
        const r = await runCli(["ask", fresh.root, question, "--mode", "rag"], { env: { ...env, KRYPTON_OLLAMA_URL: ollama.url } });
        expect(r.code).toBe(0);
        expect(r.stdout).toContain("Cooking/Bread.md");
        expect(r.stderr).toBe(`krypton: warning: ${why}\n`);
      }
    } finally {
      await ollama.close();
      await fresh.cleanup();
    }
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
