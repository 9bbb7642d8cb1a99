/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
/**
 * The one read policy inside Obsidian: the real plugin on the Obsidian stand-in over a real folder holding a
 * symlink that leads out of the vault (the stand-in lists it, as Obsidian desktop does), binary ".md" files,
 * a Latin-1 note and a mixed-case excluded folder. Index, search, chat RAG context, "summarize this note" in
 * chat and the summarize command all go through it.
 */
import { mkdtempSync, promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatEvent } from "../../src/core/chat/chat-types";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import { loadPlugin, type LoadedPlugin } from "./plugin-harness";
import { collect } from "../core/providers/provider-fixtures";

const NOTES = {
  "Ads/Tracking.md": "# Tracking\n\nThe parameter ctwa_clid and op_darwin_arm64_v1.zip and every *.sql file, ~24/día.\n",
  "private/Diary.md": "# Diary\n\nThe marmalade plan is secret.\n",
  "Garden/Bees.md": "# Bees\n\nBees pollinate the marmalade oranges.\n",
};

let p: LoadedPlugin | undefined;
let outside: string;
let ollama: OllamaTestServer;

beforeAll(async () => {
  ollama = await startOllamaServer();
});
afterAll(() => ollama.close());
beforeEach(() => {
  outside = mkdtempSync(join(tmpdir(), "krypton-outside-"));
});
afterEach(async () => {
  await p?.close();
  p = undefined;
  await fs.rm(outside, { recursive: true, force: true });
});

async function open(): Promise<LoadedPlugin> {
  await fs.writeFile(join(outside, "secret.md"), "# Secret\n\nThe quokka password is hunter2.\n");
  p = await loadPlugin(NOTES, {
    data: { excludePatterns: ["Private/"], ollamaUrl: ollama.url, chatModel: "llama3.1:8b" },
    beforeOpen: async (root) => {
      await fs.symlink(join(outside, "secret.md"), join(root, "passwd.md"));
      await fs.writeFile(join(root, "Image.md"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]));
      await fs.writeFile(join(root, "Latin.md"), Buffer.from("# Señales\n\nLa señal del café llegó tarde.\n", "latin1"));
      await fs.writeFile(join(root, "Wide.md"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("# Wide\n\nThe wombat note.\n", "utf16le")]));
    },
  });
  await p.layoutReady();
  return p;
}

test("the index skips an out-of-vault symlink and binary files by name, decodes Latin-1, and honours Private/ for private/", async () => {
  const { services } = await open();
  const status = services.core.index.status();
  expect(status.failures.find((f) => f.path === "passwd.md")?.error).toMatch(/symbolic link leading outside the vault/);
  expect(status.failures.find((f) => f.path === "Image.md")?.error).toMatch(/binary file \(PNG image\)/);
  expect(status.failures.find((f) => f.path === "Wide.md")?.error).toBe("it is UTF-16 text: Krypton and Obsidian read notes as UTF-8; save it as UTF-8 to index it");
  expect(await services.core.index.searchNotes("quokka hunter2")).toEqual([]);
  expect((await services.core.index.searchNotes("marmalade")).map((h) => h.path)).toEqual(["Garden/Bees.md"]);
  const [latin] = await services.core.index.searchNotes("señal café");
  expect(latin.path).toBe("Latin.md");
  expect(latin.snippet).toContain("La señal del café llegó tarde.");
  const [tracking] = await services.core.index.searchNotes("ctwa_clid");
  expect(tracking.snippet).toContain("ctwa_clid and op_darwin_arm64_v1.zip and every *.sql file, ~24/día.");
});

test("chat: neither RAG context nor 'summarize this note' sends an excluded or out-of-vault note to the model", async () => {
  const { services } = await open();
  ollama.reset();
  ollama.script({ route: "chat", reply: "Some answer.", times: Infinity });
  const rag = await collect(services.core.chat.send("what is the marmalade plan?", { mode: "rag" }));
  const sources = rag.flatMap((e) => (e.type === "sources" ? e.sources : []));
  expect(sources.map((s) => ("path" in s ? s.path : ""))).not.toContain("private/Diary.md");
  for (const path of ["private/Diary.md", "passwd.md"]) {
    const events = await collect(services.core.chat.send("summarize this note", { mode: "none", activeNotePath: path }));
    const agent = events.find((e) => e.type === "agent");
    expect(agent && agent.type === "agent" && agent.result.kind === "message" ? agent.result.text : "").toMatch(/is not read: it (matches your exclude patterns|is a symbolic link)/);
  }
  const sent = JSON.stringify(ollama.requestsTo("chat").map((r) => r.body));
  expect(sent).not.toContain("secret");
  expect(sent).not.toContain("hunter2");
  // The summarize command (the same operation) refuses too.
  await expect(services.core.operations.summarizeNote("PRIVATE/Diary.md")).rejects.toThrow(/exclude patterns/);
});
