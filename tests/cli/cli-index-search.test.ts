/**
 * `krypton index | search | status` end to end: the bundled CLI in a child process, a real temp vault,
 * and the loopback Ollama server for embeddings.
 */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { startOllamaServer } from "../support/servers/ollama-server";
import { makeTempVault } from "../support/temp-vault";
import { useCliTestBed } from "../support/cli-test-bed";
import { VaultIndex } from "../../src/core/indexing/vault-index";
import { silentLogger } from "../../src/core/ports/logger";
import { createOllamaEmbedder } from "../../src/core/providers/ollama/ollama-embedder";
import { DEFAULT_SETTINGS } from "../../src/core/settings";
import { createNodeHost } from "../../src/node/node-host";
import { buildCli, REPO_ROOT, runCli } from "./cli-harness";

const NOTES: Record<string, string> = {
  "Machine Learning/Gradient descent.md":
    "---\ntags: [ml]\n---\n# Gradient descent\n\nGradient descent walks downhill on the loss surface. The learning rate sets the step size of gradient descent.\n",
  "Machine Learning/Backpropagation.md": "# Backpropagation\n\nBackpropagation computes the gradient of the loss for every weight, layer by layer.\n",
  "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter. Bake at 250 degrees.\n",
  "Travel/Lisbon.md": "# Lisbon\n\nTrams, custard tarts and steep hills. The descent to the river is steep.\n",
  "Home.md": "# Home\n\nWelcome to the vault. See [[Gradient descent]] and [[Sourdough bread]].\n",
};

interface SearchJson {
  path: string;
  title: string;
  snippet: string;
  score: number;
}

