import { makeAgentsWorld, routeMessage, type AgentsWorld } from "./agent-fixtures";

const NOTES = {
  "Cloud/aws.md": "# AWS\n\nAWS Lambda runs functions without servers. S3 stores objects in buckets.\n",
  "Cloud/azure.md": "# Azure\n\nAzure Functions are the Microsoft take on serverless.\n",
  "Kitchen/bread.md": "# Bread\n\nSourdough needs a starter, flour, water and salt.\n",
  "today.md": "# Today\n\nBuy milk. Call the plumber about the leaking tap.\n",
};

describe("agents: routing and fall-through", () => {
  let world: AgentsWorld;
  afterEach(async () => {
    await world?.close();
  });

  it("are tried in a fixed order: create, search, summarize", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    expect(world.agents.map((a) => a.name)).toEqual(["create-note", "search-notes", "summarize"]);
  });

  it.each([
    "what is the capital of France?",
    "how do I create a note in Obsidian?",
    "can you write a note template?",
    "explain AWS Lambda in two sentences",
    "summarize this note in French",
  ])("leave ordinary chat to the ChatService: %p", async (message) => {
    world = await makeAgentsWorld({ files: NOTES });
    const { result, calls } = await routeMessage(world, message, { activeNotePath: "today.md" });
    expect(result).toBeNull();
    expect(calls).toEqual(["create-note", "search-notes", "summarize"]);
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
    expect(await world.vault.exists("Krypton")).toBe(false);
  });

  describe("create", () => {
    it("creates the note and returns path, title and preview", async () => {
      world = await makeAgentsWorld({ openIndex: false });
      world.ollama.script({ route: "chat", reply: "# Machine Learning Basics\n\nModels learn from data." });
      const { result, agent } = await routeMessage(world, "Create a note on machine learning basics");
      expect(agent).toBe("create-note");
      expect(result).toMatchObject({
        kind: "note-created",
        agent: "create-note",
        path: "Krypton/machine-learning-basics.md",
        title: "Machine Learning Basics",
        preview: "Models learn from data.",
      });
      expect(result?.text).toContain("Krypton/machine-learning-basics.md");
    });

    it("explains a missing chat model instead of falling through", async () => {
      world = await makeAgentsWorld({ openIndex: false });
      world.model = null;
      const { result, agent } = await routeMessage(world, "write a note about tides");
      expect(agent).toBe("create-note");
      expect(result).toEqual({ kind: "message", agent: "create-note", text: expect.stringMatching(/No chat model is configured/), failed: "no-model" });
    });

    it("explains a model failure", async () => {
      world = await makeAgentsWorld({ openIndex: false });
      world.ollama.models = [];
      const { result } = await routeMessage(world, "write a note about tides");
      expect(result).toMatchObject({ kind: "message", text: expect.stringMatching(/^Could not generate the note/) });
    });

    it("stops when the user stops: the abort propagates, nothing is written", async () => {
      world = await makeAgentsWorld({ openIndex: false });
      world.ollama.script({ route: "chat", stall: true });
      const controller = new AbortController();
      const pending = routeMessage(world, "create a note on tides", { signal: controller.signal });
      while (world.ollama.requestsTo("chat").length === 0) await new Promise((r) => setTimeout(r, 5));
      controller.abort();
      await expect(pending).rejects.toMatchObject({ name: expect.stringMatching(/AbortError|ProviderError/) });
      expect(await world.vault.exists("Krypton")).toBe(false);
    });
  });

  describe("search", () => {
    it("returns title, folder, snippet and score per note", async () => {
      world = await makeAgentsWorld({ files: NOTES });
      const { result, agent } = await routeMessage(world, "find notes about AWS Lambda");
      expect(agent).toBe("search-notes");
      if (result?.kind !== "search-results") throw new Error(`unexpected ${JSON.stringify(result)}`);
      expect(result.query).toBe("AWS Lambda");
      expect(result.hits[0]).toMatchObject({ path: "Cloud/aws.md", title: "AWS", folder: "Cloud" });
      expect(result.hits[0].snippet).toMatch(/Lambda/);
      expect(result.hits[0].score).toBeGreaterThan(0);
      for (let i = 1; i < result.hits.length; i++) expect(result.hits[i - 1].score).toBeGreaterThanOrEqual(result.hits[i].score);
      expect(result.text).toContain("[[Cloud/aws|AWS]]");
      expect(world.ollama.requestsTo("chat")).toHaveLength(0);
    });

    it("says the index is not ready before it is opened", async () => {
      world = await makeAgentsWorld({ files: NOTES, openIndex: false });
      const { result, agent } = await routeMessage(world, "search my notes for bread");
      expect(agent).toBe("search-notes");
      expect(result).toMatchObject({ kind: "message", text: expect.stringMatching(/index is not ready/) });
    });

    it("says when no note matches", async () => {
      world = await makeAgentsWorld({ files: NOTES });
      const { result } = await routeMessage(world, "which notes talk about xylophone?");
      expect(result).toEqual({ kind: "message", agent: "search-notes", text: "No notes match 'xylophone'", failed: "not-found" });
    });
  });

  describe("summarize", () => {
    it("summarizes the active note", async () => {
      world = await makeAgentsWorld({ files: NOTES, openIndex: false });
      world.ollama.script({ route: "chat", reply: "Errands: milk and plumber." });
      const { result, agent } = await routeMessage(world, "what is this note about?", { activeNotePath: "today.md" });
      expect(agent).toBe("summarize");
      expect(result).toMatchObject({ kind: "summary", title: "Today", summary: "Errands: milk and plumber.", sourceFiles: ["today.md"] });
      expect(world.chatPrompts()[0]).toContain("Call the plumber");
    });

    it("asks to open a note when none is active", async () => {
      world = await makeAgentsWorld({ openIndex: false });
      const { result } = await routeMessage(world, "summarize this note");
      expect(result).toEqual({ kind: "message", agent: "summarize", text: "Open a note first: there is no active note to summarize.", failed: "no-active-note" });
      expect(world.ollama.requestsTo("chat")).toHaveLength(0);
    });

    it("says when the active note no longer exists", async () => {
      world = await makeAgentsWorld({ openIndex: false });
      const { result } = await routeMessage(world, "give me a summary of this note", { activeNotePath: "gone.md" });
      expect(result).toMatchObject({ kind: "message", text: "Note not found: gone.md" });
    });

    it("summarizes a topic with its source notes", async () => {
      world = await makeAgentsWorld({ files: NOTES });
      world.ollama.script({ route: "chat", reply: "Your notes cover Lambda and S3." });
      const { result, agent } = await routeMessage(world, "what do my notes say about AWS?");
      expect(agent).toBe("summarize");
      expect(result).toMatchObject({ kind: "summary", title: "AWS", summary: "Your notes cover Lambda and S3.", sourceFiles: ["Cloud/aws.md"] });
      expect(result?.text).toContain("[[Cloud/aws]]");
    });

    it("says when no note mentions the topic", async () => {
      world = await makeAgentsWorld({ files: NOTES });
      const { result } = await routeMessage(world, "summarize my notes on quantum chromodynamics");
      expect(result).toEqual({ kind: "message", agent: "summarize", text: "No notes match 'quantum chromodynamics'", failed: "not-found" });
      expect(world.ollama.requestsTo("chat")).toHaveLength(0);
    });

    it("says the index is not ready for a topic summary", async () => {
      world = await makeAgentsWorld({ files: NOTES, openIndex: false });
      const { result } = await routeMessage(world, "summarize my notes about bread");
      expect(result).toMatchObject({ kind: "message", text: expect.stringMatching(/index is not ready/) });
    });
  });
});
