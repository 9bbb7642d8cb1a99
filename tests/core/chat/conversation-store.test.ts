/** Conversations on real files under a temp vault's .krypton/chat/. */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { ConversationStore, NEW_CONVERSATION_TITLE, titleFrom } from "../../../src/core/chat/conversation-store";
import type { StoredMessage } from "../../../src/core/chat/conversation-types";
import { clockFromTimers } from "../../../src/core/ports/clock";
import { silentLogger } from "../../../src/core/ports/logger";
import { FsDataDir, dataDirOf } from "../../../src/node/fs-data-dir";
import { makeTempVault, type TempVault } from "../../support/temp-vault";

let vault: TempVault;
let time = 1_700_000_000_000;
const clock = clockFromTimers(
  () => (time += 1000),
  (fn, ms) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
);
const chatDir = () => join(dataDirOf(vault.root), "chat");
const open = () => new ConversationStore(new FsDataDir(dataDirOf(vault.root)), clock, silentLogger);
const msg = (id: string, role: "user" | "assistant", content: string, extra: Partial<StoredMessage> = {}): StoredMessage => ({
  id,
  role,
  content,
  createdAt: time,
  ...extra,
});

beforeEach(async () => {
  vault = await makeTempVault({ "Note.md": "# Note\n" });
});
afterEach(() => vault.cleanup());

