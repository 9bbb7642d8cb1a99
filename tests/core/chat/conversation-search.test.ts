/**
 * History search on real files: a store that has searched before (its search cache filled) answers exactly
 * as a fresh store on the same files (which reads every conversation), also after other processes changed
 * them, and it reads again only what changed.
 */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { ConversationStore } from "../../../src/core/chat/conversation-store";
import { SEARCH_WORDS_PER_CONVERSATION } from "../../../src/core/chat/conversation-search-cache";
import type { StoredMessage } from "../../../src/core/chat/conversation-types";
import { clockFromTimers } from "../../../src/core/ports/clock";
import { silentLogger } from "../../../src/core/ports/logger";
import { FsDataDir, dataDirOf } from "../../../src/node/fs-data-dir";
import { makeTempVault, type TempVault } from "../../support/temp-vault";

/** The real data dir, noting which files were read. */
class ReadLog extends FsDataDir {
  readonly reads: string[] = [];
  override readText(path: string): Promise<string | null> {
    this.reads.push(path);
    return super.readText(path);
  }
}

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
const open = (data = new FsDataDir(dataDirOf(vault.root))) => new ConversationStore(data, clock, silentLogger);
const msg = (id: string, role: "user" | "assistant", content: string, extra: Partial<StoredMessage> = {}): StoredMessage => ({
  id,
  role,
  content,
  createdAt: time,
  ...extra,
});

const QUERIES = [
  "tide", "TIDES", "ebb", "moon pull", "moon  pull", "pull moon", "tide.", "(tide)", "wind", "garden", "sourdough", "σ", "ς", "οδός",
  "answer", "streaming", "zebra", "z", "e", "conversation", "new", "final words", "a\nb", "a b", "brand-new", "renamed", "head message", "x",
];

/** Every query, on the long-lived store and on a fresh one (no cache: it reads every file), must agree. */
async function expectSameAsFresh(warm: ConversationStore): Promise<void> {
  for (const q of QUERIES) {
    const expected = (await open().search(q)).map((s) => s.id);
    expect({ q, ids: (await warm.search(q)).map((s) => s.id) }).toEqual({ q, ids: expected });
  }
}

beforeEach(async () => {
  vault = await makeTempVault({ "Note.md": "# Note\n" });
});
afterEach(() => vault.cleanup());

describe("ConversationStore.search with its cache", () => {
  it("answers as the uncached path after edits by another process and deletes", async () => {
    const store = open();
    const tides = await store.create("Tides");
    await store.put(tides.id, msg("m1", "user", "Why do tides happen? The moon pull..."));
    await store.put(tides.id, msg("m2", "assistant", "The Moon pulls the water (tide). Ebb and flow."));
    const greek = await store.create("Greek");
    await store.put(greek.id, msg("g1", "user", "ΟΔΌΣ ΣΟΦΟΣ"));
    const garden = await store.create();
    await store.put(garden.id, msg("b1", "user", "Garden\nwind\tand a\nb"));
    await store.put(garden.id, msg("b2", "assistant", "still streaming", { partial: true, replyTo: "b1" }));
    // An old single-file conversation: its messages live in the head.
    const old = { id: "c-old", title: "Old", createdAt: time, updatedAt: time, messages: [msg("o1", "user", "head message about sourdough")] };
    await fs.writeFile(join(chatDir(), "c-old.json"), JSON.stringify(old));
    await expectSameAsFresh(store);

    // Another process: a new record, the streaming answer replaced by its final text (same file), a record
    // gone, the old head rewritten, and a brand-new conversation: all written straight to the files.
    await fs.writeFile(join(chatDir(), tides.id, "m3.json"), JSON.stringify(msg("m3", "user", "zebra crossing at low tide")));
    await fs.writeFile(join(chatDir(), garden.id, "b2.json"), JSON.stringify(msg("b2", "assistant", "final words", { replyTo: "b1" })));
    await fs.rm(join(chatDir(), greek.id, "g1.json"));
    await fs.writeFile(join(chatDir(), "c-old.json"), JSON.stringify({ ...old, messages: [msg("o1", "user", "head message, renamed bread")] }));
    const other = open();
    const fresh = await other.create("Brand-new");
    await other.put(fresh.id, msg("n1", "user", "x marks the spot"));
    await expectSameAsFresh(store);

    // Deletes: one here, one by another process.
    await store.delete(tides.id);
    await other.delete(garden.id);
    await expectSameAsFresh(store);
    await fs.rm(join(chatDir(), "c-old.json"));
    await expectSameAsFresh(store);
  });

  it("answers as the uncached path after its own writes", async () => {
    const store = open();
    const c = await store.create("Walk");
    await store.put(c.id, msg("m1", "user", "tide tables"));
    await store.put(c.id, msg("m2", "assistant", "the wind turns", { stopped: true }));
    await expectSameAsFresh(store);
    await store.put(c.id, msg("m2", "assistant", "the moon pull wins")); // same record, new text
    await expectSameAsFresh(store);
    await store.removeMessage(c.id, "m1");
    await store.rename(c.id, "Renamed");
    await expectSameAsFresh(store);
  });

  it("finds words past what it keeps of a long conversation", async () => {
    const store = open();
    const c = await store.create("Long");
    const words = Array.from({ length: Math.ceil(SEARCH_WORDS_PER_CONVERSATION / 5) }, (_, i) => `w${i}`).join(" ");
    await store.put(c.id, msg("m1", "user", `${words} zebra crossing`));
    await store.search("w1"); // fills the cache
    expect((await store.search("zebra")).map((s) => s.id)).toEqual([c.id]);
    expect((await store.search("zebra crossing")).map((s) => s.id)).toEqual([c.id]);
    expect((await store.search("w1 w2")).map((s) => s.id)).toEqual([c.id]);
    expect(await store.search("w1 w3")).toEqual([]);
  });

  it("reads again only the conversations whose files changed", async () => {
    const data = new ReadLog(dataDirOf(vault.root));
    const store = open(data);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const c = await store.create(`Chat ${i}`);
      await store.put(c.id, msg(`q${i}`, "user", `question ${i} about tides`));
      await store.put(c.id, msg(`a${i}`, "assistant", `answer ${i}`));
      ids.push(c.id);
    }
    await store.search("tides");
    /** Conversations whose files were read since the last call (the index file aside). */
    const readConversations = () => {
      const read = new Set(data.reads.filter((p) => p !== "chat/index.json").map((p) => p.split("/")[1].replace(/\.json$/, "")));
      data.reads.length = 0;
      return read;
    };
    readConversations();
    expect((await store.search("answer")).map((s) => s.id)).toEqual([...ids].reverse());
    expect((await store.search("nothing")).map((s) => s.id)).toEqual([]);
    expect(readConversations()).toEqual(new Set());
    // With a space: only a conversation holding each part is read, to check the whole phrase.
    expect((await store.search("answer 3")).map((s) => s.id)).toEqual([ids[3]]);
    expect(readConversations()).toEqual(new Set([ids[3]]));

    await fs.writeFile(join(chatDir(), ids[1], "z1.json"), JSON.stringify(msg("z1", "user", "zebra")));
    expect((await store.search("zebra")).map((s) => s.id)).toEqual([ids[1]]);
    expect(readConversations()).toEqual(new Set([ids[1]]));
  });
});
