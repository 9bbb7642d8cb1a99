import { failureNoticeText, rebuiltNoticeText, statusBarText, statusBarTooltip, statusDetails } from "../../src/obsidian/status/index-status-text";
import type { IndexStatus } from "../../src/core/indexing/index-status";

const base: IndexStatus = { state: "ready", notes: 10_000, chunks: 41_230, embedded: 41_230, keywordOnly: false, embedder: "ollama:nomic-embed-text", failures: [] };

test("the status bar line for each state", () => {
  expect(statusBarText({ ...base, state: "indexing", progress: { done: 1234, total: 10_000, phase: "chunking" } })).toBe("Indexing 1,234 / 10,000 notes");
  expect(statusBarText({ ...base, state: "indexing", progress: { done: 5, total: 9, phase: "embedding" } })).toBe("Embedding 5 / 9 notes");
  expect(statusBarText(base)).toBe("Krypton: 10,000 notes indexed");
  expect(statusBarText({ ...base, notes: 1 })).toBe("Krypton: 1 note indexed");
  expect(statusBarText({ ...base, keywordOnly: true })).toBe("Krypton: 10,000 notes indexed (keyword only)");
  expect(statusBarText({ ...base, state: "loading" })).toBe("Krypton: loading index…");
  expect(statusBarText({ ...base, state: "error" })).toBe("Krypton: index error");
});

test("the tooltip explains keyword-only mode with the embedder's own words", () => {
  const tip = statusBarTooltip({ ...base, keywordOnly: true, embedderError: "Ollama is not reachable at http://localhost:11434" });
  expect(tip).toContain("Keyword-only search: Ollama is not reachable at http://localhost:11434");
  expect(tip).toContain("41,230 chunks");
  // Not blamed on the settings when the index cannot be saved (a newer Krypton's index, a read-only vault).
  const unsaved = statusBarTooltip({ ...base, embedded: 0, keywordOnly: true, readOnly: true, writeError: "the index was saved by a newer version of Krypton" });
  expect(unsaved).toContain("Keyword-only search: notes are not embedded while the index cannot be saved");
  expect(unsaved).not.toContain("no embedding model is configured");
  expect(unsaved).toContain("Not saved: the index was saved by a newer version of Krypton");
  // One of a thing is said in the singular.
  const one = statusBarTooltip({ ...base, notes: 1, chunks: 1, embedded: 1, failures: [{ path: "A.md", error: "EACCES" }] });
  expect(one).toContain("1 note, 1 chunk, 1 with vectors");
  expect(one).toContain("1 note could not be indexed");
});

test("failures are named by file, at most five, and a rebuild says why", () => {
  expect(failureNoticeText(base)).toBeNull();
  const failures = Array.from({ length: 7 }, (_, i) => ({ path: `Folder/Note ${i}.md`, error: "Could not read the note: EACCES" }));
  const text = failureNoticeText({ ...base, failures })!;
  expect(text.split("\n")[0]).toBe("Krypton could not index 7 notes:");
  expect(text).toContain("• Folder/Note 0.md: Could not read the note: EACCES");
  expect(text).not.toContain("Note 5.md");
  expect(text).toContain("…and 2 more");
  expect(rebuiltNoticeText({ ...base, rebuiltReason: "the index manifest is malformed" })).toBe("Krypton rebuilt its index: the index manifest is malformed");
});

test("notes indexed only in part are named; the details say who writes the index or why it is not saved", () => {
  const partial = [{ path: "Hostile.md", error: "indexed up to line 4,000 only: the note has more than 2,000 chunks" }];
  expect(failureNoticeText({ ...base, partial })).toBe("Krypton indexed a note only in part:\n• Hostile.md: indexed up to line 4,000 only: the note has more than 2,000 chunks");
  const rows = statusDetails({ ...base, readOnly: true, heldBy: "krypton mcp, pid 1234, since 10:02", lockNotice: "the index lock of krypton index, pid 9 was left behind", partial });
  expect(rows).toEqual(
    expect.arrayContaining([
      { label: "Written by", value: "krypton mcp, pid 1234, since 10:02 (this window only reads the index)" },
      { label: "Index lock", value: "the index lock of krypton index, pid 9 was left behind" },
      { label: "Indexed in part", value: `Hostile.md: ${partial[0].error}` },
    ]),
  );
  const unsaved = statusDetails({ ...base, readOnly: true, writeError: "cannot write /v/.krypton (permission denied)" });
  expect(unsaved).toContainEqual({ label: "Not saved", value: "cannot write /v/.krypton (permission denied): the index is kept in memory only" });
  const folder = statusDetails({ ...base, foldersInTheWay: [".krypton/index/shard-0-2.bin"] });
  expect(folder).toContainEqual({
    label: "Folder in the index",
    value: ".krypton/index/shard-0-2.bin is a folder with files in it, where Krypton would have saved part of its index: it was left alone and the index saved under another file name; move that folder out of .krypton",
  });
});
