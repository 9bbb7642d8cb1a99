import { AgentError } from "../../../src/core/notes/agent-error";
import { mentioningTopic, mentionsTopic, significantWords, truncateWords } from "../../../src/core/notes/note-text";
import { LIMITS } from "../../../src/core/notes/note-operations-impl";
import { registerNoteTools } from "../../../src/core/tools/note-tools";
import { ToolRegistry } from "../../../src/core/tools/tool-registry";
import { makeAgentsWorld, type AgentsWorld } from "./agent-fixtures";

async function agentError(promise: Promise<unknown>): Promise<AgentError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentError);
  return err as AgentError;
}

/** The "Note: …" blocks of a topic prompt, each with its text. */
function promptBlocks(prompt: string): { header: string; text: string }[] {
  const body = prompt.slice(prompt.indexOf("\n\n") + 2, prompt.lastIndexOf("\n\nSummary:"));
  return body.split(/\n\n(?=Note: )/).map((block) => {
    const nl = block.indexOf("\n");
    return { header: block.slice(0, nl), text: block.slice(nl + 1) };
  });
}

function words(n: number, word: string): string {
  return Array.from({ length: n }, (_, i) => `${word}${i}`).join(" ");
}

describe("topic matching helpers", () => {
  it("keeps the significant words of a topic", () => {
    expect(significantWords("the History of Rome")).toEqual(["history", "rome"]);
    expect(significantWords("AI")).toEqual(["ai"]);
    expect(significantWords("the")).toEqual(["the"]);
  });

  it("matches whole words case-insensitively, and word starts for longer words", () => {
    expect(mentionsTopic("We use aws for hosting", ["aws"])).toBe(true);
    expect(mentionsTopic("Laws of physics", ["aws"])).toBe(false);
    expect(mentionsTopic("He said so", ["ai"])).toBe(false);
    expect(mentionsTopic("Networking basics", ["network"])).toBe(true);
    expect(mentionsTopic("Anything", [])).toBe(false);
  });

  it("keeps texts naming every word of the topic; only when none does, those naming at least half", () => {
    const words = significantWords("machine learning");
    const id = (t: string) => t;
    expect(mentioningTopic(["the washing machine broke", "machine learning models", "learning French"], id, words)).toEqual([
      "machine learning models",
    ]);
    expect(mentioningTopic(["the washing machine broke", "learning French", "bread"], id, words)).toEqual([
      "the washing machine broke",
      "learning French",
    ]);
    const three = significantWords("roman empire economy");
    expect(mentioningTopic(["the roman economy", "an empire", "pasta"], id, three)).toEqual(["the roman economy"]);
  });

  it("drops function words and matches inflected or unaccented forms in the supported languages", () => {
    expect(significantWords("el sueño")).toEqual(["sueño"]);
    expect(significantWords("über die Gezeiten")).toEqual(["gezeiten"]);
    expect(mentionsTopic("Los sueños y el descanso", ["sueño"])).toBe(true);
    expect(mentionsTopic("La verificación de teléfono", significantWords("verificaciones de telefono"))).toBe(true);
    expect(mentionsTopic("Новые заметки о приливе", ["приливах"])).toBe(true);
    expect(mentionsTopic("Las facturas del mes", ["sueño"])).toBe(false);
  });

  it("truncates to a number of words", () => {
    expect(truncateWords("a b c d", 2)).toBe("a b …");
    expect(truncateWords(" a b ", 2)).toBe("a b");
  });
});