describe("ConversationStore", () => {
  it("round-trips conversations through the files, across a restart", async () => {
    const store = open();
    const c = await store.create();
    expect(c.title).toBe(NEW_CONVERSATION_TITLE);
    await store.put(c.id, msg("m1", "user", "How do I set up Ollama?\nDetails follow"));
    await store.put(c.id, msg("m2", "assistant", "Install it [1].", { sources: [{ n: 1, kind: "web", title: "Ollama", url: "https://ollama.com", snippet: "s" }], mode: "web" }));

    const again = open();
    const loaded = await again.get(c.id);
    expect(loaded?.title).toBe("How do I set up Ollama?");
    expect(loaded?.messages.map((m) => m.id)).toEqual(["m1", "m2"]);
    expect(loaded?.messages[1]).toMatchObject({ sources: [{ n: 1, url: "https://ollama.com" }], mode: "web" });
    expect(await again.list()).toEqual([
      { id: c.id, title: "How do I set up Ollama?", updatedAt: expect.any(Number), summary: "How do I set up Ollama? Details follow", messageCount: 2 },
    ]);
    const files = await fs.readdir(chatDir());
    expect(files.sort()).toEqual([c.id, `${c.id}.json`, "index.json"].sort());
    expect((await fs.readdir(join(chatDir(), c.id))).sort()).toEqual(["m1.json", "m2.json"]);
  });

  it("replaces a message with the same id, removes messages, renames, deletes", async () => {
    const store = open();
    const c = await store.create("First title");
    await store.put(c.id, msg("m1", "user", "question"));
    await store.put(c.id, msg("m2", "assistant", "partial", { stopped: true }));
    await store.put(c.id, msg("m2", "assistant", "full answer"));
    expect((await store.get(c.id))?.messages.map((m) => m.content)).toEqual(["question", "full answer"]);
    await store.removeMessage(c.id, "m2");
    expect((await store.get(c.id))?.messages).toHaveLength(1);
    await store.rename(c.id, "  Renamed   chat ");
    expect((await open().list())[0].title).toBe("Renamed chat");
    await store.delete(c.id);
    expect(await store.get(c.id)).toBeNull();
    expect(await open().list()).toEqual([]);
  });

  it("lists newest first and searches titles and message text", async () => {
    const store = open();
    const a = await store.create();
    await store.put(a.id, msg("a1", "user", "Tell me about tides"));
    const b = await store.create();
    await store.put(b.id, msg("b1", "user", "Ollama setup"));
    await store.put(b.id, msg("b2", "assistant", "Use OLLAMA_ORIGINS for streaming"));
    expect((await store.list()).map((s) => s.id)).toEqual([b.id, a.id]);
    expect((await store.search("origins")).map((s) => s.id)).toEqual([b.id]);
    expect((await store.search("TIDES")).map((s) => s.id)).toEqual([a.id]);
    expect(await store.search("nothing like this")).toEqual([]);
  });

  it("keeps every message when puts race", async () => {
    const store = open();
    const c = await store.create();
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.put(c.id, msg(`m${i}`, "user", `q${i}`))));
    expect((await store.get(c.id))?.messages).toHaveLength(10);
  });

  it("several writers (one store per process) appending to one conversation keep every message, each answer after its question", async () => {
    const first = open();
    const c = await first.create();
    const writers = Array.from({ length: 10 }, () => open());
    // Every writer reads the conversation, then all save a question and an answer at once.
    await Promise.all(writers.map((w) => w.get(c.id)));
    await Promise.all(
      writers.map(async (w, i) => {
        await w.put(c.id, msg(`q${i}`, "user", `question ${i}`, { createdAt: 1000 + i }));
        await w.put(c.id, msg(`a${i}`, "assistant", `answer ${i}`, { createdAt: 1000 + i, replyTo: `q${i}` }));
      }),
    );
    const loaded = await open().get(c.id);
    expect(loaded?.messages).toHaveLength(20);
    expect(loaded?.messages.map((m) => m.id)).toEqual(Array.from({ length: 10 }, (_, i) => [`q${i}`, `a${i}`]).flat());
    expect((await open().list())[0]).toMatchObject({ id: c.id, messageCount: 20 });
  });

  it("an answer saved while streaming is marked partial, stays out of the index until final, then replaces itself", async () => {
    const store = open();
    const c = await store.create();
    await store.put(c.id, msg("q", "user", "question"));
    await store.put(c.id, msg("a", "assistant", "Half an", { partial: true, replyTo: "q" }));
    const index = JSON.parse(await fs.readFile(join(chatDir(), "index.json"), "utf8")) as { conversations: { messageCount: number }[] };
    expect(index.conversations[0].messageCount).toBe(1);
    // A process killed now leaves the partial answer: a fresh reader sees it, marked.
    expect((await open().get(c.id))?.messages[1]).toMatchObject({ content: "Half an", partial: true });
    expect((await open().list())[0].messageCount).toBe(2); // the list follows the files
    await store.put(c.id, msg("a", "assistant", "Half an answer, now whole.", { replyTo: "q" }));
    const final = (await open().get(c.id))?.messages[1];
    expect(final?.content).toBe("Half an answer, now whole.");
    expect(final?.partial).toBeUndefined();
  });

  it("loads conversations saved in the old single-file format and keeps them on update", async () => {
    await fs.mkdir(chatDir(), { recursive: true });
    const old = {
      id: "c-old-1",
      title: "Old chat",
      createdAt: 1,
      updatedAt: 2,
      messages: [msg("m1", "user", "old question", { createdAt: 1 }), msg("m2", "assistant", "old answer", { createdAt: 2 })],
    };
    await fs.writeFile(join(chatDir(), "c-old-1.json"), JSON.stringify(old));
    const store = open();
    expect((await store.list()).map((s) => [s.id, s.messageCount])).toEqual([["c-old-1", 2]]);
    await store.put("c-old-1", msg("m3", "user", "new question"));
    await store.put("c-old-1", msg("m2", "assistant", "old answer, edited"));
    expect((await open().get("c-old-1"))?.messages.map((m) => m.content)).toEqual(["old question", "old answer, edited", "new question"]);
    await store.removeMessage("c-old-1", "m1");
    expect((await open().get("c-old-1"))?.messages.map((m) => m.id)).toEqual(["m2", "m3"]);
  });

  it("skips and reports a corrupt message record, keeping the rest", async () => {
    const store = open();
    const c = await store.create();
    await store.put(c.id, msg("m1", "user", "keep me"));
    await store.put(c.id, msg("m2", "assistant", "will be corrupted"));
    await fs.writeFile(join(chatDir(), c.id, "m2.json"), "{ torn");
    const fresh = open();
    expect((await fresh.get(c.id))?.messages.map((m) => m.id)).toEqual(["m1"]);
    expect(fresh.problems()).toEqual([expect.stringContaining(`${c.id}/m2.json could not be read (not valid JSON)`)]);
    expect(await fs.readFile(join(chatDir(), c.id, "m2.json"), "utf8")).toBe("{ torn");
  });

  it("a message whose optional parts are damaged keeps its text; bad parts and bad list entries are dropped, good ones kept", async () => {
    const store = open();
    const c = await store.create();
    await store.put(c.id, msg("m1", "user", "find notes about tides"));
    const goodSource = { n: 1, kind: "note", path: "Sea/Tides.md", title: "Tides", headings: [], startLine: 0, endLine: 3, snippet: "The moon pulls." };
    const goodStep = { tool: { name: "search_notes", arguments: { query: "tides" } }, result: "1 note", outcome: "ok", futureField: 1 };
    // As a sync conflict, a hand edit or another version could leave it.
    const damaged = {
      ...msg("m2", "assistant", "Here is what I found."),
      mode: "telepathy",
      sources: [goodSource, null, { n: 2, kind: "note", path: 7 }, "x"],
      agent: { kind: "search-results", agent: "search-notes", text: "1 note", query: "tides" }, // no hits
      notices: ["kept", null, 3],
      steps: [goodStep, null, { tool: { name: 5 } }],
      usage: "lots",
      stopped: "yes",
      error: { message: "not a string" },
    };
    await fs.writeFile(join(chatDir(), c.id, "m2.json"), JSON.stringify(damaged));

    const fresh = open();
    const loaded = (await fresh.get(c.id))?.messages.find((m) => m.id === "m2");
    expect(fresh.problems()).toEqual([]);
    expect(loaded).toEqual({ ...msg("m2", "assistant", "Here is what I found."), sources: [goodSource], notices: ["kept"], steps: [goodStep] });
  });

  it("a well-formed message loads with every part (agent results of each kind, usage, flags)", async () => {
    const store = open();
    const c = await store.create();
    const parts: Partial<StoredMessage>[] = [
      { agent: { kind: "note-created", agent: "create-note", text: "Created", path: "Krypton/Tides.md", title: "Tides", preview: "# Tides" } },
      { agent: { kind: "search-results", agent: "search-notes", text: "1", query: "q", hits: [{ path: "a.md", title: "a", folder: "", snippet: "", score: 0.5, startLine: 0 }], keywordOnly: "why" } },
      { agent: { kind: "summary", agent: "summarize", text: "S", title: "T", summary: "- a", sourceFiles: ["a.md"] } },
      { agent: { kind: "message", agent: "goals", text: "Open a note first", failed: "no-active-note" }, mode: "hybrid", usage: { promptTokens: 3 }, stopped: true, partial: true, replyTo: "m0", error: "cut" },
    ];
    for (const [i, extra] of parts.entries()) await store.put(c.id, msg(`m${i + 1}`, "assistant", `answer ${i}`, extra));
    const loaded = await open().get(c.id);
    expect(loaded?.messages).toEqual(parts.map((extra, i) => msg(`m${i + 1}`, "assistant", `answer ${i}`, extra)));
  });

  it("two stores on one vault (plugin and CLI) never drop each other's conversations", async () => {
    const plugin = open();
    const cli = open();
    const a = await plugin.create("From the plugin");
    const b = await cli.create("From the CLI");
    await plugin.put(a.id, msg("m1", "user", "plugin question"));
    expect((await cli.list()).map((s) => s.id).sort()).toEqual([a.id, b.id].sort());
    expect((await plugin.list()).map((s) => s.title).sort()).toEqual(["From the CLI", "From the plugin"]);
  });

  it("plugin and CLI saving at the same moment: every conversation is still listed, a deleted one stays gone", async () => {
    const plugin = open();
    const cli = open();
    // Interleaved index read-modify-writes: the later index write misses the other store's conversation.
    const made = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? plugin : cli).create(`Conversation ${i}`)));
    const ids = made.map((c) => c.id).sort();
    expect((await open().list()).map((s) => s.id).sort()).toEqual(ids);
    expect((await cli.list()).map((s) => s.id).sort()).toEqual(ids);
    // The healed index is on disk: a reader that trusts index.json alone sees all of them too.
    const index = JSON.parse(await fs.readFile(join(chatDir(), "index.json"), "utf8")) as { conversations: { id: string }[] };
    expect(index.conversations.map((c) => c.id).sort()).toEqual(ids);

    // One side deletes while the other's stale index still names the conversation.
    const stale = await fs.readFile(join(chatDir(), "index.json"), "utf8");
    await plugin.delete(made[0].id);
    await fs.writeFile(join(chatDir(), "index.json"), stale);
    expect((await cli.list()).map((s) => s.id)).not.toContain(made[0].id);
    expect(await cli.search("Conversation 0")).toEqual([]);
  });

  it("skips and reports a corrupt conversation file without touching it or the others", async () => {
    const store = open();
    const good = await store.create();
    await store.put(good.id, msg("m1", "user", "keep me"));
    const bad = await store.create();
    await store.put(bad.id, msg("m1", "user", "will be corrupted"));
    const badPath = join(chatDir(), `${bad.id}.json`);
    await fs.writeFile(badPath, "{ this is not json");

    const fresh = open();
    expect(await fresh.get(bad.id)).toBeNull();
    expect(fresh.problems()).toEqual([expect.stringContaining(`${bad.id}.json could not be read (not valid JSON)`)]);
    await expect(fresh.put(bad.id, msg("m2", "user", "x"))).rejects.toThrow(/cannot be read/);
    expect(await fs.readFile(badPath, "utf8")).toBe("{ this is not json");
    expect((await fresh.get(good.id))?.messages[0].content).toBe("keep me");
    expect(fresh.problems()).toHaveLength(1); // reported once
  });

  it("rebuilds a corrupt or missing index from the conversation files", async () => {
    const store = open();
    const a = await store.create();
    await store.put(a.id, msg("m1", "user", "alpha"));
    const b = await store.create();
    await store.put(b.id, msg("m1", "user", "beta"));
    await fs.writeFile(join(chatDir(), `${b.id}.json`), JSON.stringify({ id: b.id, nope: true }));
    await fs.writeFile(join(chatDir(), "index.json"), "garbage");

    const fresh = open();
    const list = await fresh.list();
    expect(list.map((s) => s.id)).toEqual([a.id]);
    expect(fresh.problems()).toEqual([
      expect.stringContaining("index.json was unreadable"),
      expect.stringContaining(`${b.id}.json could not be read (not a Krypton conversation)`),
    ]);
    const rewritten = JSON.parse(await fs.readFile(join(chatDir(), "index.json"), "utf8")) as { conversations: unknown[] };
    expect(rewritten.conversations).toHaveLength(1);

    await fs.rm(join(chatDir(), "index.json"));
    expect((await open().list()).map((s) => s.id)).toEqual([a.id]);
  });

  it("refuses ids that could escape the chat folder", async () => {
    const store = open();
    expect(await store.get("../../Note")).toBeNull();
    await store.delete("../../Note");
    expect(await vault.exists("Note.md")).toBe(true);
  });

  it("titles come from the first line, shortened", () => {
    expect(titleFrom("  \n  Hello   world \nsecond")).toBe("Hello world");
    expect(titleFrom("x".repeat(100))).toHaveLength(60);
    expect(titleFrom("   ")).toBe(NEW_CONVERSATION_TITLE);
  });

  it("an emoji or rare character at the cut of a title or summary is kept whole or left out, never halved, across a reload", async () => {
    const question = `${"a".repeat(58)}🌊 and ${"b".repeat(53)}𝄞 and the rest of a long question about tides`;
    const store = open();
    const c = await store.create(question);
    await store.put(c.id, msg("m1", "user", question));
    const reloaded = open();
    const title = (await reloaded.get(c.id))!.title;
    const [summary] = await reloaded.list();
    const halfPair = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    expect(title).toBe(`${"a".repeat(58)}…`);
    expect(summary.title).toBe(title);
    expect(summary.summary).toBe(`${"a".repeat(58)}🌊 and ${"b".repeat(53)}…`);
    expect(halfPair.test(title) || halfPair.test(summary.summary)).toBe(false);
  });
});
