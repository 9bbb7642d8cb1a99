/**
 * Faults only real processes have: parallel writers to one conversation, kill -9 in the middle of an
 * answer, a hung embedder with the default timeouts, an invalid line in the middle of an Ollama stream.
 * The bundled CLI runs as separate processes (tests/support/cli-processes.ts) against loopback servers.
 */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { ConversationStore } from "../../src/core/chat/conversation-store";
import type { StoredMessage } from "../../src/core/chat/conversation-types";
import { silentLogger } from "../../src/core/ports/logger";
import { nodeClock } from "../../src/node/node-clock";
import { FsDataDir, dataDirOf } from "../../src/node/fs-data-dir";
import { runParallel, startCli, waitUntil } from "../support/cli-processes";
import { startSilentServer, type SilentServer } from "../support/servers/silent-server";
import { useCliTestBed } from "../support/cli-test-bed";

const NOTES: Record<string, string> = {
  "Machine Learning/Gradient descent.md": "# Gradient descent\n\nGradient descent walks downhill on the loss surface.\n",
  "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n",
};

/** Generous bounds for hang guards: they fail a run that hangs, they do not measure speed. */
const HANG_GUARD_MS = 20_000;

describe("the CLI as separate processes", () => {
  const bed = useCliTestBed({ notes: NOTES, ollama: { defaultReply: (req) => `answer to ${req.userText}` } });
  const store = () => new ConversationStore(new FsDataDir(dataDirOf(bed.vault.root)), nodeClock, silentLogger);


  it("10 parallel `ask --conversation X` keep all 20 messages, each answer after its question", async () => {
    const conversation = await store().create("Parallel");
    const results = await runParallel(10, (i) => ["ask", bed.vault.root, `question ${i}`, "--conversation", conversation.id, "--mode", "none"], { env: bed.env });
    for (const r of results) expect({ code: r.code, error: /error/i.test(r.stderr) }).toEqual({ code: 0, error: false });

    const saved = await store().get(conversation.id);
    const messages = saved?.messages ?? [];
    expect(messages).toHaveLength(20);
    for (let at = 0; at < 20; at += 2) {
      const question = messages[at];
      expect(question.role).toBe("user");
      expect(messages[at + 1]).toMatchObject({ role: "assistant", content: `answer to ${question.content}`, replyTo: question.id });
    }
    expect(new Set(messages.filter((m) => m.role === "user").map((m) => m.content))).toEqual(new Set(Array.from({ length: 10 }, (_, i) => `question ${i}`)));
    expect((await store().list())[0]).toMatchObject({ id: conversation.id, messageCount: 20 });
  }, 90_000);

  it("kill -9 of `krypton chat` mid-answer keeps the partial answer already shown, marked partial", async () => {
    // 20 s of answer: the kill comes long before its end, even on a slow machine.
    const words = Array.from({ length: 500 }, (_, i) => `w${i + 1}`);
    bed.ollama.script({ route: "chat", tokens: words.map((w) => `${w} `), tokenDelayMs: 40 });
    const chat = await startCli(["chat", bed.vault.root, "--mode", "none"], { env: bed.env });
    chat.write("tell me a long story\n");
    // The answer is being shown, and a partial save has reached the disk: kill without warning.
    await chat.waitFor(() => chat.stdout.includes("w20 "), 15_000, "the 20th token on stdout");
    const partialRecord = async () => (await recordsOf(bed.vault.root)).some((m) => m.partial === true && m.content.startsWith("w1 w2 w3"));
    await waitUntil(partialRecord, 15_000, "a partial answer on disk");
    chat.kill("SIGKILL");
    const r = await chat.exited(HANG_GUARD_MS);
    expect(r.signal).toBe("SIGKILL");

    const list = await store().list();
    expect(list).toHaveLength(1);
    const saved = await store().get(list[0].id);
    expect(saved?.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const answer = saved!.messages[1];
    expect(answer).toMatchObject({ partial: true, replyTo: saved!.messages[0].id });
    expect(answer.content).toMatch(/^w1 w2 w3 /);
    expect(r.stdout).toContain(answer.content.trim()); // what was saved had been shown
  }, 60_000);

  it("an invalid JSON line mid-stream ends the answer like a cut stream: no raw output, the text so far kept and marked", async () => {
    bed.ollama.script({ route: "chat", reply: "one two three four five six", invalidLineAfterTokens: 3 });
    const proc = await startCli(["ask", bed.vault.root, "say something", "--mode", "none"], { env: bed.env });
    proc.endInput();
    const r = await proc.exited(HANG_GUARD_MS);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("sent a line that is not JSON in the middle of the answer");
    expect(r.stderr).not.toMatch(/invalid json|created_at/i);
    expect(r.stdout).toContain("one two three");
    expect(r.stdout).not.toContain("four");
    const [summary] = await store().list();
    const answer = (await store().get(summary.id))?.messages[1];
    expect(answer).toMatchObject({ role: "assistant", partial: true, content: "one two three ", error: expect.stringContaining("not JSON") });
  }, 60_000);

  describe("an embedder that accepts connections but never answers, with the default timeouts", () => {
    let silent: SilentServer;
    beforeAll(async () => {
      silent = await startSilentServer();
    });
    afterAll(() => silent.close());

    it("`krypton search` on a vault never indexed searches by keywords at once and says why", async () => {
      // search is a reader (it never takes the writer lock), so it builds no vectors: nothing waits on the dead embedder.
      const proc = await startCli(["search", bed.vault.root, "gradient", "--json"], { env: { KRYPTON_OLLAMA_URL: silent.url }, lifetimeMs: 60_000 });
      proc.endInput();
      const r = await proc.exited(HANG_GUARD_MS); // a hang guard, not a timing: the old behaviour took ~248 s
      expect(r.code).toBe(0);
      expect((JSON.parse(r.stdout) as { path: string }[])[0].path).toBe("Machine Learning/Gradient descent.md");
      expect(r.stderr).toMatch(/no embeddings yet .*keywords only/);
    }, 60_000);

    it("`krypton search` on an index that has vectors: the query gives up within seconds and says why", async () => {
      const indexed = await startCli(["index", bed.vault.root, "--json"], { env: bed.env });
      indexed.endInput();
      expect(JSON.parse((await indexed.exited(HANG_GUARD_MS)).stdout)).toMatchObject({ keywordOnly: false, embedded: 2 });
      const proc = await startCli(["search", bed.vault.root, "bread", "--json"], { env: { KRYPTON_OLLAMA_URL: silent.url } });
      proc.endInput();
      const r = await proc.exited(HANG_GUARD_MS);
      expect(r.code).toBe(0);
      expect((JSON.parse(r.stdout) as { path: string }[])[0].path).toBe("Cooking/Bread.md");
      expect(r.stderr).toBe("krypton: warning: Semantic search failed (the embedding model did not answer within 4 s): notes were matched by keywords only.\n");
    }, 60_000);

    it("`krypton index` stops trying the dead embedder quickly and builds the index keyword-only", async () => {
      const proc = await startCli(["index", bed.vault.root, "--json"], { env: { KRYPTON_OLLAMA_URL: silent.url }, lifetimeMs: 60_000 });
      proc.endInput();
      const r = await proc.exited(HANG_GUARD_MS);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ notes: 2, keywordOnly: true });
      expect(r.stderr).toMatch(/did not answer within \d+ s/);
    }, 60_000);
  });
});

/** Every message record on disk under .krypton/chat/<conversation>/. */
async function recordsOf(root: string): Promise<StoredMessage[]> {
  const chat = join(dataDirOf(root), "chat");
  const out: StoredMessage[] = [];
  for (const entry of await fs.readdir(chat, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isDirectory()) continue;
    for (const name of await fs.readdir(join(chat, entry.name))) {
      if (!name.endsWith(".json")) continue;
      try {
        out.push(JSON.parse(await fs.readFile(join(chat, entry.name, name), "utf8")) as StoredMessage);
      } catch {
        // a record being replaced right now
      }
    }
  }
  return out;
}
