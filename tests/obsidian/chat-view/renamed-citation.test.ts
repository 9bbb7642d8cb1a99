/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
// Saved answers follow their cited notes when Obsidian renames or moves them (a renamed folder fires one
// rename per note inside it): the conversation files on disk are rewritten, so a citation opens the note at
// its new path, not through the fallback by file name. Real plugin, real conversation files, the stand-in's
// rename events.
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { clearNotices, noticeMessages, TFolder, type StubFileLeaf } from "../../support/obsidian-stub";
import { getChatView } from "../../../src/obsidian/chat-view/chat-commands";
import type { Source } from "../../../src/core/chat/chat-types";
import { loadPlugin, waitFor, type LoadedPlugin } from "../plugin-harness";

const NOTES = {
  "Geo/France.md": "# France\n\n## Capital\n\nParis is the capital of France.\n",
  "Geo/Italy.md": "# Italy\n\nRome is the capital of Italy.\n",
  "Travel/Lisbon.md": "# Lisbon\n\nTrams and custard tarts.\n",
};
const source = (n: number, path: string, title: string): Source => ({ n, kind: "note", path, title, headings: [], startLine: 5, endLine: 5, snippet: title });

let p: LoadedPlugin;

beforeEach(async () => {
  clearNotices();
  p = await loadPlugin(NOTES);
  await p.layoutReady();
});
afterEach(async () => {
  await p.close();
});

/** A saved question and its answer citing `sources`; returns the conversation's id. */
async function savedAnswer(sources: Source[]): Promise<string> {
  const store = p.services.core.conversations;
  const conversation = await store.create("Capitals");
  await store.put(conversation.id, { id: "m1", role: "user", content: "Capitals?", createdAt: 1 });
  await store.put(conversation.id, { id: "m2", role: "assistant", content: "Paris [1].", createdAt: 2, sources, replyTo: "m1" });
  return conversation.id;
}

const citedPaths = async (id: string) => (await p.services.core.conversations.get(id))?.messages.flatMap((m) => (m.sources ?? []).map((s) => (s.kind === "note" ? s.path : s.url)));

async function clickFirstCitation(id: string): Promise<{ path: string; line: unknown } | null> {
  p.app.commands.executeCommandById("krypton:open-chat");
  const view = await waitFor(() => getChatView(p.app as never));
  expect(await view.controller.open(id)).toBe(true);
  const citation = await waitFor(() => view.containerEl.querySelector<HTMLElement>(".krypton-citation"));
  citation.click();
  await new Promise((r) => setTimeout(r, 0));
  const leaf = p.app.workspace.activeLeaf as StubFileLeaf | null;
  return leaf?.openedFile ? { path: leaf.openedFile.path, line: leaf.openState?.eState?.line } : null;
}

it("a renamed note: the saved citation cites its new name and opens it; the history keeps its order", async () => {
  const id = await savedAnswer([source(1, "Geo/France.md", "France")]);
  const history = await p.services.core.conversations.list();
  await p.app.vault.rename(p.app.vault.getFileByPath("Geo/France.md")!, "Geo/République française.md");
  await p.services.citationsFollowed();

  const record = await fs.readFile(join(p.temp.root, ".krypton", "chat", id, "m2.json"), "utf8");
  expect(record).toContain('"path":"Geo/République française.md"');
  expect(await p.services.core.conversations.list()).toEqual(history);
  // Without the rewrite no note has the old file name: the click would only say the note is gone.
  expect(await clickFirstCitation(id)).toEqual({ path: "Geo/République française.md", line: 4 });
  expect(noticeMessages()).toEqual([]);
});

