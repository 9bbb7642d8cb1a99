/**
 * Chat history search (`ConversationStore.search`, what the history box runs after a pause in typing) over
 * 2,000 conversations of 30 messages (200 at `--scale small`), on real files: the first search reads every
 * conversation; later ones read only those changed since (one is changed by "another process" between runs).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConversationStore } from "../src/core/chat/conversation-store";
import { silentLogger } from "../src/core/ports/logger";
import { FsDataDir } from "../src/node/fs-data-dir";
import { nodeClock } from "../src/node/node-clock";
import { errorText, now, round, stats, target, type Measurement, type MeasurementOutput } from "./bench-kit";

const MESSAGES = 30;
const WORDS = "tide moon garden river vault note answer question model index search ollama bread wind".split(" ");
const QUERIES = ["tide", "zebra", "moon river", "conversation 7", "ollam", "nothing like this", "bread", "x"];

/** Conversations written as Krypton writes them (a head and one record per message), straight to disk. */
function writeHistory(chatDir: string, conversations: number): void {
  mkdirSync(chatDir, { recursive: true });
  for (let i = 0; i < conversations; i++) {
    const id = `c-bench${String(i).padStart(5, "0")}`;
    const t = 1_700_000_000_000 + i * 60_000;
    writeFileSync(join(chatDir, `${id}.json`), JSON.stringify({ id, title: `Conversation ${i}`, createdAt: t, updatedAt: t, messages: [] }));
    mkdirSync(join(chatDir, id));
    for (let j = 0; j < MESSAGES; j++) {
      const content = Array.from({ length: 100 }, (_, k) => WORDS[(i * 7 + j * 3 + k) % WORDS.length]).join(" ") + (i % 97 === 0 ? " zebra" : "");
      const m = { id: `m-${j}`, role: j % 2 ? "assistant" : "user", content, createdAt: t + j };
      writeFileSync(join(chatDir, id, `m-${j}.json`), JSON.stringify(m));
    }
  }
}

export const historySearch: Measurement = {
  name: "history",
  describe: "chat history search over 2,000 conversations of 30 messages: first search, then later ones",
  async run(ctx): Promise<MeasurementOutput> {
    const conversations = ctx.scale === "full" ? 2_000 : 200;
    const dataDir = join(ctx.workDir, "history-vault", ".krypton");
    rmSync(dataDir, { recursive: true, force: true });
    writeHistory(join(dataDir, "chat"), conversations);
    const store = new ConversationStore(new FsDataDir(dataDir), nodeClock, silentLogger);
    const text = `later search p50 ≤ 0.2× the first search (${conversations} conversations)`;
    try {
      await store.list(); // builds index.json once, as the first opening of the history does
      let t0 = now();
      await store.search("tide");
      const firstMs = now() - t0;
      const later: number[] = [];
      for (let pass = 0; pass < 3; pass++) {
        // Another process adds a message to one conversation between searches.
        writeFileSync(join(dataDir, "chat", "c-bench00001", `x-${pass}.json`), JSON.stringify({ id: `x-${pass}`, role: "user", content: "zebra", createdAt: Date.now() }));
        for (const q of QUERIES) {
          t0 = now();
          await store.search(q);
          later.push(now() - t0);
        }
      }
      const s = stats(later);
      return {
        figures: { conversations, messagesEach: MESSAGES, firstSearchMs: round(firstMs), laterSearchP50Ms: s.p50, laterSearchP95Ms: s.p95 },
        targets: [target("history-search", text, s.p50, "ms", s.p50 <= 0.2 * firstMs)],
        failures: [],
      };
    } catch (err) {
      return { figures: { conversations }, targets: [target("history-search", text, null, "ms", null)], failures: [{ what: "history search", error: errorText(err) }] };
    } finally {
      rmSync(join(ctx.workDir, "history-vault"), { recursive: true, force: true });
    }
  },
};
