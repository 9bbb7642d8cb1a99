/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
import { promises as fs } from "node:fs";
import { FileSystemAdapter, Platform } from "../support/obsidian-stub";
import { indexInEarlierSession, loadPlugin } from "./plugin-harness";

// How the plugin reads a saved index back: on desktop through Node's fs, only the parts it needs (the
// search part at load, a hit's texts); on mobile, where Obsidian's adapter reads whole files only, by
// cutting those parts out of whole files. Either way the search finds the note and shows its text.
const NOTES: Record<string, string> = {};
for (let i = 0; i < 30; i++) NOTES[`Topic ${i}.md`] = `# Topic ${i}\n\nNotes about subject${i}: ${"words and more words ".repeat(40)}\n`;
NOTES["Tides.md"] = "# Tides\n\nThe moon pulls the ocean: high and low tides twice a day.\n";

let saved: string;
beforeAll(async () => {
  saved = await indexInEarlierSession(NOTES);
});

const wholeShardReads: string[] = [];
const readBinary = FileSystemAdapter.prototype.readBinary;
beforeEach(() => {
  wholeShardReads.length = 0;
  FileSystemAdapter.prototype.readBinary = function (this: FileSystemAdapter, path: string) {
    if (/^\.krypton\/index\/shard-/.test(path)) wholeShardReads.push(path);
    return readBinary.call(this, path);
  };
});
afterEach(() => {
  FileSystemAdapter.prototype.readBinary = readBinary;
  Platform.isDesktopApp = true;
});

async function reopenAndSearch(): Promise<string> {
  const p = await loadPlugin(NOTES, { savedIndex: saved });
  try {
    await p.layoutReady();
    const status = p.services.core.index.status();
    expect(status.rebuiltReason).toBeUndefined();
    expect(status.notes).toBe(31);
    const hit = (await p.services.core.index.searchNotes("moon pulls the ocean"))[0];
    expect(hit.path).toBe("Tides.md");
    return hit.chunks[0].chunk.text;
  } finally {
    await p.close();
  }
}

test("desktop: the saved index loads and shows hits' texts without reading any shard file whole", async () => {
  expect(await reopenAndSearch()).toContain("The moon pulls the ocean");
  expect(wholeShardReads).toEqual([]);
});

test("mobile (no Node): the same index loads and shows hits' texts from whole-file reads", async () => {
  Platform.isDesktopApp = false;
  expect(await reopenAndSearch()).toContain("The moon pulls the ocean");
  expect(wholeShardReads.length).toBeGreaterThan(0);
});