it("a renamed folder: the citations of every note in it follow, others stay; a note of the same name elsewhere does not confuse the click", async () => {
  const id = await savedAnswer([source(1, "Geo/France.md", "France"), source(2, "Geo/Italy.md", "Italy"), source(3, "Travel/Lisbon.md", "Lisbon")]);
  const other = await savedAnswer([source(1, "Travel/Lisbon.md", "Lisbon")]);
  const untouched = await fs.readFile(join(p.temp.root, ".krypton", "chat", other, "m2.json"));
  await p.app.vault.rename(p.app.vault.getAbstractFileByPath("Geo") as TFolder, "Europe");
  await p.app.vault.create("France.md", "# France, the trip\n");
  await p.services.citationsFollowed();

  expect(await citedPaths(id)).toEqual(["Europe/France.md", "Europe/Italy.md", "Travel/Lisbon.md"]);
  expect(await fs.readFile(join(p.temp.root, ".krypton", "chat", other, "m2.json"))).toEqual(untouched);
  expect(await clickFirstCitation(id)).toEqual({ path: "Europe/France.md", line: 4 });
  expect(noticeMessages()).toEqual([]);
});

it("an old single-file conversation follows too; a damaged message file and an answer still being written are left as they are", async () => {
  const chat = join(p.temp.root, ".krypton", "chat");
  const old = {
    id: "c-old",
    title: "Old",
    createdAt: 1,
    updatedAt: 2,
    messages: [
      { id: "q", role: "user", content: "France?", createdAt: 1 },
      { id: "a", role: "assistant", content: "Paris [1].", createdAt: 2, replyTo: "q", sources: [source(1, "Geo/France.md", "France")] },
    ],
  };
  const id = await savedAnswer([source(1, "Geo/France.md", "France")]);
  await fs.writeFile(join(chat, "c-old.json"), JSON.stringify(old, null, 1));
  const damaged = '{"id":"m3","role":"assistant","content":"Rome [1]","createdAt":3,"sources":[{"kind":"note","path":"Geo/France.md"';
  await fs.writeFile(join(chat, id, "m3.json"), damaged);
  const streaming = JSON.stringify({ id: "m4", role: "assistant", content: "Par", createdAt: 4, partial: true, sources: [source(1, "Geo/France.md", "France")] });
  await fs.writeFile(join(chat, id, "m4.json"), streaming);

  await p.app.vault.rename(p.app.vault.getFileByPath("Geo/France.md")!, "Geo/Frankreich.md");
  await p.services.citationsFollowed();

  expect(await citedPaths("c-old")).toEqual(["Geo/Frankreich.md"]);
  expect(JSON.parse(await fs.readFile(join(chat, "c-old.json"), "utf8"))).toEqual({ ...old, messages: [old.messages[0], { ...old.messages[1], sources: [source(1, "Geo/Frankreich.md", "France")] }] });
  expect(await fs.readFile(join(chat, id, "m3.json"), "utf8")).toBe(damaged);
  expect(await fs.readFile(join(chat, id, "m4.json"), "utf8")).toBe(streaming);
  expect(await fs.readFile(join(chat, id, "m2.json"), "utf8")).toContain('"path":"Geo/Frankreich.md"');
});

it("a conversation open in the chat view takes the new path at once: its citation and its Sources list open the renamed note", async () => {
  const id = await savedAnswer([source(1, "Geo/France.md", "France"), source(2, "Travel/Lisbon.md", "Lisbon")]);
  p.app.commands.executeCommandById("krypton:open-chat");
  const view = await waitFor(() => getChatView(p.app as never));
  expect(await view.controller.open(id)).toBe(true);
  await waitFor(() => view.containerEl.querySelector(".krypton-citation"));

  await p.app.vault.rename(p.app.vault.getFileByPath("Geo/France.md")!, "Geo/République française.md");
  await view.settled();
  // Not reopened: the view's own messages follow (the file on disk is the store's business).
  expect(Array.from(view.containerEl.querySelectorAll(".krypton-source-detail")).map((el) => el.textContent)).toEqual(["Geo/République française.md", "Travel/Lisbon.md"]);
  view.containerEl.querySelector<HTMLElement>(".krypton-citation")!.click();
  await new Promise((r) => setTimeout(r, 0));
  const leaf = p.app.workspace.activeLeaf as StubFileLeaf | null;
  expect(leaf?.openedFile ? { path: leaf.openedFile.path, line: leaf.openState?.eState?.line } : null).toEqual({ path: "Geo/République française.md", line: 4 });
  expect(noticeMessages()).toEqual([]);
  await p.services.citationsFollowed();
});