describe("krypton index / search / status", () => {
  const bed = useCliTestBed({ notes: NOTES });

  it("index --json builds <vault>/.krypton with vectors from the embedder and prints the IndexStatus", async () => {
    const r = await runCli(["index", bed.vault.root, "--json"], { env: bed.env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const status = JSON.parse(r.stdout) as { state: string; notes: number; chunks: number; embedded: number; keywordOnly: boolean; embedder: string };
    expect(status.state).toBe("ready");
    expect(status.notes).toBe(5);
    expect(status.chunks).toBeGreaterThanOrEqual(5);
    expect(status.embedded).toBe(status.chunks);
    expect(status.keywordOnly).toBe(false);
    expect(status.embedder).toContain("nomic-embed-text");
    expect(bed.ollama.requestsTo("embed").length).toBeGreaterThan(0);
    expect((await fs.readdir(join(bed.vault.root, ".krypton"))).length).toBeGreaterThan(0);

    // A second run changes nothing, so it embeds nothing.
    bed.ollama.reset();
    const again = await runCli(["index", bed.vault.root, "--json"], { env: bed.env });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).chunks).toBe(status.chunks);
    expect(bed.ollama.requestsTo("embed")).toHaveLength(0);
  });

  it("index without --json prints a one-line summary on stdout and nothing on stderr (no TTY, no progress bar)", async () => {
    const r = await runCli(["index", bed.vault.root], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Indexed 5 notes: \d+ chunks, \d+ of them with vectors from ollama:nomic-embed-text/);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toBe("");
  });

  it("search --json prints [{path, title, snippet, score}], vault-relative, best first, one entry per note", async () => {
    const r = await runCli(["search", bed.vault.root, "gradient descent", "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    const results = JSON.parse(r.stdout) as SearchJson[];
    expect(results.length).toBeGreaterThan(0);
    for (const hit of results) {
      expect(Object.keys(hit).sort()).toEqual(["path", "score", "snippet", "title"]);
      expect(typeof hit.snippet).toBe("string");
      expect(hit.path.startsWith("/")).toBe(false);
      expect(hit.path.endsWith(".md")).toBe(true);
    }
    expect(results[0].path).toBe("Machine Learning/Gradient descent.md");
    expect(results[0].title).toBe("Gradient descent");
    const scores = results.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(new Set(results.map((h) => h.path)).size).toBe(results.length);
    // search never writes the index (no lock, no .krypton): without a saved index it says how to build one.
    expect(await bed.vault.exists(".krypton")).toBe(false);
    expect(r.stderr).toMatch(/warning: the saved index has no embeddings yet \(run `krypton index .*`\); searching by keywords only/);

    // After `krypton index`, search ranks by meaning too: the query itself is embedded.
    expect((await runCli(["index", bed.vault.root], { env: bed.env })).code).toBe(0);
    bed.ollama.reset();
    const semantic = await runCli(["search", bed.vault.root, "gradient descent", "--json"], { env: bed.env });
    expect(semantic.stderr).toBe("");
    expect((JSON.parse(semantic.stdout) as SearchJson[])[0].path).toBe("Machine Learning/Gradient descent.md");
    expect(bed.ollama.requestsTo("embed")).toHaveLength(1);
  });

  it("search answers from the saved index in place while no note changed, and loads it (with the change) once one did", async () => {
    expect((await runCli(["index", bed.vault.root], { env: bed.env })).code).toBe(0);
    const debug = { ...bed.env, KRYPTON_DEBUG: "1" };
    const inPlace = await runCli(["search", bed.vault.root, "steep hills", "--json"], { env: debug });
    expect(inPlace.code).toBe(0);
    expect(inPlace.stderr).toMatch(/Searched the saved index in place \(1 shards, \d+ chunks\)/);
    expect((JSON.parse(inPlace.stdout) as SearchJson[])[0].path).toBe("Travel/Lisbon.md");

    await fs.writeFile(join(bed.vault.root, "Travel/Porto.md"), "# Porto\n\nSteep hills above the river, port wine cellars.\n");
    const loaded = await runCli(["search", bed.vault.root, "port wine cellars", "--json"], { env: debug });
    expect(loaded.code).toBe(0);
    expect(loaded.stderr).toMatch(/The saved index is not current/);
    expect(loaded.stderr).not.toMatch(/Searched the saved index in place/);
    expect((JSON.parse(loaded.stdout) as SearchJson[])[0].path).toBe("Travel/Porto.md");
  });

  it("index finds chunk texts damaged on disk, indexes their notes again and says so; the next search answers in place again", async () => {
    expect((await runCli(["index", bed.vault.root], { env: bed.env })).code).toBe(0);
    const indexDir = join(bed.vault.root, ".krypton", "index");
    const manifest = JSON.parse(await fs.readFile(join(indexDir, "manifest.json"), "utf8")) as { shards: { file: string }[] };
    const file = join(indexDir, manifest.shards[0].file);
    const bytes = await fs.readFile(file);
    bytes[bytes.length - 2] ^= 0x21; // a chunk text: the part a load does not check
    await fs.writeFile(file, bytes);
    const debug = { ...bed.env, KRYPTON_DEBUG: "1" };
    const damaged = await runCli(["search", bed.vault.root, "steep hills", "--json"], { env: debug });
    expect(damaged.stderr).not.toMatch(/Searched the saved index in place/);

    const repaired = await runCli(["index", bed.vault.root], { env: bed.env });
    expect(repaired.code).toBe(0);
    expect(repaired.stderr).toMatch(/the index was damaged: .*checksum mismatch.*its notes were indexed again/);
    expect((await runCli(["index", bed.vault.root], { env: bed.env })).stderr).not.toMatch(/damaged/);
    const inPlace = await runCli(["search", bed.vault.root, "steep hills", "--json"], { env: debug });
    expect(inPlace.stderr).toMatch(/Searched the saved index in place/);
    expect((JSON.parse(inPlace.stdout) as SearchJson[])[0].path).toBe("Travel/Lisbon.md");
  });

  it("search on an index whose shard is cut short says the saved index is damaged, not that it has no embeddings yet", async () => {
    expect((await runCli(["index", bed.vault.root], { env: bed.env })).code).toBe(0);
    const indexDir = join(bed.vault.root, ".krypton", "index");
    const manifest = JSON.parse(await fs.readFile(join(indexDir, "manifest.json"), "utf8")) as { shards: { file: string }[] };
    const file = join(indexDir, manifest.shards[0].file);
    await fs.truncate(file, 100);
    const r = await runCli(["search", bed.vault.root, "steep hills", "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as SearchJson[])[0].path).toBe("Travel/Lisbon.md");
    expect(r.stderr).toContain(`krypton: warning: the saved index could not be used (run \`krypton index ${bed.vault.root}\` to repair it); searching by keywords only\n`);
    expect(r.stderr).not.toMatch(/no embeddings yet/);
    expect((await fs.stat(file)).size).toBe(100); // search never writes the index
  });

  it("search --limit caps the result count; the query may be several words without quotes", async () => {
    const r = await runCli(["search", bed.vault.root, "steep", "descent", "--limit", "1", "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(1);
  });

  it("search without --json prints numbered results with path and snippet", async () => {
    const r = await runCli(["search", bed.vault.root, "sourdough starter"], { env: bed.env });
    expect(r.code).toBe(0);
    const first = r.stdout.split("\n")[0];
    expect(first).toMatch(/^ 1\. Sourdough bread {2}Cooking\/Bread\.md:\d+ {2}\d\.\d\d$/);
  });

  it("search with nothing matching prints [] with --json and exits 0", async () => {
    const r = await runCli(["search", bed.vault.root, "zyzzyva", "--json", "--no-embeddings"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
  });

  it("search says when a query has only common words or no words, which search ignores (on stderr, with --json too)", async () => {
    const common = await runCli(["search", bed.vault.root, "the", "and", "of", "--no-embeddings"], { env: bed.env });
    expect(common.code).toBe(0);
    expect(common.stderr).toBe('"the and of" has only common words, which search ignores; add a word that names the topic.\n');
    const marks = await runCli(["search", bed.vault.root, "?!...", "--no-embeddings", "--json"], { env: bed.env });
    expect(marks.code).toBe(0);
    expect(JSON.parse(marks.stdout)).toEqual([]);
    expect(marks.stderr).toBe('"?!..." has no words to search for; type a word that names the topic.\n');
    // A query with a word that counts but matches nothing still says only that.
    const other = await runCli(["search", bed.vault.root, "the", "zyzzyva", "--no-embeddings"], { env: bed.env });
    expect(other.stderr).toBe('No notes match "the zyzzyva".\n');
  });

  it("index says when the exclude patterns leave no note to index, naming the patterns that take them", async () => {
    const r = await runCli(["index", bed.vault.root, "--no-embeddings", "--exclude", "Cooking/", "--exclude", "Nowhere/", "--exclude", "**"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('krypton: warning: The exclude patterns leave no note to index: every note matches "Cooking/" or "**"\n');
    const search = await runCli(["search", bed.vault.root, "sourdough", "--no-embeddings", "--exclude", "**"], { env: bed.env });
    expect(search.stderr).toContain('krypton: warning: The exclude patterns leave no note to index: every note matches "**"\n');
    const kept = await runCli(["index", bed.vault.root, "--no-embeddings", "--exclude", "Cooking/"], { env: bed.env });
    expect(kept.stderr).not.toContain("leave no note");
  });

  it("with Ollama unreachable, search falls back to keywords with one warning line and exits 0", async () => {
    await bed.ollama.close();
    try {
      const r = await runCli(["search", bed.vault.root, "sourdough", "--json"], { env: bed.env });
      expect(r.code).toBe(0);
      const results = JSON.parse(r.stdout) as SearchJson[];
      expect(results[0].path).toBe("Cooking/Bread.md");
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^krypton: warning: .*keywords only/);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    } finally {
      bed.ollama = await startOllamaServer();
    }
  });

  it("with Ollama down, index says notes are indexed by keywords and a later run adds the vectors, which it does", async () => {
    const built = JSON.parse((await runCli(["index", bed.vault.root, "--json"], { env: bed.env })).stdout) as { chunks: number };
    await bed.vault.write("Cooking/Pizza.md", "# Pizza\n\nSourdough pizza dough.\n");
    const down = await runCli(["index", bed.vault.root, "--json"], { env: { KRYPTON_OLLAMA_URL: "http://127.0.0.1:9" } });
    expect(down.code).toBe(0);
    expect(down.stderr).toBe(
      "krypton: warning: Ollama is not reachable at http://127.0.0.1:9 (connection refused: is it running?); notes are indexed by keywords only " +
        "(saved vectors are kept), and a later `krypton index` adds the missing vectors once the model is reachable\n",
    );
    expect(JSON.parse(down.stdout)).toMatchObject({ chunks: built.chunks + 1, embedded: built.chunks });
    // The summary says the vectors already there were kept, not "no embeddings".
    const summary = await runCli(["index", bed.vault.root], { env: { KRYPTON_OLLAMA_URL: "http://127.0.0.1:9" } });
    expect(summary.stdout).toMatch(new RegExp(`keyword-only this run \\(${built.chunks} with vectors kept from ollama:`));
    bed.ollama.reset();
    const back = await runCli(["index", bed.vault.root, "--json"], { env: bed.env });
    expect(JSON.parse(back.stdout)).toMatchObject({ embedded: built.chunks + 1, keywordOnly: false });
    expect(bed.ollama.requestsTo("embed").map((q) => JSON.stringify(q.body))).toEqual([expect.stringContaining("Sourdough pizza dough.")]);
  });

  it("a keyword-only run while Ollama is down keeps the vectors already in the index", async () => {
    const built = await runCli(["index", bed.vault.root, "--json"], { env: bed.env });
    const chunks = JSON.parse(built.stdout).chunks as number;
    const down = await runCli(["search", bed.vault.root, "sourdough", "--json"], { env: { KRYPTON_OLLAMA_URL: "http://127.0.0.1:9" } });
    expect(down.code).toBe(0);
    bed.ollama.reset();
    const back = await runCli(["index", bed.vault.root, "--json"], { env: bed.env });
    expect(JSON.parse(back.stdout)).toMatchObject({ embedded: chunks, keywordOnly: false });
    expect(bed.ollama.requestsTo("embed")).toHaveLength(0);
  });

  it("while another process (the plugin) writes the index: search reads the saved index, index waits (bounded) and refuses to write", async () => {
    await runCli(["index", bed.vault.root], { env: bed.env });
    // A live writer's lock, as an older plugin holds it while the vault is open (no pid: judged by its heartbeat).
    await bed.vault.write(".krypton/index/write.lock", JSON.stringify({ owner: "obsidian-plugin", at: Date.now() }));
    await bed.vault.write("Cooking/Pizza.md", "# Pizza\n\nSourdough pizza dough.\n");

    const search = await runCli(["search", bed.vault.root, "sourdough", "--json"], { env: bed.env });
    expect(search.code).toBe(0);
    // search never asks for the lock; the new note is searched in memory, by keywords until indexed.
    expect(search.stderr).toMatch(/warning: 1 of \d+ chunks changed since the last `krypton index` and is searched by keywords only/);
    expect((JSON.parse(search.stdout) as SearchJson[]).map((h) => h.path)).toEqual(expect.arrayContaining(["Cooking/Bread.md", "Cooking/Pizza.md"]));

    // The holder never answers the request (it is a file, not a process): index gives up after --wait.
    const index = await runCli(["index", bed.vault.root, "--wait", "1"], { env: bed.env });
    expect(index.code).toBe(1);
    expect(index.stderr).toMatch(/the index is being written by another Krypton process: asked it to update the index; waiting up to 1 s/);
    expect(index.stderr).toMatch(/krypton: the index was not updated: another Krypton process is writing it and did not update it within 1 s/);
    expect(index.stderr).not.toMatch(/no embedder is reachable/);
    expect(await bed.vault.read(".krypton/index/write.lock")).toContain("obsidian-plugin");
  });

  it("the plugin and the CLI on the same vault at once: CLI runs read while the plugin writes, and the index stays whole", async () => {
    // The plugin's side: the same core VaultIndex the plugin runs, in this process, with the same embedder.
    const settings = { ...DEFAULT_SETTINGS, ollamaUrl: bed.ollama.url, excludePatterns: [], mcpAllowedOrigins: [] };
    const host = createNodeHost(bed.vault.root, { logger: silentLogger });
    const embedder = createOllamaEmbedder(settings, host);
    const plugin = new VaultIndex({
      host,
      settings: () => settings,
      embedder: () => embedder,
      options: { debounceMs: 1, checkpointEveryChunks: 1, lock: { heartbeatMs: 50 } },
    });
    try {
      await plugin.open();
      // The plugin keeps applying edits (and saving) while CLI processes index and search the same folder.
      let editing = true;
      const edits = (async () => {
        for (let i = 0; editing || i < 3; i++) {
          const path = `Journal/day-${i % 6}.md`;
          await bed.vault.write(path, `# Day ${i % 6}\n\nEntry ${i}: walked to the harbour, saw herons ${i}.\n`);
          plugin.handleEvent({ type: i < 6 ? "create" : "modify", path });
          await plugin.idle();
        }
      })();
      const runs = await Promise.all([
        runCli(["index", bed.vault.root, "--json"], { env: bed.env }),
        runCli(["search", bed.vault.root, "sourdough", "--json"], { env: bed.env }),
        runCli(["search", bed.vault.root, "gradient descent", "--json"], { env: bed.env }),
        runCli(["status", bed.vault.root, "--json"], { env: bed.env }),
      ]);
      editing = false;
      await edits;
      const [index, search1, search2, status] = runs;
      // The CLI never writes under a live writer: it asks the writer to update, waits for that, and reports.
      expect(index.code).toBe(0);
      expect(index.stderr).toMatch(/the index is being written by krypton, pid \d+, since \d\d:\d\d: asked it to update the index/);
      expect(JSON.parse(index.stdout)).toMatchObject({ readOnly: true, heldBy: expect.stringMatching(/^krypton, pid/) });
      for (const r of [search1, search2]) {
        expect(r.code).toBe(0);
        expect(r.stderr).not.toMatch(/rebuilt|damaged|corrupt/i);
      }
      expect((JSON.parse(search1.stdout) as SearchJson[])[0].path).toBe("Cooking/Bread.md");
      expect((JSON.parse(search2.stdout) as SearchJson[])[0].path).toBe("Machine Learning/Gradient descent.md");
      expect(status.code).toBe(0);
    } finally {
      await plugin.close();
    }
    // The plugin closed: the CLI becomes the writer, finds a whole index (nothing rebuilt) with every note, and embeds nothing new.
    bed.ollama.reset();
    const after = await runCli(["index", bed.vault.root, "--json"], { env: bed.env });
    expect(after.code).toBe(0);
    const status = JSON.parse(after.stdout) as { notes: number; chunks: number; embedded: number; rebuiltReason?: string };
    expect(status.rebuiltReason).toBeUndefined();
    expect(status.notes).toBe(5 + 6);
    expect(status.embedded).toBe(status.chunks);
    expect(bed.ollama.requestsTo("embed")).toHaveLength(0);
  });

  it("--no-embeddings builds a keyword-only index without calling the embedder", async () => {
    const r = await runCli(["index", bed.vault.root, "--no-embeddings", "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    const status = JSON.parse(r.stdout);
    expect(status.keywordOnly).toBe(true);
    expect(status.embedded).toBe(0);
    expect(bed.ollama.requests).toHaveLength(0);
    expect(r.stderr).toBe("");
  });

  it("status --json reports the index and the settings in use, with keys only as set/not set", async () => {
    await runCli(["index", bed.vault.root], { env: bed.env });
    const r = await runCli(["status", bed.vault.root, "--json"], { env: { ...bed.env, GEMINI_API_KEY: "gemini-secret-123", TAVILY_API_KEY: "tvly-secret-456" } });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.vault).toBe(bed.vault.root);
    expect(out.index).toMatchObject({ state: "ready", notes: 5, keywordOnly: false });
    expect(out.settings).toMatchObject({ ollamaUrl: bed.ollama.url, geminiApiKey: "set", tavilyApiKey: "set" });
    expect(r.stdout + r.stderr).not.toContain("gemini-secret-123");
    expect(r.stdout + r.stderr).not.toContain("tvly-secret-456");

    const human = await runCli(["status", bed.vault.root], { env: bed.env });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Index: +ready$/m);
    expect(human.stdout).toMatch(/^Notes: +5$/m);
  });

  it("status counts one skipped note and one note indexed in part in the singular", async () => {
    // 100-character chunks: a note of 2,100 paragraphs is over the 2,000-chunk limit without being large.
    await bed.vault.write(".obsidian/plugins/krypton/data.json", JSON.stringify({ embeddingProvider: "none", chunkMaxChars: 100 }));
    const paragraphs = Array.from({ length: 2_100 }, (_, i) => `Paragraph ${i} about herons and tides, long enough to fill a chunk of one hundred characters.`);
    await bed.vault.write("Big.md", `# Big\n\n${paragraphs.join("\n\n")}\n`);
    const binary = (name: string) => fs.writeFile(join(bed.vault.root, name), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0]));
    await binary("Image.md");
    const r = await runCli(["status", bed.vault.root], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Skipped: +1 note \(see warnings\)$/m);
    expect(r.stdout).toMatch(/^In part: +1 note over a per-note limit \(see warnings\)$/m);

    // Five warnings are shown by name; the sixth skipped note is counted.
    for (let i = 0; i < 5; i++) await binary(`Image${i}.md`);
    const more = await runCli(["status", bed.vault.root], { env: bed.env });
    expect(more.stdout).toMatch(/^Skipped: +6 notes \(see warnings\)$/m);
    expect(more.stderr).toContain("krypton: warning: ... and 1 more note skipped\n");
  });

  it("an unreadable note is skipped with a warning naming it; the rest is indexed (exit 0)", async () => {
    const note = join(bed.vault.root, "Travel", "Lisbon.md");
    if (process.getuid?.() === 0) {
      // Root reads every file whatever its mode: a note that is a link to /proc/self/mem fails to read (EIO) instead.
      await fs.rm(note);
      await fs.symlink("/proc/self/mem", note);
    } else {
      await fs.chmod(note, 0o000);
    }
    const r = await runCli(["index", bed.vault.root, "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^krypton: warning: .*Travel\/Lisbon\.md/)]);
    expect(JSON.parse(r.stdout).notes).toBeGreaterThanOrEqual(4);
  });

  describe("errors", () => {
    it("a vault path that does not exist: one line, exit 1, no stack trace", async () => {
      const r = await runCli(["search", join(bed.vault.root, "nope"), "x"], { env: bed.env });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(`krypton: vault not found: ${join(bed.vault.root, "nope")} (no such folder)\n`);
    });

    it("KRYPTON_DEBUG=1 adds the stack trace", async () => {
      const r = await runCli(["search", join(bed.vault.root, "nope"), "x"], { env: { ...bed.env, KRYPTON_DEBUG: "1" } });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^krypton: vault not found/);
      expect(r.stderr).toMatch(/\n\s+at /);
    });

    it("a file instead of a folder", async () => {
      const r = await runCli(["index", join(bed.vault.root, "Home.md")], { env: bed.env });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^krypton: not a vault: .*Home\.md is a file, not a folder\n$/);
    });

    it("wrong arguments: exit 2 with a pointer to --help", async () => {
      const missing = await runCli(["search", bed.vault.root], { env: bed.env });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/missing <query>.*krypton search --help/);
      const unknown = await runCli(["index", bed.vault.root, "--jsn"], { env: bed.env });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/unknown option --jsn \(did you mean --json\?\)/);
      const badLimit = await runCli(["search", bed.vault.root, "x", "--limit", "many"], { env: bed.env });
      expect(badLimit.code).toBe(2);
      const badEnv = await runCli(["search", bed.vault.root, "x"], { env: { ...bed.env, KRYPTON_EMBEDDING_PROVIDER: "openai" } });
      expect(badEnv.code).toBe(2);
      expect(badEnv.stderr).toMatch(/KRYPTON_EMBEDDING_PROVIDER must be one of/);
      const command = await runCli(["serch"], { env: bed.env });
      expect(command.code).toBe(2);
      expect(command.stderr).toMatch(/unknown command "serch" \(did you mean "search"\?\)/);
    });

    it("an embedding model that is not pulled: keyword-only with a warning saying what to do", async () => {
      const r = await runCli(["index", bed.vault.root, "--json", "--embedding-model", "missing-model"], { env: bed.env });
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ keywordOnly: true, embedded: 0 });
      expect(r.stderr).toMatch(/missing-model/);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    });
  });

  describe("settings precedence: data.json < environment < flags", () => {
    it("takes the embedding model from data.json, then env, then the flag", async () => {
      bed.ollama.models = [...bed.ollama.models, "from-data", "from-env", "from-flag"];
      await bed.vault.write(".obsidian/plugins/krypton/data.json", JSON.stringify({ embeddingModel: "from-data", ollamaUrl: "http://127.0.0.1:9" }));
      const modelsUsed = () => [...new Set(bed.ollama.requestsTo("embed").map((r) => r.model))];

      // data.json names a dead Ollama URL; the environment's URL wins.
      await runCli(["index", bed.vault.root, "--rebuild"], { env: bed.env });
      expect(modelsUsed()).toEqual(["from-data"]);

      bed.ollama.reset();
      await runCli(["index", bed.vault.root, "--rebuild"], { env: { ...bed.env, KRYPTON_EMBEDDING_MODEL: "from-env" } });
      expect(modelsUsed()).toEqual(["from-env"]);

      bed.ollama.reset();
      await runCli(["index", bed.vault.root, "--rebuild", "--embedding-model", "from-flag"], { env: { ...bed.env, KRYPTON_EMBEDDING_MODEL: "from-env" } });
      expect(modelsUsed()).toEqual(["from-flag"]);
    });

    it("uses data.json's Ollama URL when nothing overrides it", async () => {
      await bed.vault.write(".obsidian/plugins/krypton/data.json", JSON.stringify({ ollamaUrl: bed.ollama.url }));
      const r = await runCli(["index", bed.vault.root, "--json"], { env: { KRYPTON_OLLAMA_URL: "" } }); // empty = unset
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).keywordOnly).toBe(false);
      expect(bed.ollama.requestsTo("embed").length).toBeGreaterThan(0);
    });

    it("a corrupt data.json is a warning, not a failure", async () => {
      await bed.vault.write(".obsidian/plugins/krypton/data.json", "{oops");
      const r = await runCli(["search", bed.vault.root, "sourdough", "--json"], { env: bed.env });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/warning: ignoring .*data\.json: it is not valid JSON/);
      expect(JSON.parse(r.stdout)[0].path).toBe("Cooking/Bread.md");
    });
  });

  it("README quick start: search on a copy of examples/demo-vault with no servers running", async () => {
    const copy = await makeTempVault({});
    try {
      await fs.cp(join(REPO_ROOT, "examples", "demo-vault"), copy.root, { recursive: true });
      // Nothing listens on the default Ollama port here (cleanEnv points it at a dead port).
      const r = await runCli(["search", copy.root, "gradient descent", "--json"], { env: {} });
      expect(r.code).toBe(0);
      const results = JSON.parse(r.stdout) as SearchJson[];
      expect(results[0].path).toBe("Machine Learning/Gradient descent.md");
      expect(r.stderr).toMatch(/keywords only/);
    } finally {
      await copy.cleanup();
    }
  });

  it("`npx krypton` entry (bin/krypton.cjs) prints help and version", async () => {
    const help = await runCli(["--help"], { viaBin: true });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: krypton <command>/);
    const pkg = JSON.parse(await fs.readFile(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
    const version = await runCli(["--version"], { viaBin: true });
    expect(version.stdout.trim()).toBe(pkg.version);
    const commandHelp = await runCli(["search", "--help"]);
    expect(commandHelp.code).toBe(0);
    expect(commandHelp.stdout).toMatch(/--limit N/);
  });
});

describe("krypton index on a terminal", () => {
  const hasScript = (() => {
    try {
      require("node:child_process").execFileSync("script", ["--version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();
  // util-linux `script` gives the CLI a pseudo-terminal, the only way to see what a user at a terminal sees.
  (hasScript ? it : it.skip)("draws a progress bar on stderr while indexing, then prints the summary", async () => {
    await buildCli();
    const ollama = await startOllamaServer();
    const notes: Record<string, string> = {};
    for (let i = 0; i < 120; i++) notes[`Notes/note-${i}.md`] = `# Note ${i}\n\nSome text about topic ${i} and gradient descent.\n`;
    const vault = await makeTempVault(notes);
    try {
      // Slow embeddings so progress is shown for a while (the bar redraws at most every 100 ms).
      ollama.script({ route: "embed", delayMs: 150, times: Infinity });
      const bundle = await buildCli();
      const command = [process.execPath, bundle, "index", vault.root, "--embedding-model", "nomic-embed-text"].map((a) => `'${a}'`).join(" ");
      const { execFile } = await import("node:child_process");
      const output = await new Promise<string>((resolve, reject) =>
        execFile("script", ["-qfec", command, "/dev/null"], { env: { PATH: process.env.PATH ?? "", KRYPTON_OLLAMA_URL: ollama.url, TERM: "xterm" } }, (err, stdout) =>
          err ? reject(err) : resolve(stdout),
        ),
      );
      expect(output).toMatch(/Indexing \[[█░]+\] [\d,]+ \/ [\d,]+ notes \(chunking\)/);
      // While embedding the bar counts chunks, and says so.
      expect(output).toMatch(/Indexing \[[█░]+\] [\d,]+ \/ [\d,]+ chunks \(embedding\)/);
      expect(output).not.toMatch(/notes \(embedding\)/);
      expect(output).toMatch(/Indexed 120 notes: \d+ chunks, \d+ of them with vectors from ollama:nomic-embed-text/);
    } finally {
      await vault.cleanup();
      await ollama.close();
    }
  });
});
