import { ProviderError } from "../../../src/core/providers/provider-error";
import type { IndexStatus } from "../../../src/core/indexing/index-status";
import { HashEmbedder } from "../../support/hash-embedder";
import { makeHarness, longNote, type Harness } from "./index-harness";

const files = {
  "Garden.md": "# Garden\n\nTomatoes and basil grow well together.",
  "Kitchen.md": "# Kitchen\n\nA sharp knife makes cooking safer.",
  "Big.md": longNote("Big", 40),
};

describe("VaultIndex: embedding", () => {
  let h: Harness;
  afterEach(async () => {
    await h?.cleanup();
  });

  it("builds keyword-only without an embedder and says so", async () => {
    h = await makeHarness(files);
    const index = h.open({ embedder: null });
    const status = await index.open();
    expect(status.keywordOnly).toBe(true);
    expect(status.embedded).toBe(0);
    expect(status.embedder).toBeNull();
    const hits = await index.searchNotes("basil");
    expect(hits[0].path).toBe("Garden.md");
    expect(hits[0].chunks[0].vectorScore).toBe(0);
  });

  it.each([
    ["no notes", {}],
    ["only empty notes", { "Empty.md": "", "Blank.md": "\n\n" }],
  ])("a vault with %s is not keyword-only while the embedder works: nothing lacks a vector", async (_name, notes) => {
    h = await makeHarness(notes, new HashEmbedder({ dim: 16 }));
    const index = h.open();
    expect(await index.open()).toMatchObject({ chunks: 0, keywordOnly: false });
    expect(index.status().keywordOnly).toBe(false);
    await index.close();
    // Without an embedder it is keyword-only, empty or not.
    expect(await h.open({ embedder: null }).open()).toMatchObject({ chunks: 0, keywordOnly: true });
  });

  it("builds keyword-only when the embedder is unreachable, then fills vectors in when it is back", async () => {
    let down = true;
    const embedder = new HashEmbedder({
      dim: 16,
      batchSize: 8,
      failWith: () => (down ? new ProviderError("unreachable", "Ollama is not reachable at http://127.0.0.1:9") : null),
    });
    h = await makeHarness(files, embedder);
    const index = h.open();
    const status = await index.open();
    expect(status.state).toBe("ready");
    expect(status.keywordOnly).toBe(true);
    expect(status.embedderError).toMatch(/not reachable/);
    expect(status.embedded).toBe(0);
    // Two batches in flight, each tried 3 times with tiny backoffs, then the index gives up for now.
    expect(embedder.calls).toBeGreaterThanOrEqual(3);
    expect(embedder.calls).toBeLessThanOrEqual(6);
    expect((await index.searchNotes("knife"))[0].path).toBe("Kitchen.md");

    // Keyword-only state survives a restart; the vectors come later.
    await index.close();
    down = false;
    const again = h.open();
    const later = await again.open();
    expect(later.keywordOnly).toBe(false);
    expect(later.embedderError).toBeUndefined();
    expect(later.embedded).toBe(later.chunks);
    expect((await again.searchNotes("knife"))[0].chunks[0].vectorScore).toBeGreaterThan(0);
  });

  it("retries a 429 with backoff and succeeds", async () => {
    const embedder = new HashEmbedder({
      dim: 16,
      batchSize: 64,
      failWith: (call) => (call === 0 ? new ProviderError("rate-limited", "429", 429) : null),
    });
    h = await makeHarness(files, embedder);
    const status = await h.open().open();
    expect(status.embedded).toBe(status.chunks);
    expect(status.embedderError).toBeUndefined();
  });

  it("does not retry a missing model and reports it in plain words", async () => {
    const embedder = new HashEmbedder({
      dim: 16,
      failWith: () => new ProviderError("model-missing", "Embedding model 'nomic-embed-text' is not installed: run `ollama pull nomic-embed-text`", 404),
    });
    h = await makeHarness(files, embedder);
    const status = await h.open().open();
    expect(embedder.calls).toBe(1);
    expect(status.keywordOnly).toBe(true);
    expect(status.embedderError).toMatch(/ollama pull nomic-embed-text/);
  });

  it("can be aborted mid-embedding and resumes with only the rest after a restart", async () => {
    const slow = new HashEmbedder({ dim: 16, batchSize: 2, delayMs: 5 });
    h = await makeHarness(files, slow);
    const controller = new AbortController();
    const index = h.open({ index: { embedConcurrency: 1, checkpointEveryChunks: 4, checkpointEveryMs: 60_000 } });
    index.onStatus((s) => {
      if (s.progress?.phase === "embedding" && s.progress.done >= 10) controller.abort();
    });
    await expect(index.open(controller.signal)).rejects.toThrow(/abort/i);
    const partial = index.status();
    expect(partial.embedded).toBeGreaterThanOrEqual(10);
    expect(partial.embedded).toBeLessThan(partial.chunks);
    await index.close();

    slow.reset();
    const again = h.open();
    const status = await again.open();
    expect(status.embedded).toBe(status.chunks);
    // Only what was missing: together both runs embedded each chunk once.
    expect(slow.texts.length).toBe(status.chunks - partial.embedded);
  });

  it("saves progress while embedding, not only at the end", async () => {
    let allow = 6;
    const embedder = new HashEmbedder({
      dim: 16,
      batchSize: 2,
      failWith: () => (allow-- > 0 ? null : new ProviderError("server", "500: Ollama crashed", 500)),
    });
    h = await makeHarness(files, embedder);
    const index = h.open({ index: { embedConcurrency: 1, checkpointEveryChunks: 4, retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } } });
    const status = await index.open();
    expect(status.embedded).toBe(12);
    await index.close();
    const fresh = new HashEmbedder({ dim: 16 });
    const again = h.open({ embedder: fresh });
    const reloaded = await again.open();
    expect(fresh.texts.length).toBe(reloaded.chunks - 12);
  });

  it("applies edits that arrive while a long embedding run is under way", async () => {
    const slow = new HashEmbedder({ dim: 16, batchSize: 2, delayMs: 3 });
    h = await makeHarness(files, slow);
    const index = h.open();
    const opening = index.open();
    await new Promise((r) => setTimeout(r, 30));
    await h.vault.write("Kitchen.md", "# Kitchen\n\nA whetstone keeps the knife sharp.");
    index.handleEvent({ type: "modify", path: "Kitchen.md" });
    await h.vault.remove("Garden.md");
    index.handleEvent({ type: "delete", path: "Garden.md" });
    await opening;
    await index.idle();
    const status = index.status();
    expect(status.notes).toBe(2);
    expect(status.embedded).toBe(status.chunks);
    expect((await index.searchNotes("whetstone"))[0].path).toBe("Kitchen.md");
    expect(await index.searchChunks("basil", { minScore: 0.01 }).then((hits) => hits.filter((x) => x.chunk.path === "Garden.md"))).toEqual([]);
    expect(await index.chunksOf("Garden.md")).toEqual([]);
  });

  it("reports progress and ends ready", async () => {
    h = await makeHarness(files);
    const index = h.open();
    const seen: IndexStatus[] = [];
    index.onStatus((s) => seen.push(s));
    await index.open();
    expect(seen.map((s) => s.state)).toContain("loading");
    expect(seen.some((s) => s.progress?.phase === "scanning")).toBe(true);
    expect(seen[seen.length - 1].state).toBe("ready");
    expect(seen[seen.length - 1].progress).toBeUndefined();
  });

  it("records unreadable notes as failures without stopping", async () => {
    h = await makeHarness(files);
    const { promises: fs } = await import("node:fs");
    const { join } = await import("node:path");
    // A folder named like a note: listed as .md? No: FsVault lists files only. Use a file we cannot read.
    const p = join(h.vault.root, "Locked.md");
    await fs.writeFile(p, "secret");
    await fs.chmod(p, 0o000);
    const canRead = await fs.readFile(p).then(() => true, () => false);
    const status = await h.open().open();
    if (!canRead) {
      expect(status.failures.map((f) => f.path)).toEqual(["Locked.md"]);
      expect(status.failures[0].error).toMatch(/Could not read/);
    }
    expect(status.notes).toBeGreaterThanOrEqual(3);
    await fs.chmod(p, 0o644);
  });
});
