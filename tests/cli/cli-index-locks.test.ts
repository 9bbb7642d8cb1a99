/**
 * Locks and read-only vaults with real processes: the bundled CLI killed with SIGKILL mid-index and
 * mid-rebuild, a live `krypton mcp` holding the lock, SIGTERM, `status | head`, and a vault the CLI's user
 * cannot write (run as the unprivileged user "nobody" when the tests run as root).
 */
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tempDirForFile } from "../support/temp-dirs";
import { promisify } from "node:util";
import { INDEX_FORMAT } from "../../src/core/indexing/index-persistence";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { startCli } from "../support/cli-processes";
import { useCliTestBed } from "../support/cli-test-bed";
import { buildCli, cleanEnv, runCli } from "./cli-harness";

/** Enough small notes for several embedding batches (32 texts each). */
function manyNotes(count: number): Record<string, string> {
  const notes: Record<string, string> = { "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n" };
  for (let i = 0; i < count; i++) notes[`Notes/n${i}.md`] = `# Note ${i}\n\nTopic ${i}: herons, harbours and tides number ${i}.\n`;
  return notes;
}

const lockPath = (vault: TempVault) => join(vault.root, ".krypton", "index", "write.lock");
const exists = (path: string) => fs.stat(path).then(() => true, () => false);

