import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { IndexStore } from "../../../src/core/indexing/index-store";
import { makeHarness } from "./index-harness";

/**
 * A reader without an embedder (`krypton search --no-embeddings`, an unreachable Ollama) can never use the
 * saved vectors: it leaves them on disk instead of copying hundreds of megabytes into memory (issue 11 §3),
 * still reports them as embedded, and a writer without an embedder keeps them so its next save loses none.
 */
describe("saved vectors and a process without an embedder", () => {
  const files = {
    "Bread.md": "# Bread\n\nSourdough with a lively starter.\n",
    "Tea.md": "# Tea\n\nGreen tea steeps for two minutes.\n",
    "Notes/Garden.md": "# Garden\n\nTomatoes need sun and water.\n",
  };

  it("a reader leaves the vectors on disk, counts them and still finds notes by keywords", async () => {
    const h = await makeHarness(files);
    try {
      const writer = h.open();
      const built = await writer.open();
      await writer.idle();
      await writer.close();
      expect(built.embedded).toBe(built.chunks);

      const reader = h.open({ embedder: null });
      const status = await reader.open(undefined, { readOnly: true });
      expect(status.embedded).toBe(built.chunks);
      expect(status.embedder).toBe(h.embedder.id);
      expect(status.keywordOnly).toBe(true);
      // Nothing of them in memory (the point of the change; no public figure shows it).
      expect((reader as unknown as { store: IndexStore }).store.vectors.size).toBe(0);
      const hits = await reader.searchNotes("sourdough starter");
      expect(hits[0]?.path).toBe("Bread.md");

      // A note changed since the save is applied in memory: its saved vectors no longer count.
      await writeFile(join(h.vault.root, "Tea.md"), "# Tea\n\nBlack tea steeps longer, four minutes.\n");
      const again = h.open({ embedder: null });
      const changed = await again.open(undefined, { readOnly: true });
      expect(changed.embedded).toBe(built.chunks - 1);
      expect((await again.searchNotes("black tea"))[0]?.path).toBe("Tea.md");
    } finally {
      await h.cleanup();
    }
  });

  it("a writer without an embedder keeps the vectors and saves them again", async () => {
    const h = await makeHarness(files);
    try {
      const first = h.open();
      const built = await first.open();
      await first.idle();
      await first.close();

      // The writer rewrites a shard (a note changed) without an embedder: the other notes' vectors stay.
      await writeFile(join(h.vault.root, "Notes/Garden.md"), "# Garden\n\nTomatoes need sun, water and patience.\n");
      const noEmbedder = h.open({ embedder: null });
      await noEmbedder.open();
      await noEmbedder.idle();
      await noEmbedder.close();

      const reader = h.open();
      const status = await reader.open(undefined, { readOnly: true });
      expect(status.embedded).toBe(built.chunks - 1);
      expect(status.keywordOnly).toBe(false);
    } finally {
      await h.cleanup();
    }
  });
});
