import { AgentError } from "../../../src/core/notes/agent-error";
import { LIMITS } from "../../../src/core/notes/note-operations-impl";
import type { RecordedRequest } from "../../support/servers/scripted-server";
import { makeAgentsWorld, type AgentsWorld } from "./agent-fixtures";

async function agentError(promise: Promise<unknown>): Promise<AgentError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentError);
  return err as AgentError;
}

/** A paragraph of about `chars` characters that carries a unique marker word. */
function paragraph(marker: string, chars: number): string {
  const words: string[] = [marker];
  while (words.join(" ").length < chars) words.push("lorem ipsum dolor");
  return words.join(" ") + ".";
}

/** Answers map steps with "partial <i>" and reduce steps with "FINAL over <n> parts". */
function mapReduceReply(req: RecordedRequest): string {
  const part = /part \((\d+) of (\d+)\)/.exec(req.userText);
  if (part) return `partial ${part[1]}`;
  const combined = req.userText.match(/^Part \d+:/gm);
  if (req.userText.startsWith("Combine these summaries") && combined) return `FINAL over ${combined.length} parts`;
  return "single summary";
}

describe("NoteOperations.summarizeNote", () => {
  let world: AgentsWorld;
  afterEach(async () => {
    await world?.close();
  });

  it("summarizes a short note in one request, without its frontmatter", async () => {
    world = await makeAgentsWorld({
      openIndex: false,
      files: { "Cloud/aws.md": "---\ntitle: AWS notes\ntags: [cloud]\nsecret_field: do-not-send\n---\n# Amazon\n\nEC2 runs virtual machines.\n" },
    });
    world.ollama.script({ route: "chat", reply: "EC2 provides virtual machines." });

    const result = await world.operations.summarizeNote("Cloud/aws.md");

    expect(result).toMatchObject({
      kind: "summary",
      title: "AWS notes",
      summary: "EC2 provides virtual machines.",
      sourceFiles: ["Cloud/aws.md"],
    });
    expect(result.text).toContain("EC2 provides virtual machines.");
    const [prompt] = world.chatPrompts();
    expect(prompt).toContain('Summarize the following note titled "AWS notes".');
    expect(prompt).toContain("EC2 runs virtual machines.");
    expect(prompt).toMatch(/Summary:$/);
    expect(prompt).not.toContain("do-not-send");
    expect(world.ollama.requestsTo("chat")).toHaveLength(1);
  });

  it("summarizes a long note in parts, then combines them, instead of cutting it off", async () => {
    const markers = Array.from({ length: 12 }, (_, i) => `marker${i}x`);
    const body = markers.map((m) => paragraph(m, 1500)).join("\n\n");
    expect(body.length).toBeGreaterThan(LIMITS.summaryPartChars * 2);
    world = await makeAgentsWorld({ openIndex: false, files: { "long.md": `# Long read\n\n${body}\n` } });
    world.ollama.setDefault({ route: "chat", reply: mapReduceReply });

    const result = await world.operations.summarizeNote("long.md");

    const prompts = world.chatPrompts();
    const maps = prompts.filter((p) => /part \(\d+ of \d+\)/.test(p));
    const reduces = prompts.filter((p) => p.startsWith("Combine these summaries"));
    expect(maps.length).toBeGreaterThanOrEqual(3);
    expect(reduces).toHaveLength(1);
    expect(prompts).toHaveLength(maps.length + 1);
    // Every paragraph went into exactly one map request: nothing was cut off or sent twice.
    for (const marker of markers) expect(maps.filter((p) => p.includes(marker))).toHaveLength(1);
    for (const p of maps) expect(p.length).toBeLessThan(LIMITS.summaryPartChars + 300);
    // The reduce step saw every partial summary, in order.
    expect(reduces[0]).toContain(maps.map((_, i) => `Part ${i + 1}:\npartial ${i + 1}`).join("\n\n"));
    expect(result.summary).toBe(`FINAL over ${maps.length} parts`);
    expect(result.title).toBe("Long read");
  });

  it("combines in rounds when the partial summaries themselves are too long", async () => {
    const body = Array.from({ length: 10 }, (_, i) => paragraph(`m${i}`, 5500)).join("\n\n");
    world = await makeAgentsWorld({ openIndex: false, files: { "huge.md": body } });
    // Each partial summary is long (2,500 characters), so they cannot all go into one combine prompt.
    world.ollama.setDefault({
      route: "chat",
      reply: (req) => (/part \(\d+ of \d+\)/.test(req.userText) ? "s".repeat(2500) : `combined ${req.userText.length}`),
    });

    const result = await world.operations.summarizeNote("huge.md");

    const prompts = world.chatPrompts();
    const reduces = prompts.filter((p) => p.startsWith("Combine these summaries"));
    expect(prompts.filter((p) => /part \(\d+ of \d+\)/.test(p))).toHaveLength(10);
    expect(reduces.length).toBeGreaterThan(1);
    for (const p of reduces) expect(p.length).toBeLessThan(LIMITS.summaryPartChars + 400);
    expect(result.summary).toMatch(/^combined \d+$/);
  });

  it("still ends with one bounded prompt when the model never shortens anything", async () => {
    const body = Array.from({ length: 3 }, (_, i) => paragraph(`m${i}`, 5500)).join("\n\n");
    world = await makeAgentsWorld({ openIndex: false, files: { "verbose.md": body } });
    world.ollama.setDefault({ route: "chat", reply: (req) => (req.userText.startsWith("Combine") ? "done" : "v".repeat(7000)) });

    const result = await world.operations.summarizeNote("verbose.md");

    const reduces = world.chatPrompts().filter((p) => p.startsWith("Combine these summaries"));
    expect(reduces).toHaveLength(1);
    expect(reduces[0].length).toBeLessThan(LIMITS.summaryPartChars + 400);
    expect(result.summary).toBe("done");
  });

  it("summarizes at most LIMITS.summaryMaxParts parts of a book-length note and says how much it covers", async () => {
    // One paragraph per part (each nearly a full part), five more than the cap.
    const count = LIMITS.summaryMaxParts + 5;
    const markers = Array.from({ length: count }, (_, i) => `marker${i}x`);
    const body = markers.map((m) => paragraph(m, LIMITS.summaryPartChars - 100)).join("\n\n");
    world = await makeAgentsWorld({ openIndex: false, files: { "book.md": `# Book\n\n${body}\n` } });
    world.ollama.setDefault({ route: "chat", reply: mapReduceReply });

    const result = await world.operations.summarizeNote("book.md");

    const prompts = world.chatPrompts();
    const maps = prompts.filter((p) => /part \(\d+ of \d+\)/.test(p));
    expect(maps).toHaveLength(LIMITS.summaryMaxParts);
    expect(maps[0]).toContain(`part (1 of ${LIMITS.summaryMaxParts})`);
    // The first parts are summarized, each exactly once; the rest never reaches the model.
    for (const marker of markers.slice(0, LIMITS.summaryMaxParts)) expect(maps.filter((p) => p.includes(marker))).toHaveLength(1);
    for (const marker of markers.slice(LIMITS.summaryMaxParts)) expect(prompts.some((p) => p.includes(marker))).toBe(false);
    expect(prompts).toHaveLength(LIMITS.summaryMaxParts + 1);
    expect(result.summary).toMatch(new RegExp(`^FINAL over ${LIMITS.summaryMaxParts} parts\\n\\n_This text is too long to summarize in full`));
    expect(result.summary).toContain(`its first ${LIMITS.summaryMaxParts} of ${count} parts (about 80% of it)`);
    expect(result.text).toContain("too long to summarize in full");
  });

  it("adds no such remark when every part was summarized", async () => {
    const body = Array.from({ length: LIMITS.summaryMaxParts }, (_, i) => paragraph(`m${i}x`, LIMITS.summaryPartChars - 100)).join("\n\n");
    world = await makeAgentsWorld({ openIndex: false, files: { "exact.md": body } });
    world.ollama.setDefault({ route: "chat", reply: mapReduceReply });
    const result = await world.operations.summarizeNote("exact.md");
    expect(result.summary).toBe(`FINAL over ${LIMITS.summaryMaxParts} parts`);
  });

  it("says which note was not found, without calling the model", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    const err = await agentError(world.operations.summarizeNote("missing.md"));
    expect(err.message).toBe("Note not found: missing.md");
    expect(err.code).toBe("not-found");
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it.each([
    ["../secret.md", /'\.\.' and dot-only names are not allowed/],
    [".obsidian/workspace.md", /config folder/],
    ["canvas.canvas", /Only markdown notes/],
  ])("refuses the path %p", async (path, message) => {
    world = await makeAgentsWorld({ openIndex: false });
    const err = await agentError(world.operations.summarizeNote(path));
    expect(err.code).toBe("invalid-input");
    expect(err.message).toMatch(message);
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("says the path is missing", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    expect((await agentError(world.operations.summarizeNote(""))).message).toBe("Missing required parameter: path");
  });

  it("says there is nothing to summarize in an empty note", async () => {
    world = await makeAgentsWorld({ openIndex: false, files: { "empty.md": "---\ntags: [x]\n---\n\n" } });
    const err = await agentError(world.operations.summarizeNote("empty.md"));
    expect(err.message).toMatch(/empty\.md is empty/);
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("says no chat model is configured", async () => {
    world = await makeAgentsWorld({ openIndex: false, files: { "a.md": "text" } });
    world.model = null;
    const err = await agentError(world.operations.summarizeNote("a.md"));
    expect(err.code).toBe("no-model");
  });

  it("explains an empty answer from the model", async () => {
    world = await makeAgentsWorld({ openIndex: false, files: { "a.md": "text" } });
    world.ollama.script({ route: "chat", reply: "" });
    const err = await agentError(world.operations.summarizeNote("a.md"));
    expect(err.message).toMatch(/empty summary/);
  });
});

describe("NoteOperations.summarizeText", () => {
  let world: AgentsWorld;
  afterEach(async () => {
    await world?.close();
  });

  it("summarizes a selection", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.ollama.script({ route: "chat", reply: "Short version." });
    const result = await world.operations.summarizeText("Meeting notes", "We agreed to ship on Friday.");
    expect(result).toMatchObject({ title: "Meeting notes", summary: "Short version.", sourceFiles: [] });
    expect(world.chatPrompts()[0]).toContain("We agreed to ship on Friday.");
  });

  it("says the selection is empty", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    const err = await agentError(world.operations.summarizeText("x", "  \n "));
    expect(err.message).toBe("Nothing to summarize: the selection is empty.");
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });
});