describe("index locks with real processes", () => {
  const bed = useCliTestBed();

  it("kill -9 mid-index: the next index takes the dead holder's lock at once, says so, and completes", async () => {
    bed.vault = await makeTempVault(manyNotes(80));
    bed.ollama.script({ route: "embed", delayMs: 400, times: Infinity });
    const run = await startCli(["index", bed.vault.root], { env: bed.env });
    run.endInput();
    await run.waitFor(async () => bed.ollama.requestsTo("embed").length >= 1 && (await exists(lockPath(bed.vault))), 30_000, "the first embed request and the lock");
    const lock = JSON.parse(await fs.readFile(lockPath(bed.vault), "utf8"));
    expect(lock).toMatchObject({ pid: run.child.pid, label: "krypton index" });
    run.kill("SIGKILL");
    expect((await run.exited()).signal).toBe("SIGKILL");
    expect(await exists(lockPath(bed.vault))).toBe(true); // SIGKILL leaves it behind: nothing can run on SIGKILL

    bed.ollama.reset();
    const next = await runCli(["index", bed.vault.root, "--json"], { env: bed.env });
    expect(next.code).toBe(0);
    expect(next.stderr).toMatch(new RegExp(`the index lock of krypton index, pid ${run.child.pid}, since \\d\\d:\\d\\d was left behind \\(that process is no longer running\\); it was taken over`));
    expect(next.stderr).not.toMatch(/waiting|another Krypton process/);
    const status = JSON.parse(next.stdout);
    expect(status.notes).toBe(81);
    expect(status.readOnly).toBeUndefined();
    expect(status.embedded).toBe(status.chunks);
    expect(await exists(lockPath(bed.vault))).toBe(false);
  });

  it("kill -9 during --rebuild keeps the old index whole: search finds every note with its vectors", async () => {
    bed.vault = await makeTempVault(manyNotes(300));
    const built = await runCli(["index", bed.vault.root, "--json"], { env: bed.env });
    expect(built.code).toBe(0);
    const before = JSON.parse(built.stdout) as { chunks: number; embedded: number };
    const dir = join(bed.vault.root, ".krypton", "index");
    const manifestBefore = await fs.readFile(join(dir, "manifest.json"), "utf8");
    const oldFiles = new Set(await fs.readdir(dir));

    // Slow embeddings: the rebuild's first checkpoint (after 5 s) writes new shard files; kill it right then.
    bed.ollama.script({ route: "embed", delayMs: 1_500, times: Infinity });
    const run = await startCli(["index", bed.vault.root, "--rebuild"], { env: bed.env });
    run.endInput();
    await run.waitFor(async () => (await fs.readdir(dir)).some((f) => f.startsWith("shard-") && !oldFiles.has(f)), 45_000, "the rebuild's first new shard file");
    run.kill("SIGKILL");
    await run.exited();
    expect(await fs.readFile(join(dir, "manifest.json"), "utf8")).toBe(manifestBefore);

    bed.ollama.reset();
    const status = await runCli(["status", bed.vault.root, "--json"], { env: bed.env });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).index).toMatchObject({ chunks: before.chunks, embedded: before.embedded });
    const search = await runCli(["search", bed.vault.root, "sourdough starter", "--json"], { env: bed.env });
    expect(search.code).toBe(0);
    expect(search.stderr).toBe("");
    expect(JSON.parse(search.stdout)[0].path).toBe("Cooking/Bread.md");
    // The next writer cleans up the rebuild's leftovers without re-embedding anything.
    bed.ollama.reset();
    const next = await runCli(["index", bed.vault.root, "--json"], { env: bed.env });
    expect(next.code).toBe(0);
    expect(bed.ollama.requestsTo("embed")).toHaveLength(0);
    const manifest = JSON.parse(await fs.readFile(join(dir, "manifest.json"), "utf8")) as { shards: { file: string }[] };
    expect((await fs.readdir(dir)).filter((f) => f.startsWith("shard-")).sort()).toEqual(manifest.shards.map((s) => s.file).sort());
  }, 90_000);

  it("a live `krypton mcp` is named as the holder; index hands it the work; status takes no lock; SIGTERM releases the lock", async () => {
    bed.vault = await makeTempVault(manyNotes(3));
    // stdin stays open: a stdio MCP server ends when its stdin closes.
    const mcp = await startCli(["mcp", bed.vault.root], { env: bed.env });
    try {
      await mcp.waitFor(async () => (await exists(lockPath(bed.vault))) && (await fs.readFile(lockPath(bed.vault), "utf8")).includes("krypton mcp"), 30_000, "krypton mcp's lock");
      await bed.vault.write("Cooking/Pizza.md", "# Pizza\n\nSourdough pizza dough.\n");

      const status = await runCli(["status", bed.vault.root, "--json"], { env: bed.env });
      expect(status.code).toBe(0);
      expect(status.stderr).not.toMatch(/another Krypton process|being updated/);
      expect(JSON.parse(status.stdout).index.notes).toBe(5); // the new note, in memory
      const human = await runCli(["status", bed.vault.root], { env: bed.env });
      expect(human.stdout).toMatch(new RegExp(`^Written by: +krypton mcp, pid ${mcp.child.pid}, since \\d\\d:\\d\\d$`, "m"));

      const index = await runCli(["index", bed.vault.root], { env: bed.env });
      expect(index.code).toBe(0);
      expect(index.stderr).toMatch(new RegExp(`the index is being written by krypton mcp, pid ${mcp.child.pid}, since \\d\\d:\\d\\d: asked it to update the index`));
      expect(index.stdout).toMatch(/^Indexed 5 notes: .*, updated by krypton mcp, pid \d+/);
      // The holder saved the new note: a fresh reader finds it on disk with its vector.
      const after = await runCli(["search", bed.vault.root, "pizza dough", "--json"], { env: bed.env });
      expect(after.stderr).toBe("");
      expect(JSON.parse(after.stdout)[0].path).toBe("Cooking/Pizza.md");
    } finally {
      mcp.kill("SIGTERM");
    }
    const ended = await mcp.exited();
    expect(ended.signal).toBe("SIGTERM");
    expect(await exists(lockPath(bed.vault))).toBe(false);
  }, 60_000);

  it("two index runs at once: the loser waits for the winner instead of failing, and never blames the embedder", async () => {
    bed.vault = await makeTempVault(manyNotes(80));
    bed.ollama.script({ route: "embed", delayMs: 100, times: Infinity });
    const [a, b] = await Promise.all([runCli(["index", bed.vault.root], { env: bed.env }), runCli(["index", bed.vault.root], { env: bed.env })]);
    for (const r of [a, b]) {
      expect(r.code).toBe(0);
      expect(r.stderr).not.toMatch(/no embedder|keywords only/);
      expect(r.stdout).toMatch(/^Indexed 81 notes/);
    }
    expect(`${a.stderr}${b.stderr}`).toMatch(/the index is being written by krypton index, pid \d+/);
  });

  it("SIGTERM mid-index releases the lock on the way out", async () => {
    bed.vault = await makeTempVault(manyNotes(80));
    bed.ollama.script({ route: "embed", delayMs: 400, times: Infinity });
    const run = await startCli(["index", bed.vault.root], { env: bed.env });
    run.endInput();
    await run.waitFor(async () => bed.ollama.requestsTo("embed").length >= 1 && (await exists(lockPath(bed.vault))), 30_000, "the first embed request and the lock");
    run.kill("SIGTERM");
    expect((await run.exited()).signal).toBe("SIGTERM");
    expect(await exists(lockPath(bed.vault))).toBe(false);
  });

  it("`status | head -2` leaves no lock behind and the next index starts at once", async () => {
    bed.vault = await makeTempVault(manyNotes(3));
    const bundle = await buildCli();
    const piped = await promisify(execFile)("sh", ["-c", `"${process.execPath}" "${bundle}" status "${bed.vault.root}" | head -2`], { env: cleanEnv(bed.env) });
    expect(piped.stdout.split("\n")[0]).toMatch(/^Vault:/);
    expect(await exists(lockPath(bed.vault))).toBe(false);
    const next = await runCli(["index", bed.vault.root], { env: bed.env });
    expect(next.code).toBe(0);
    expect(next.stderr).toBe("");
  });
});