describe("NoteOperations.summarizeTopic", () => {
  let world: AgentsWorld;
  afterEach(async () => {
    await world?.close();
  });

  it("retrieves 'notes about <topic>', keeps only chunks that mention it, and cites their notes", async () => {
    world = await makeAgentsWorld({
      files: {
        "Cloud/aws.md": "# AWS\n\nAWS Lambda runs code without servers.\n",
        "Cloud/hosting.md": "# Hosting\n\nWe moved the blog to aws last year.\n",
        "Notes about cooking.md": "# Notes about cooking\n\nThese notes are about pasta and sauces.\n",
        "laws.md": "# Laws\n\nNotes about laws of physics.\n",
      },
    });
    world.ollama.script({ route: "chat", reply: "You use AWS Lambda and host the blog there." });

    const result = await world.operations.summarizeTopic("AWS");

    expect(result).toMatchObject({ kind: "summary", title: "AWS", summary: "You use AWS Lambda and host the blog there." });
    expect([...result.sourceFiles].sort()).toEqual(["Cloud/aws.md", "Cloud/hosting.md"]);
    const [prompt] = world.chatPrompts();
    expect(prompt.startsWith("Summarize the following notes about AWS.\n\n")).toBe(true);
    expect(prompt.endsWith("\n\nSummary:")).toBe(true);
    expect(prompt).toContain("AWS Lambda runs code without servers.");
    expect(prompt).toContain("We moved the blog to aws last year.");
    expect(prompt).not.toContain("pasta");
    expect(prompt).not.toContain("physics");
    expect(result.text).toContain("[[Cloud/aws]]");
  });

  it("a topic of several words keeps the chunks that name all of them", async () => {
    world = await makeAgentsWorld({
      files: {
        "ml.md": "# Machine learning\n\nMachine learning models learn patterns from data.\n",
        "washer.md": "# Washer\n\nThe washing machine needs a new belt.\n",
        "french.md": "# French\n\nLearning French with flash cards.\n",
      },
    });
    world.ollama.script({ route: "chat", reply: "Models learn from data." });

    const result = await world.operations.summarizeTopic("machine learning");

    expect(result.sourceFiles).toEqual(["ml.md"]);
    const [prompt] = world.chatPrompts();
    expect(prompt).toContain("Machine learning models learn patterns from data.");
    expect(prompt).not.toContain("belt");
    expect(prompt).not.toContain("flash cards");
  });

  it("keeps at most 6 chunks, each cut to 800 words", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 10; i++) files[`kafka-${i}.md`] = `# Kafka ${i}\n\nkafka topic ${i} ${words(1000, `w${i}x`)}\n`;
    world = await makeAgentsWorld({ files, settings: { chunkMaxChars: 100_000 } });
    world.ollama.script({ route: "chat", reply: "Kafka everywhere." });

    const result = await world.operations.summarizeTopic("kafka");

    const blocks = promptBlocks(world.chatPrompts()[0]);
    expect(blocks).toHaveLength(LIMITS.topicChunks);
    expect(LIMITS.topicChunks).toBe(6);
    for (const block of blocks) {
      const count = block.text.trim().split(/\s+/).length;
      expect(count).toBeLessThanOrEqual(LIMITS.topicChunkWords + 1); // + the "…" that marks the cut
      expect(count).toBeGreaterThan(LIMITS.topicChunkWords - 50);
      expect(block.text.trim().endsWith("…")).toBe(true);
    }
    expect(LIMITS.topicChunkWords).toBe(800);
    expect(result.sourceFiles).toHaveLength(6);
  });

  it("excerpts too long for the model's window are shortened with a marker, and the summary says so", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 10; i++) files[`kafka-${i}.md`] = `# Kafka ${i}\n\nkafka topic ${i} ${words(1000, `w${i}x`)}\n`;
    world = await makeAgentsWorld({ files, settings: { chunkMaxChars: 100_000 } });
    // Six excerpts of 800 words (~11k tokens) do not fit this model's 8,192 tokens.
    world.ollama.modelInfo["llama3.1:8b"] = { capabilities: ["completion", "tools"], contextLength: 8192 };
    world.ollama.script({ route: "chat", reply: "Kafka everywhere." });

    const result = await world.operations.summarizeTopic("kafka");

    const [prompt] = world.chatPrompts();
    expect(prompt).toMatch(/\[… [\d,]+ of [\d,]+ characters cut here by Krypton to fit the model's context window …\]\n\n\nSummary:$/);
    expect(prompt.startsWith("Summarize the following notes about kafka.\n\nNote: ")).toBe(true);
    const notice = "To fit llama3.1:8b's context window (8,192 tokens), this summary shortened the excerpts given with the question.";
    expect(result).toMatchObject({ summary: "Kafka everywhere.", fitted: notice });
    expect(result.text.endsWith(`\n\n_${notice}_`)).toBe(true);

    // summarize_notes (MCP, agent mode) says it too: in its text and as a field.
    const tools = new ToolRegistry();
    registerNoteTools(tools, { operations: world.operations, vault: world.host.vault, vaultRoot: world.vault.root });
    world.ollama.script({ route: "chat", reply: "Kafka everywhere." });
    const tool = await tools.call("summarize_notes", { mode: "topic", topic: "kafka" });
    expect(tool.structured).toMatchObject({ summary: "Kafka everywhere.", fitted: notice });
    expect(tool.text.endsWith(`\n\n${notice}`)).toBe(true);
  });

  it("says no notes match when nothing mentions the topic, without calling the model", async () => {
    world = await makeAgentsWorld({ files: { "a.md": "# A\n\nNotes about gardening.\n" } });
    const err = await agentError(world.operations.summarizeTopic("blockchain"));
    expect(err.message).toBe("No notes match 'blockchain'");
    expect(err.code).toBe("not-found");
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("says the topic is missing", async () => {
    world = await makeAgentsWorld({ files: { "a.md": "x" } });
    expect((await agentError(world.operations.summarizeTopic(" "))).message).toBe("Missing required parameter: topic");
  });

  it("says no chat model is configured", async () => {
    world = await makeAgentsWorld({ files: { "a.md": "aws" } });
    world.model = null;
    expect((await agentError(world.operations.summarizeTopic("aws"))).code).toBe("no-model");
  });

  it("says the index is not ready", async () => {
    world = await makeAgentsWorld({ files: { "a.md": "aws" }, openIndex: false });
    const err = await agentError(world.operations.summarizeTopic("aws"));
    expect(err.code).toBe("index-not-ready");
    expect(err.message).toMatch(/index is not ready/);
  });
});

describe("NoteOperations.searchNotes", () => {
  let world: AgentsWorld;
  afterEach(async () => {
    await world?.close();
  });

  it("finds notes through the hybrid search, one entry per note", async () => {
    world = await makeAgentsWorld({
      files: {
        "Cloud/aws.md": "# AWS\n\nAWS Lambda runs code.\n\n## S3\n\nAWS S3 stores objects.\n",
        "food.md": "# Food\n\nPasta and sauces.\n",
      },
    });
    const result = await world.operations.searchNotes("AWS", { limit: 5 });
    expect(result.hits[0]).toMatchObject({ path: "Cloud/aws.md", title: "AWS", folder: "Cloud" });
    expect(result.hits.filter((h) => h.path === "Cloud/aws.md")).toHaveLength(1);
    expect(result.hits.length).toBeLessThanOrEqual(5);
    expect(result.text).toMatch(/^Found \d+ notes? for "AWS":/);
  });

  it("says the query is missing", async () => {
    world = await makeAgentsWorld({ files: { "a.md": "x" } });
    expect((await agentError(world.operations.searchNotes(""))).message).toBe("Missing required parameter: query");
  });

  it("says the index is not ready", async () => {
    world = await makeAgentsWorld({ files: { "a.md": "x" }, openIndex: false });
    expect((await agentError(world.operations.searchNotes("x"))).code).toBe("index-not-ready");
  });
});
