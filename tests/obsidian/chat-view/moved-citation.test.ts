/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
// A saved answer keeps the path its cited note had then. Clicking the citation after the note moved
// opens the note where it is now (the one note with that file name); after a rename, a delete, or with
// several notes of that name, the user is told what happened. Real plugin, real conversation files.
import { clearNotices, noticeMessages, type StubFileLeaf } from "../../support/obsidian-stub";
import { getChatView } from "../../../src/obsidian/chat-view/chat-commands";
import type { Source } from "../../../src/core/chat/chat-types";
import { loadPlugin, waitFor, type LoadedPlugin } from "../plugin-harness";

const NOTES = {
  "Geo/France.md": "# France\n\n## Capital\n\nParis is the capital of France.\n",
  "Geo/Italy.md": "# Italy\n\nRome is the capital of Italy.\n",
};
const cited: Source = { n: 1, kind: "note", path: "Geo/France.md", title: "France", headings: ["Capital"], startLine: 5, endLine: 5, snippet: "Paris is the capital of France." };

let p: LoadedPlugin;

beforeEach(async () => {
  clearNotices();
  p = await loadPlugin(NOTES);
  await p.layoutReady();
});
afterEach(async () => {
  await p.close();
});

/** Opens the chat on a saved answer citing Geo/France.md and clicks the citation. */
async function clickSavedCitation(): Promise<void> {
  const store = p.services.core.conversations;
  const conversation = await store.create("Capital of France");
  await store.put(conversation.id, { id: "m1", role: "user", content: "What is the capital of France?", createdAt: 1 });
  await store.put(conversation.id, { id: "m2", role: "assistant", content: "Paris [1].", createdAt: 2, sources: [cited], replyTo: "m1" });
  p.app.commands.executeCommandById("krypton:open-chat");
  const view = await waitFor(() => getChatView(p.app as never));
  expect(await view.controller.open(conversation.id)).toBe(true);
  const citation = await waitFor(() => view.containerEl.querySelector<HTMLElement>(".krypton-citation"));
  citation.click();
  await new Promise((r) => setTimeout(r, 0));
}

const opened = () => {
  const leaf = p.app.workspace.activeLeaf as StubFileLeaf | null;
  return leaf?.openedFile ? { path: leaf.openedFile.path, line: leaf.openState?.eState?.line } : null;
};

it("opens the cited note at its path, at the cited line", async () => {
  await clickSavedCitation();
  expect(opened()).toEqual({ path: "Geo/France.md", line: 4 });
  expect(noticeMessages()).toEqual([]);
});

it("opens a note moved to another folder since the answer: the one note with its file name", async () => {
  await p.app.vault.createFolder("Europe");
  await p.app.vault.rename(p.app.vault.getFileByPath("Geo/France.md")!, "Europe/France.md");
  await clickSavedCitation();
  expect(opened()).toEqual({ path: "Europe/France.md", line: 4 });
  expect(noticeMessages()).toEqual([]);
});

it.each([
  ["renamed", async () => p.app.vault.rename(p.app.vault.getFileByPath("Geo/France.md")!, "Geo/République française.md"), "Geo/France.md was renamed, moved or deleted since this answer."],
  ["deleted", async () => p.app.vault.delete(p.app.vault.getFileByPath("Geo/France.md")!), "Geo/France.md was renamed, moved or deleted since this answer."],
  [
    "moved, with another note of that name",
    async () => {
      await p.app.vault.createFolder("Europe");
      await p.app.vault.createFolder("Trips");
      await p.app.vault.rename(p.app.vault.getFileByPath("Geo/France.md")!, "Europe/France.md");
      await p.app.vault.create("Trips/France.md", "# France trip\n");
    },
    "Geo/France.md was renamed, moved or deleted since this answer; 2 notes are now named France.md: open the one you mean from the file explorer.",
  ],
])("says what happened when the cited note was %s, and opens nothing", async (_what, change, message) => {
  await change();
  await clickSavedCitation();
  expect(opened()).toBeNull();
  expect(noticeMessages()).toEqual([message]);
});
