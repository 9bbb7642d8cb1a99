import { promises as fs } from "node:fs";
import { join } from "node:path";
import { AgentError } from "../../../src/core/notes/agent-error";
import type { VaultPort } from "../../../src/core/ports/vault";
import { VaultIndex } from "../../../src/core/indexing/vault-index";
import { HashEmbedder } from "../../support/hash-embedder";
import { snapshotFiles } from "../../support/temp-vault";
import { makeAgentsWorld, type AgentsWorld } from "./agent-fixtures";

const GENERATED = [
  "# Machine Learning Basics",
  "",
  "Machine learning lets computers learn patterns from data instead of following fixed rules.",
  "",
  "## Kinds",
  "- Supervised learning",
  "- Unsupervised learning",
].join("\n");

async function expectAgentError(promise: Promise<unknown>, code: AgentError["code"], message: RegExp | string) {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentError);
  expect((err as AgentError).code).toBe(code);
  if (typeof message === "string") expect((err as AgentError).message).toBe(message);
  else expect((err as AgentError).message).toMatch(message);
}

describe("NoteOperations.createNote", () => {
  let world: AgentsWorld;
  afterEach(async () => {
    await world?.close();
  });

  it("generates a note with the chat model and saves it under a slug of the topic", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.ollama.script({ route: "chat", reply: GENERATED });

    const result = await world.operations.createNote("machine learning basics");

    expect(result.path).toBe("Krypton/machine-learning-basics.md");
    expect(result.title).toBe("Machine Learning Basics");
    expect(result.preview).toMatch(/^Machine learning lets computers learn/);
    expect(result.preview.length).toBeLessThanOrEqual(201);
    expect(result.kind).toBe("note-created");
    expect(result.text).toContain("[[Krypton/machine-learning-basics|Machine Learning Basics]]");
    expect(await world.vault.read("Krypton/machine-learning-basics.md")).toBe(`${GENERATED}\n`);
    const prompt = world.chatPrompts()[0];
    expect(prompt).toContain("Write a short markdown note about: machine learning basics");
    expect(world.ollama.requestsTo("chat")).toHaveLength(1);
  });

  it("uses the topic as the title when the model writes no H1, and cleans fences and reasoning blocks", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.ollama.script({ route: "chat", reply: "<think>plan the note</think>\n```markdown\n## Overview\nTides are caused by the moon.\n```" });

    const result = await world.operations.createNote("Ocean tides");

    expect(result.title).toBe("Ocean tides");
    expect(result.path).toBe("Krypton/ocean-tides.md");
    expect(await world.vault.read("Krypton/ocean-tides.md")).toBe("## Overview\nTides are caused by the moon.\n");
  });

  it("a refusal is not saved: one repair request, then a clear error, and the vault is unchanged", async () => {
    world = await makeAgentsWorld({ files: { "other.md": "mine" }, openIndex: false });
    const before = await snapshotFiles(world.vault.root);
    world.ollama.script({ route: "chat", reply: "I'm sorry, but I can't help with writing that note." });
    world.ollama.script({ route: "chat", reply: "Lo siento, no puedo ayudar con eso." });

    await expectAgentError(
      world.operations.createNote("lock picking"),
      "failed",
      "No note was saved: the model answered “Lo siento, no puedo ayudar con eso.” instead of writing a note.",
    );

    expect(await snapshotFiles(world.vault.root)).toEqual(before);
    const chats = world.ollama.requestsTo("chat");
    expect(chats).toHaveLength(2);
    const repair = (chats[1].body as { messages: { role: string; content: string }[] }).messages;
    expect(repair.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(repair[1].content).toBe("I'm sorry, but I can't help with writing that note.");
    expect(repair[2].content).toMatch(/^That was not a note \(the model answered “I'm sorry/);
    expect(repair[2].content).toContain('start with a "# " title line');
  });

  it("an answer that is not a note, then a note after the repair request: the note is saved", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.ollama.script({ route: "chat", reply: "Sure! What would you like the note to cover?" });
    world.ollama.script({ route: "chat", reply: GENERATED });

    const result = await world.operations.createNote("machine learning basics");

    expect(await world.vault.read(result.path)).toBe(`${GENERATED}\n`);
    expect(world.ollama.requestsTo("chat")).toHaveLength(2);
  });

  it("drops a chat lead-in before the title line, and keeps a long answer without headings", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.ollama.script({ route: "chat", reply: `Sure! Here is a short note:\n\n${GENERATED}` });
    const led = await world.operations.createNote("machine learning basics");
    expect(await world.vault.read(led.path)).toBe(`${GENERATED}\n`);
    expect(led.title).toBe("Machine Learning Basics");

    const plain = `${"Tides rise and fall twice a day because the moon pulls on the oceans. ".repeat(6).trim()}`;
    world.ollama.script({ route: "chat", reply: plain });
    const prose = await world.operations.createNote("tides");
    expect(await world.vault.read(prose.path)).toBe(`${plain}\n`);
    expect(world.ollama.requestsTo("chat")).toHaveLength(2);
  });

  it("keeps a short poem without headings (a haiku) at once; a refusal on three lines is still not saved", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    const haiku = "An old silent pond\nA frog jumps into the pond—\nSplash! Silence again.";
    world.ollama.script({ route: "chat", reply: haiku });
    const kept = await world.operations.createNote("a haiku about a frog");
    expect(await world.vault.read(kept.path)).toBe(`${haiku}\n`);
    expect(world.ollama.requestsTo("chat")).toHaveLength(1);

    const before = await snapshotFiles(world.vault.root);
    const refusal = "I'm sorry.\nI can't write that note.\nCan I help with something else?";
    world.ollama.script({ route: "chat", reply: refusal, times: 2 });
    await expectAgentError(world.operations.createNote("lock picking"), "failed", `No note was saved: the model answered “${refusal.replace(/\n/g, " ")}” instead of writing a note.`);
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });

  it("keeps a short note that simply states something (\"Buy milk.\"), in any language; a short refusal or question back is still not saved", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    const notes = ["Buy milk.", "Call the dentist on Friday.", "Comprar leche.", "Milch kaufen.", "Купить молоко.", "牛乳を買う。", "买牛奶。", "우유 사기."];
    for (const [i, note] of notes.entries()) {
      world.ollama.script({ route: "chat", reply: note });
      const kept = await world.operations.createNote(`errand ${i}`);
      expect(await world.vault.read(kept.path)).toBe(`${note}\n`);
    }
    expect(world.ollama.requestsTo("chat")).toHaveLength(notes.length);

    const before = await snapshotFiles(world.vault.root);
    const replies = [
      "I can't help with that.",
      "As an AI, I don't keep shopping lists.",
      "Sorry, I cannot do that.",
      "I’m unable to write that note.",
      "What should the note say?",
      "Désolé, je ne peux pas vous aider.",
      "Es tut mir leid, dabei kann ich nicht helfen.",
      "Desculpe, não posso ajudar com isso.",
      "Mi dispiace, non posso aiutarti.",
      "Извините, я не могу помочь с этим.",
      "抱歉，我无法帮助你。",
      "죄송하지만 도와드릴 수 없습니다.",
    ];
    for (const reply of replies) {
      world.ollama.script({ route: "chat", reply, times: 2 });
      await expectAgentError(world.operations.createNote("lock picking"), "failed", `No note was saved: the model answered “${reply}” instead of writing a note.`);
    }
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });

  it("counts a CJK character as a few letters: a short Japanese note without headings is kept, a Japanese refusal is not", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    // 150 characters: a paragraph in Japanese, which counted letter by letter would look like a one-line reply.
    const japanese = "潮の満ち引きは、主に月の引力によって起こる。地球の月に面した側と、その反対側で海面が盛り上がり、一日に二回の満潮と二回の干潮が生じる。太陽の引力も影響し、新月と満月の頃には大潮、半月の頃には小潮となる。".repeat(2);
    expect(japanese.length).toBeLessThan(400);
    world.ollama.script({ route: "chat", reply: japanese });
    const kept = await world.operations.createNote("潮の満ち引き");
    expect(await world.vault.read(kept.path)).toBe(`${japanese}\n`);
    expect(world.ollama.requestsTo("chat")).toHaveLength(1);

    const before = await snapshotFiles(world.vault.root);
    world.ollama.script({ route: "chat", reply: "申し訳ありませんが、そのリクエストにはお応えできません。" });
    world.ollama.script({ route: "chat", reply: "申し訳ありませんが、お手伝いできません。" });
    await expectAgentError(world.operations.createNote("錠前破り"), "failed", "No note was saved: the model answered “申し訳ありませんが、お手伝いできません。” instead of writing a note.");
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });

  it("keeps what the note says before its first heading when that is not a chat lead-in: frontmatter, an intro before a section", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    const withFrontmatter = `---\ntags: [ml, basics]\n---\n${GENERATED}`;
    world.ollama.script({ route: "chat", reply: withFrontmatter });
    const fm = await world.operations.createNote("machine learning basics");
    expect(await world.vault.read(fm.path)).toBe(`${withFrontmatter}\n`);

    // No "# " title: the first heading is a section, and the paragraph above it is the note's own intro.
    const intro = "Tides are the daily rise and fall of the sea.\n\n## Causes\nThe moon pulls on the oceans.";
    world.ollama.script({ route: "chat", reply: intro });
    const tides = await world.operations.createNote("tides");
    expect(await world.vault.read(tides.path)).toBe(`${intro}\n`);
    expect(world.ollama.requestsTo("chat")).toHaveLength(2);
  });

  // On a disk that ignores case (macOS, Windows) the setting's "Krypton" is the folder "krypton", empty or not:
  // Obsidian, which knows it only by that spelling, fails to create "Krypton" again.
  it("a new note goes into the new-note folder as the vault spells it, an empty one too", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    await fs.mkdir(join(world.vault.root, "krypton"));
    world.ollama.script({ route: "chat", reply: "# X\n\nbody" });
    world.ollama.script({ route: "chat", reply: "# X\n\nagain" });
    expect((await world.operations.createNote("x")).path).toBe("krypton/x.md");
    expect((await world.operations.createNote("x")).path).toBe("krypton/x-1.md");
    expect(await fs.readdir(world.vault.root)).not.toContain("Krypton");
    expect((await fs.readdir(join(world.vault.root, "krypton"))).sort()).toEqual(["x-1.md", "x.md"]);
  });

  it("never overwrites: x.md and x-1.md exist → x-2.md, existing files byte-identical", async () => {
    const existing = { "Krypton/x.md": "# X\n\nmine, keep me\n", "Krypton/x-1.md": "second\r\nwith CRLF\r\n", "other.md": "untouched" };
    world = await makeAgentsWorld({ files: existing, openIndex: false });
    const before = await snapshotFiles(world.vault.root);
    world.ollama.script({ route: "chat", reply: "# X\n\nnew content" });

    const result = await world.operations.createNote("x");

    expect(result.path).toBe("Krypton/x-2.md");
    const after = await snapshotFiles(world.vault.root);
    expect(after).toEqual({ ...before, "Krypton/x-2.md": "# X\n\nnew content\n" });
  });

  it("takes the next suffix when a file appears between the check and the write (race)", async () => {
    const attempts: string[] = [];
    // exists() that always says "free", as if another process created the files right after the check:
    // the real FsVault.createNote then refuses with NoteExistsError.
    const racing = (inner: VaultPort): VaultPort => ({
      listNotes: () => inner.listNotes(),
      listFolders: (p) => inner.listFolders(p),
      readNote: (p) => inner.readNote(p),
      appendToNote: (p, t, e) => inner.appendToNote(p, t, e),
      processNote: (p, f, e) => inner.processNote(p, f, e),
      exists: async () => false,
      createNote: async (p, c) => {
        attempts.push(p);
        await inner.createNote(p, c);
      },
      readConfigFile: (p) => inner.readConfigFile(p),
      onChange: (l) => inner.onChange(l),
      configDir: inner.configDir,
    });
    world = await makeAgentsWorld({ files: { "Krypton/x.md": "a", "Krypton/x-1.md": "b" }, wrapVault: racing, openIndex: false });
    world.ollama.script({ route: "chat", reply: "# X\n\nbody" });

    const result = await world.operations.createNote("x");

    expect(attempts).toEqual(["Krypton/x.md", "Krypton/x-1.md", "Krypton/x-2.md"]);
    expect(result.path).toBe("Krypton/x-2.md");
    expect(await world.vault.read("Krypton/x.md")).toBe("a");
    expect(await world.vault.read("Krypton/x-1.md")).toBe("b");
  });

  it("three concurrent creations on the same topic get three files; the user's note stays untouched", async () => {
    world = await makeAgentsWorld({ files: { "Krypton/x.md": "mine" }, openIndex: false });
    let n = 0;
    world.ollama.setDefault({ route: "chat", reply: () => `# X\n\nversion ${++n}` });

    const results = await Promise.all([1, 2, 3].map(() => world.operations.createNote("x")));

    expect(results.map((r) => r.path).sort()).toEqual(["Krypton/x-1.md", "Krypton/x-2.md", "Krypton/x-3.md"]);
    const contents = await Promise.all(results.map((r) => world.vault.read(r.path)));
    expect(new Set(contents).size).toBe(3);
    expect(await world.vault.read("Krypton/x.md")).toBe("mine");
  });

  it("the created note is in the index when createNote returns, though FsVault emits no events (CLI, MCP)", async () => {
    world = await makeAgentsWorld({ files: { "other.md": "# Other\n\nNothing about the sea." } });
    let events = 0;
    world.host.vault.onChange(() => events++);
    world.ollama.script({ route: "chat", reply: "# Tide pools\n\nTide pools shelter anemones and crabs at low water." });

    const created = await world.operations.createNote("tide pools");

    expect(events).toBe(0); // nothing watches the folder: the index learns of the note from NoteOperations
    expect((await world.index.chunksOf(created.path)).length).toBeGreaterThan(0);
    const found = await world.operations.searchNotes("anemones");
    expect(found.hits.map((h) => h.path)).toEqual([created.path]);
  });

  it("while the index is not ready the note only queues: creating never waits behind a (re)index", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    const handleEvent = jest.spyOn(world.index, "handleEvent");
    const idle = jest.spyOn(world.index, "idle");
    world.ollama.script({ route: "chat", reply: "# Tides\n\nThe moon pulls the sea." });

    const created = await world.operations.createNote("tides");

    expect(handleEvent).toHaveBeenCalledWith({ type: "create", path: created.path });
    expect(idle).not.toHaveBeenCalled();
    await world.index.open();
    expect((await world.index.chunksOf(created.path)).length).toBeGreaterThan(0);
  });

  it("a one-shot run that closes right after creating a note has saved it with the index", async () => {
    world = await makeAgentsWorld({ files: { "other.md": "# Other\n\nNothing about the sea." } });
    world.ollama.script({ route: "chat", reply: "# Tide pools\n\nTide pools shelter anemones and crabs at low water." });
    const created = await world.operations.createNote("tide pools");
    await world.index.close();

    // The next process: the saved index already has the note's chunks and vectors, nothing is re-embedded.
    const embedder = new HashEmbedder({ dim: 256 });
    const next = new VaultIndex({ host: world.host, settings: () => world.settings, embedder: () => embedder });
    try {
      await next.open();
      await next.idle();
      expect(embedder.texts).toEqual([]);
      expect((await next.searchNotes("anemones")).map((h) => h.path)).toEqual([created.path]);
    } finally {
      await next.close();
    }
  });

  it("does not retry other write failures: they become a plain AgentError", async () => {
    const broken = (inner: VaultPort): VaultPort => ({
      ...inner,
      listNotes: () => inner.listNotes(),
      listFolders: (p) => inner.listFolders(p),
      readNote: (p) => inner.readNote(p),
      exists: (p) => inner.exists(p),
      readConfigFile: (p) => inner.readConfigFile(p),
      onChange: (l) => inner.onChange(l),
      configDir: inner.configDir,
      createNote: async () => {
        throw new Error("EACCES: permission denied");
      },
    });
    world = await makeAgentsWorld({ wrapVault: broken, openIndex: false });
    world.ollama.script({ route: "chat", reply: "# Y" });
    await expectAgentError(world.operations.createNote("y"), "failed", "Could not save the note at Krypton/y.md: EACCES: permission denied");
  });

  it("saves in the given folder, normalized", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.ollama.script({ route: "chat", reply: "# Rust\n\nOwnership." });
    const result = await world.operations.createNote("Rust ownership", { folder: "/Projects\\Code//" });
    expect(result.path).toBe("Projects/Code/rust-ownership.md");
    expect(await world.vault.exists("Projects/Code/rust-ownership.md")).toBe(true);
  });

  it("saves at the vault root when the folder setting is empty", async () => {
    world = await makeAgentsWorld({ openIndex: false, settings: { newNoteFolder: "" } });
    world.ollama.script({ route: "chat", reply: "# Café" });
    const result = await world.operations.createNote("Café Münster");
    expect(result.path).toBe("cafe-munster.md");
  });

  it("keeps letters of any script in the file name", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.ollama.script({ route: "chat", reply: "# 東京" });
    const result = await world.operations.createNote("東京 旅行");
    expect(result.path).toBe("Krypton/東京-旅行.md");
  });

  it.each([
    ["../outside", /'\.\.' and dot-only names are not allowed in the folder/],
    ["Notes/../../etc", /'\.\.' and dot-only names are not allowed/],
    [".obsidian", /config folder \(\.obsidian\) is off limits/],
    [".krypton/notes", /\.krypton holds Krypton's index and is off limits/],
    [".git", /Hidden files and folders/],
    ["C:/Users/me", /Absolute paths are not accepted/],
    ["Notes/a:b", /character notes cannot have/],
  ])("refuses the folder %p before calling the model", async (folder, message) => {
    world = await makeAgentsWorld({ openIndex: false });
    const before = await snapshotFiles(world.vault.root);
    await expectAgentError(world.operations.createNote("x", { folder }), "invalid-input", message);
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });

  it("refuses a renamed config folder too", async () => {
    world = await makeAgentsWorld({ openIndex: false, configDir: "Config" });
    await expectAgentError(world.operations.createNote("x", { folder: "config/plugins" }), "invalid-input", /The config folder \(Config\) is off limits/);
    expect(await world.vault.exists("config")).toBe(false);
  });

  it("says the topic is missing", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    await expectAgentError(world.operations.createNote("   "), "invalid-input", "Missing required parameter: topic");
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("says no chat model is configured, and writes nothing", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.model = null;
    const before = await snapshotFiles(world.vault.root);
    await expectAgentError(world.operations.createNote("x"), "no-model", /No chat model is configured/);
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });

  it("explains a model failure in plain words and writes nothing", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.ollama.models = ["nomic-embed-text:latest"]; // the chat model was removed: Ollama answers 404
    const before = await snapshotFiles(world.vault.root);
    await expectAgentError(world.operations.createNote("x"), "failed", /^Could not generate the note: .*llama3\.1:8b/);
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });

  it("explains an unreachable Ollama and writes nothing", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    await world.ollama.close();
    await expectAgentError(world.operations.createNote("x"), "failed", /^Could not generate the note: Ollama is not reachable/);
    expect(await world.vault.exists("Krypton")).toBe(false);
  });

  it("saves nothing when the answer was cut off at the length limit (done_reason \"length\"), and says so", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.ollama.script({ route: "chat", reply: "# Machine Learning\n\nMachine learning lets computers", extra: { doneReason: "length" } });
    const before = await snapshotFiles(world.vault.root);
    await expectAgentError(world.operations.createNote("machine learning"), "failed", /^Could not generate the note: .*cut off/);
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });

  it("a model stuck in a loop is cut at the note's budget (num_predict on the wire), says so, and saves nothing", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    // The scripted model repeats its line until num_predict (without it: until num_ctx), then done_reason "length".
    world.ollama.script({ route: "chat", reply: "", extra: { loop: "All work and no play. " } });
    const before = await snapshotFiles(world.vault.root);
    await expectAgentError(
      world.operations.createNote("machine learning"),
      "failed",
      "Could not generate the note: the answer was cut off at the length limit Krypton sets for it (3,072 tokens), often a sign of a model repeating itself, so it was not used.",
    );
    const [request] = world.ollama.requestsTo("chat");
    // The prompt is short: its 3,072 tokens of answer still fit the smallest window.
    expect((request.body as { options: Record<string, number> }).options).toMatchObject({ num_predict: 3072, num_ctx: 4096 });
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });

  it("a reasoning model that spends the note's budget and its room thinking: the error says so, not that it repeated itself", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.ollama.modelInfo["llama3.1:8b"] = { capabilities: ["completion", "tools", "thinking"] };
    // The server counts thinking against num_predict (3,072 + 2,048 of room): it never reaches the note.
    world.ollama.script({ route: "chat", reply: "# Machine learning\n\nComputers learn.", extra: { thinking: "Let me consider. ".repeat(2_000) } });
    const before = await snapshotFiles(world.vault.root);
    await expectAgentError(
      world.operations.createNote("machine learning"),
      "failed",
      "Could not generate the note: the model spent the length limit Krypton sets for the answer (5,120 tokens) thinking and was cut off before it finished answering, so its answer was not used. Try again, or use a model that thinks less or not at all.",
    );
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });

  it("saves nothing when the model answers with nothing", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    world.ollama.script({ route: "chat", reply: "  <think>hmm</think>  " });
    const before = await snapshotFiles(world.vault.root);
    await expectAgentError(world.operations.createNote("x"), "failed", /empty note/);
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });
});