describe("a vault the CLI cannot write", () => {
  let ollama: OllamaTestServer;
  let vault: TempVault;
  let entry: string;
  let runAs: { uid?: number; gid?: number } = {};
  /** How the folder is made read-only for the CLI, for the test names: honest about the mechanism. */
  const asRoot = process.getuid?.() === 0;

  beforeAll(async () => {
    ollama = await startOllamaServer();
    // The private bundle copy lives in a 0700 folder; another user needs a readable copy.
    const dir = tempDirForFile("krypton-cli-shared-");
    entry = join(dir, "cli.cjs");
    await fs.copyFile(await buildCli(), entry);
    await fs.chmod(dir, 0o755);
    await fs.chmod(entry, 0o644);
    if (asRoot) runAs = { uid: 65534, gid: 65534 }; // nobody: root ignores permissions, nobody does not
  }, 120_000);
  afterAll(async () => {
    await ollama.close();
    await fs.rm(join(entry, ".."), { recursive: true, force: true });
  });
  beforeEach(async () => {
    vault = await makeTempVault({ "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n", "Home.md": "# Home\n\nWelcome.\n" });
    // Readable by everyone, writable by nobody but root (and with chmod 555 not even by its owner).
    await fs.chmod(join(vault.root, ".."), 0o755).catch(() => undefined);
    for (const d of [vault.root, join(vault.root, "Cooking")]) await fs.chmod(d, 0o555);
  });
  afterEach(async () => {
    for (const d of [vault.root, join(vault.root, "Cooking")]) await fs.chmod(d, 0o755);
    await vault.cleanup();
  });

  const run = async (args: string[]) => {
    const r = await startCli(args, { entry, env: { KRYPTON_OLLAMA_URL: ollama.url, HOME: tmpdir() }, cwd: tmpdir(), ...runAs });
    r.endInput();
    return r.exited();
  };

  it(`index says it cannot write <vault>/.krypton (permission denied)${asRoot ? " (run as user nobody)" : " (chmod 555)"}`, async () => {
    const r = await run(["index", vault.root]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`krypton: the index was not saved: cannot write ${join(vault.root, ".krypton")} (permission denied)\n`);
    expect(r.stderr).not.toMatch(/another Krypton process|no embedder/);
  });

  it("search still finds notes (in memory) and says nothing about other processes", async () => {
    const r = await run(["search", vault.root, "sourdough", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)[0].path).toBe("Cooking/Bread.md");
    expect(r.stderr).not.toMatch(/another Krypton process|being updated/);
    expect(r.stderr).toBe(`krypton: warning: cannot write ${join(vault.root, ".krypton")} (permission denied), so no index with embeddings can be saved; searching by keywords only\n`);
  });

  it("ask still answers, warning that the index and the conversation are not saved", async () => {
    const r = await run(["ask", vault.root, "What goes into sourdough?", "--mode", "none"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("This is the test model's answer.");
    expect(r.stderr).toContain(`cannot write ${join(vault.root, ".krypton")} (permission denied): the index is kept in memory only and not saved`);
    expect(r.stderr).toContain(`This conversation is not saved (cannot write ${join(vault.root, ".krypton")} (permission denied))`);
    expect(r.stderr).not.toMatch(/another Krypton process/);
  });

  it.each([
    ["an existing folder", "Cooking"],
    ["a folder it would make", "Krypton"],
  ])("a note it cannot create in %s is said in words, naming the note, not the temp file it writes through", async (_what, folder) => {
    ollama.script({ route: "chat", reply: "# Photosynthesis\n\n## Overview\n\nPlants turn light into sugar." });
    const r = await run(["ask", vault.root, "create a note on photosynthesis", "--folder", folder]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`krypton: Could not save the note at ${folder}/photosynthesis.md: permission denied\n`);
    expect(r.stderr).not.toMatch(/EACCES|\.tmp|krypton-new/);
  });

  it("a goal it cannot log on is said in words too, and the goal note stays as it was", async () => {
    const goal = "---\nkrypton-goal: true\ngoal: \"Pass AWS SAA\"\nstatus: active\nminutes: 0\n---\n\n# Pass AWS SAA\n\n## Sessions\n";
    await vault.write("Study goals/Pass AWS SAA.md", goal);
    const folder = join(vault.root, "Study goals");
    await fs.chmod(folder, 0o555);
    try {
      const r = await run(["goals", vault.root, "log", "aws", "--minutes", "30"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe("krypton: Could not log on Study goals/Pass AWS SAA.md: permission denied\n");
    } finally {
      await fs.chmod(folder, 0o755);
    }
    expect(await vault.read("Study goals/Pass AWS SAA.md")).toBe(goal);
  });
});

describe("a file named .krypton in the vault", () => {
  const bed = useCliTestBed({ notes: { "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n", ".krypton": "not a folder\n" } });

  const cannotWrite = () => `cannot write ${join(bed.vault.root, ".krypton")} (it is a file, not a folder: move or rename it)`;

  it("index fails with one line naming the file and what to do", async () => {
    const r = await runCli(["index", bed.vault.root], { env: bed.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`krypton: the index was not saved: ${cannotWrite()}\n`);
    expect(await bed.vault.read(".krypton")).toBe("not a folder\n");
  });

  it("search still finds notes (in memory), as in a read-only vault", async () => {
    const r = await runCli(["search", bed.vault.root, "sourdough", "--json"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)[0].path).toBe("Cooking/Bread.md");
    expect(r.stderr).not.toMatch(/ENOTDIR|rebuilt/);
    // The real reason, not "run krypton index", which could only fail on the same file.
    expect(r.stderr).toBe(`krypton: warning: ${cannotWrite()}, so no index with embeddings can be saved; searching by keywords only\n`);
  });

  it("ask still answers, with the read-only vault's warnings", async () => {
    const r = await runCli(["ask", bed.vault.root, "What goes into sourdough?", "--mode", "none"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("This is the test model's answer.");
    expect(r.stderr).toContain(`${cannotWrite()}: the index is kept in memory only and not saved`);
    expect(r.stderr).toContain(`This conversation is not saved (${cannotWrite()})`);
    expect(r.stderr).not.toMatch(/ENOTDIR|rebuilt/);
  });
});

describe("a folder where the index keeps its manifest", () => {
  const bed = useCliTestBed({ notes: { "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n" } });
  const manifest = () => join(bed.vault.root, ".krypton", "index", "manifest.json");

  it("an empty one holds nothing: index removes it, saves, and the next run is clean", async () => {
    await fs.mkdir(manifest(), { recursive: true });
    const first = await runCli(["index", bed.vault.root], { env: bed.env });
    expect([first.code, first.stderr]).toEqual([0, `krypton: warning: the index was rebuilt: ${manifest()} is a folder, not a file\n`]);
    expect((await fs.stat(manifest())).isFile()).toBe(true);
    const again = await runCli(["index", bed.vault.root], { env: bed.env });
    expect([again.code, again.stderr]).toEqual([0, ""]);
    expect(JSON.parse((await runCli(["search", bed.vault.root, "sourdough", "--json"], { env: bed.env })).stdout)[0].path).toBe("Cooking/Bread.md");
  });

  it("one with files in it is left alone: index fails naming that folder, not a temp file, on every run", async () => {
    await fs.mkdir(manifest(), { recursive: true });
    await fs.writeFile(join(manifest(), "mine.txt"), "keep me\n");
    for (const rebuild of [[], [], ["--rebuild"]]) {
      const r = await runCli(["index", bed.vault.root, ...rebuild], { env: bed.env });
      expect(r.code).toBe(1);
      // Only the error: no "the index was rebuilt" before it, no temp file, no EISDIR.
      expect(r.stderr).toBe(`krypton: cannot write ${manifest()}: it is a folder with files in it, where Krypton keeps a file; move or remove that folder\n`);
      // The shard written before the manifest failed is named by no manifest: it is not left behind.
      expect(await fs.readdir(join(bed.vault.root, ".krypton", "index"))).toEqual(["manifest.json"]);
    }
    expect(await fs.readFile(join(manifest(), "mine.txt"), "utf8")).toBe("keep me\n");
    // Search still answers, from memory.
    const found = await runCli(["search", bed.vault.root, "sourdough", "--json"], { env: bed.env });
    expect([found.code, JSON.parse(found.stdout)[0].path]).toEqual([0, "Cooking/Bread.md"]);
  });
});

describe("a folder where the next save would put a shard file", () => {
  const bed = useCliTestBed({ notes: { "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n" } });
  const indexFolder = () => join(bed.vault.root, ".krypton", "index");

  it("is left alone, the index is saved under the next name, and index exits 0 naming the folder once", async () => {
    expect((await runCli(["index", bed.vault.root], { env: bed.env })).code).toBe(0);
    const saved = JSON.parse(await fs.readFile(join(indexFolder(), "manifest.json"), "utf8")) as { generation: number; shards: { id: number }[] };
    const folder = join(indexFolder(), `shard-${saved.shards[0].id}-${saved.generation + 1}.bin`);
    await fs.mkdir(folder);
    await fs.writeFile(join(folder, "mine.txt"), "keep me\n");
    await bed.vault.write("Cooking/Bread.md", "# Sourdough bread\n\nFlour, water, salt, rye and a lively starter.\n");

    const r = await runCli(["index", bed.vault.root], { env: bed.env });
    expect([r.code, r.stderr]).toEqual([
      0,
      `krypton: warning: ${folder} is a folder with files in it, where Krypton would have saved part of its index: it was left alone and the index saved under another file name; move that folder out of .krypton\n`,
    ]);
    expect(await fs.readFile(join(folder, "mine.txt"), "utf8")).toBe("keep me\n");
    // What is on disk is the saved index: its manifest names only shard files that are files.
    const manifest = JSON.parse(await fs.readFile(join(indexFolder(), "manifest.json"), "utf8")) as { shards: { file: string }[] };
    for (const { file } of manifest.shards) expect((await fs.stat(join(indexFolder(), file))).isFile()).toBe(true);
    const found = await runCli(["search", bed.vault.root, "rye", "--json"], { env: bed.env });
    expect([found.code, found.stderr, JSON.parse(found.stdout)[0].path]).toEqual([0, "", "Cooking/Bread.md"]);
    // The next run saves nothing new under that name: it says nothing.
    const again = await runCli(["index", bed.vault.root], { env: bed.env });
    expect([again.code, again.stderr]).toEqual([0, ""]);
  });

  it("does not keep the files a killed writer left after it from being cleaned up", async () => {
    expect((await runCli(["index", bed.vault.root], { env: bed.env })).code).toBe(0);
    await fs.mkdir(join(indexFolder(), "shard-0-0.bin"));
    await fs.writeFile(join(indexFolder(), "shard-0-0.bin", "mine.txt"), "keep me\n");
    // Sorted after the folder: a stray shard and a temp file of a write that was killed.
    await fs.writeFile(join(indexFolder(), "shard-7-1.bin"), "stale");
    await fs.writeFile(join(indexFolder(), "shard-7-1.bin.123-abcd.tmp"), "half");
    expect((await runCli(["index", bed.vault.root], { env: bed.env })).code).toBe(0);
    const left = await fs.readdir(indexFolder());
    expect(left).toContain("shard-0-0.bin");
    expect(left).not.toContain("shard-7-1.bin");
    expect(left).not.toContain("shard-7-1.bin.123-abcd.tmp");
    expect(await fs.readFile(join(indexFolder(), "shard-0-0.bin", "mine.txt"), "utf8")).toBe("keep me\n");
  });
});

describe("an index saved by a newer Krypton", () => {
  const bed = useCliTestBed({ notes: { "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n" } });
  const indexFolder = () => join(bed.vault.root, ".krypton", "index");
  const files = async () => {
    const out: Record<string, string> = {};
    for (const name of (await fs.readdir(indexFolder())).sort()) out[name] = (await fs.readFile(join(indexFolder(), name))).toString("hex");
    return out;
  };
  const newer = `the index was saved by a newer version of Krypton (index format ${INDEX_FORMAT + 1}; this version reads up to format ${INDEX_FORMAT}), which this version leaves as it is: update Krypton (\`git pull && npm ci\` in its folder)`;

  beforeEach(async () => {
    expect((await runCli(["index", bed.vault.root], { env: bed.env })).code).toBe(0);
    const manifest = join(indexFolder(), "manifest.json");
    await fs.writeFile(manifest, JSON.stringify({ ...JSON.parse(await fs.readFile(manifest, "utf8")), format: INDEX_FORMAT + 1 }));
    bed.ollama.reset();
  });

  it("is never written over: index refuses with what to do, search answers by keywords from memory, nothing is embedded", async () => {
    const before = await files();
    const index = await runCli(["index", bed.vault.root], { env: bed.env });
    expect([index.code, index.stderr]).toEqual([1, `krypton: the index was not saved: ${newer}\n`]);
    const rebuild = await runCli(["index", bed.vault.root, "--rebuild"], { env: bed.env });
    expect([rebuild.code, rebuild.stderr]).toEqual([1, `krypton: the index was not saved: ${newer}\n`]);
    const search = await runCli(["search", bed.vault.root, "sourdough", "--json"], { env: bed.env });
    expect([search.code, JSON.parse(search.stdout)[0].path]).toEqual([0, "Cooking/Bread.md"]);
    expect(search.stderr).toBe(`krypton: warning: ${newer}: the index is kept in memory only and not saved; searching by keywords only\n`);
    expect(bed.ollama.requestsTo("embed")).toHaveLength(0);
    expect(await files()).toEqual(before);
  });
});
