/**
 * Issue 10 through the entry points a user hits: the bundled CLI as a real process and `krypton mcp` driven
 * by the real MCP SDK client, on real files: symlinks in and out of the vault, binary ".md" files, a Latin-1
 * note, a mixed-case excluded folder, and notes whose text a snippet must quote faithfully.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtempSync, promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { buildCli, cleanEnv, runCli } from "./cli-harness";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x71, 0x75, 0x61, 0x72, 0x6b]);

const NOTES: Record<string, string> = {
  "Ads/Tracking.md":
    "# Tracking\n\nThe click parameter `ctwa_clid` identifies the ad; the field ctwa_clid is stored raw. " +
    "Download op_darwin_arm64_v1.zip and back up every *.sql file. We get ~24/día visits, **bold** words stay words.\n",
  "Help/Links.md": "# Links\n\nTyping [[#Preview a linked file]] will create a link to a heading. See [[Other note#Setup|the setup guide]] too.\n",
  "Notes/Real.md": "# Real\n\nThe zebrafish regenerates its fins.\n",
  "private/Diary.md": "# Diary\n\nThe marmalade plan is secret.\n",
};

interface Hit {
  path: string;
  snippet: string;
}

describe("one read policy, faithful snippets (CLI and MCP)", () => {
  let vault: TempVault;
  let outside: string;
  let bundle: string;
  const noEmbed = ["--no-embeddings"];

  beforeAll(async () => {
    bundle = await buildCli();
  }, 120_000);
  beforeEach(async () => {
    vault = await makeTempVault(NOTES);
    outside = mkdtempSync(join(tmpdir(), "krypton-outside-"));
    await fs.writeFile(join(outside, "secret.md"), "# Secret\n\nThe quokka password is hunter2.\n");
    await fs.symlink(join(outside, "secret.md"), join(vault.root, "passwd.md"));
    await fs.symlink(join(vault.root, "Notes", "Real.md"), join(vault.root, "Alias.md"));
    await fs.writeFile(join(vault.root, "Image.md"), PNG);
    await fs.writeFile(join(vault.root, "Random.md"), Buffer.from("quark\u0000\u0001\u0002\u0000 quark quark", "latin1"));
    await fs.writeFile(join(vault.root, "Latin.md"), Buffer.from("# Señales\n\nLa señal del café llegó tarde: ¡qué pena!\n", "latin1"));
  });
  afterEach(async () => {
    await vault.cleanup();
    await fs.rm(outside, { recursive: true, force: true });
  });

  async function search(query: string, extra: string[] = []): Promise<Hit[]> {
    const r = await runCli(["search", vault.root, query, "--json", ...noEmbed, ...extra]);
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as Hit[];
  }

  it("search --json quotes identifiers, paths, globs and heading links as the note has them", async () => {
    const [hit] = await search("ctwa_clid download backup");
    expect(hit.path).toBe("Ads/Tracking.md");
    for (const s of ["`ctwa_clid`".slice(1, -1), "op_darwin_arm64_v1.zip", "*.sql", "~24/día", "bold words"]) expect(hit.snippet).toContain(s);
    expect(hit.snippet).not.toContain("**");
    const [links] = await search("typing heading link");
    expect(links.snippet).toContain("Typing Preview a linked file will create");
    expect(links.snippet).toContain("See the setup guide too");
  });

  it("a symlink leading out of the vault is neither indexed nor searchable, and status names it; one inside is", async () => {
    expect(await search("quokka password")).toEqual([]);
    expect((await search("zebrafish")).map((h) => h.path).sort()).toEqual(["Alias.md", "Notes/Real.md"]);
    const r = await runCli(["status", vault.root, "--json", ...noEmbed]);
    const failures = (JSON.parse(r.stdout) as { index: { failures: { path: string; error: string }[] } }).index.failures;
    expect(failures.find((f) => f.path === "passwd.md")?.error).toMatch(/symbolic link leading outside the vault/);
  });

  it("a symlinked folder, inside the vault or leading out, is not gone into, and index and status say so once each", async () => {
    await fs.mkdir(join(outside, "Trip"));
    await fs.writeFile(join(outside, "Trip", "Plan.md"), "# Plan\n\nThe zebrafish aquarium on day two.\n");
    await fs.symlink(join(vault.root, "Notes"), join(vault.root, "Linked"));
    await fs.symlink(outside, join(vault.root, "Away"));
    const why = "a symbolic link to a folder, not followed (it could lead outside the vault or back into it)";
    const index = await runCli(["index", vault.root, ...noEmbed]);
    expect(index.code).toBe(0);
    for (const folder of ["Linked", "Away"]) expect(index.stderr.split(`krypton: warning: skipped ${folder}/: ${why}\n`)).toHaveLength(2);
    expect(index.stdout).toContain("2 linked folders were not indexed (see warnings).");
    // What is read does not change: neither folder's notes are indexed.
    expect((await search("zebrafish")).map((h) => h.path).sort()).toEqual(["Alias.md", "Notes/Real.md"]);
    const plain = await runCli(["status", vault.root, ...noEmbed]);
    expect(plain.stdout).toMatch(/Skipped:\s+3 notes, 2 linked folders \(see warnings\)/);
    const json = JSON.parse((await runCli(["status", vault.root, "--json", ...noEmbed])).stdout) as { index: { skippedFolders: unknown } };
    expect(json.index.skippedFolders).toEqual([{ path: "Away", error: why }, { path: "Linked", error: why }]);
    // A folder the user keeps out of Krypton is not named.
    const excluded = JSON.parse((await runCli(["status", vault.root, "--json", "--exclude", "linked/", ...noEmbed])).stdout) as { index: { skippedFolders: unknown } };
    expect(excluded.index.skippedFolders).toEqual([{ path: "Away", error: why }]);
  });

  it("a symlink named like a note (Trip.md) that leads to a folder is named among the skipped folders, as a linked folder is", async () => {
    await fs.mkdir(join(outside, "Trip"));
    await fs.writeFile(join(outside, "Trip", "Plan.md"), "# Plan\n\nThe zebrafish aquarium on day two.\n");
    await fs.symlink(join(outside, "Trip"), join(vault.root, "Trip.md"));
    await fs.symlink(join(vault.root, "Notes"), join(vault.root, "Notes", "Again.md"));
    const why = "a symbolic link to a folder, not followed (it could lead outside the vault or back into it)";
    const index = await runCli(["index", vault.root, ...noEmbed]);
    expect(index.code).toBe(0);
    for (const link of ["Trip.md", "Notes/Again.md"]) expect(index.stderr.split(`krypton: warning: skipped ${link}/: ${why}\n`)).toHaveLength(2);
    expect(index.stdout).toContain("2 linked folders were not indexed (see warnings).");
    // Nothing read changes: neither is a note, neither is gone into.
    expect((await search("zebrafish")).map((h) => h.path).sort()).toEqual(["Alias.md", "Notes/Real.md"]);
    const json = JSON.parse((await runCli(["status", vault.root, "--json", ...noEmbed])).stdout) as { index: { skippedFolders: unknown; failures: { path: string }[] } };
    expect(json.index.skippedFolders).toEqual([{ path: "Notes/Again.md", error: why }, { path: "Trip.md", error: why }]);
    expect(json.index.failures.map((f) => f.path)).not.toContain("Trip.md");
  });

  it("a note-named link whose target is missing, or that loops, is named among the skipped notes with the reason", async () => {
    await fs.symlink(join(vault.root, "Notes", "Moved.md"), join(vault.root, "Notes", "Gone.md"));
    await fs.symlink(join(vault.root, "Loop.md"), join(vault.root, "Loop.md"));
    const missing = "it is a symbolic link whose target is missing (moved or deleted); fix or remove the link";
    const loop = "it is a symbolic link that leads back to itself (a loop); fix or remove the link";
    const index = await runCli(["index", vault.root, ...noEmbed]);
    expect(index.code).toBe(0);
    expect(index.stderr).toContain(`krypton: warning: skipped Notes/Gone.md: ${missing}\n`);
    expect(index.stderr).toContain(`krypton: warning: skipped Loop.md: ${loop}\n`);
    expect(index.stdout).toContain("5 notes could not be indexed (see warnings).");
    const json = JSON.parse((await runCli(["status", vault.root, "--json", ...noEmbed])).stdout) as { index: { failures: { path: string; error: string }[] } };
    expect(json.index.failures.filter((f) => f.path.endsWith("Gone.md") || f.path === "Loop.md")).toEqual([
      { path: "Loop.md", error: loop },
      { path: "Notes/Gone.md", error: missing },
    ]);
  });

  it("binary .md files are skipped, reported by name, and their bytes never reach stdout", async () => {
    const found = await runCli(["search", vault.root, "quark", ...noEmbed]);
    expect(found.stdout).not.toContain("\u0000");
    expect(found.stdout).not.toContain("Random.md");
    const r = await runCli(["status", vault.root, "--json", ...noEmbed]);
    const failures = (JSON.parse(r.stdout) as { index: { failures: { path: string; error: string }[] } }).index.failures;
    expect(failures.find((f) => f.path === "Image.md")?.error).toMatch(/binary file \(PNG image\)/);
    expect(failures.find((f) => f.path === "Random.md")?.error).toMatch(/binary file/);
    const plain = await runCli(["status", vault.root, ...noEmbed]);
    expect(plain.stdout).toMatch(/Skipped:\s+3 notes/);
  });

  it("a Latin-1 note is decoded and searchable", async () => {
    const [hit] = await search("señal café");
    expect(hit.path).toBe("Latin.md");
    expect(hit.snippet).toContain("La señal del café llegó tarde: ¡qué pena!");
  });

  it("an exclude pattern applies whatever the folder's case: index, search and status", async () => {
    expect((await search("marmalade")).map((h) => h.path)).toEqual(["private/Diary.md"]);
    expect(await search("marmalade", ["--exclude", "Private/"])).toEqual([]);
  });

  it("MCP: search_notes quotes faithfully; read_note and summarize refuse out-of-vault links, binaries and excluded notes", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bundle, "mcp", vault.root, "--no-embeddings", "--exclude", "PRIVATE"],
      env: cleanEnv(),
      stderr: "pipe",
    });
    const client = new Client({ name: "trust-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      let results: { filePath: string; snippet: string }[] = [];
      for (let i = 0; i < 100 && results.length === 0; i++) {
        const found = await client.callTool({ name: "search_notes", arguments: { query: "ctwa_clid" } });
        results = (found.structuredContent as { results?: { filePath: string; snippet: string }[] } | undefined)?.results ?? [];
        if (results.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(results[0].filePath).toBe("Ads/Tracking.md");
      expect(results[0].snippet).toContain("op_darwin_arm64_v1.zip");
      expect(results[0].snippet).toContain("*.sql");

      for (const [path, why] of [
        ["passwd.md", /outside the vault/],
        ["Image.md", /binary file/],
        ["private/Diary.md", /exclude patterns/],
      ] as const) {
        const read = await client.callTool({ name: "read_note", arguments: { path } });
        expect(read.isError).toBe(true);
        expect(JSON.stringify(read.content)).toMatch(why);
        expect(JSON.stringify(read.content)).not.toContain("hunter2");
      }
      const summary = await client.callTool({ name: "summarize_notes", arguments: { mode: "current_note", note_path: "passwd.md" } });
      expect(summary.isError).toBe(true);
      expect(JSON.stringify(summary.content)).not.toContain("hunter2");
      const none = await client.callTool({ name: "search_notes", arguments: { query: "quokka" } });
      expect(JSON.stringify(none)).not.toContain("hunter2");
      const latin = await client.callTool({ name: "read_note", arguments: { path: "Latin.md" } });
      expect(JSON.stringify(latin.content)).toContain("La señal del café");
    } finally {
      await client.close();
    }
  });
});
