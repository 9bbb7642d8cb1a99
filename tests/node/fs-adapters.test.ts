import { promises as fs } from "node:fs";
import { join } from "node:path";
import { loadSrFormat, SR_DATA_JSON } from "../../src/core/flashcards/sr-format";
import { NoteChangedError, NoteExistsError, NoteNotFoundError } from "../../src/core/ports/vault";
import { createNodeHost } from "../../src/node/node-host";
import { policedVault } from "../../src/core/notes/read-policy";
import { makeTempVault, type TempVault } from "../support/temp-vault";

describe("Node host adapters", () => {
  let vault: TempVault;
  beforeEach(async () => {
    vault = await makeTempVault({
      "a.md": "# A",
      "Folder/b.md": "B",
      "Folder/image.png": "x",
      ".obsidian/plugins/x/readme.md": "config",
      ".krypton/notes.md": "state",
    });
  });
  afterEach(() => vault.cleanup());

  it("lists markdown notes only, never the config folder or .krypton", async () => {
    const host = createNodeHost(vault.root);
    expect((await host.vault.listNotes()).map((n) => n.path)).toEqual(["Folder/b.md", "a.md"]);
  });

  it("lists every note of a deep, wide vault once with its real mtime and size, sorted; skips links to folders and dot entries, lists broken links", async () => {
    // More notes than the stat window and folders on several levels: the scan must stat them all, each once.
    const expected: string[] = ["Folder/b.md", "a.md"];
    for (let f = 0; f < 5; f++) {
      for (let n = 0; n < 70; n++) {
        const path = `Deep ${f}/Level ${n % 3}/n${n}.MD`;
        await vault.write(path, `note ${f} ${n} ${"x".repeat(n)}`);
        expected.push(path);
      }
    }
    await vault.write("Deep 0/.hidden/secret.md", "hidden");
    await vault.write("Deep 0/.dot-note.md", "hidden");
    await fs.symlink(join(vault.root, "Folder"), join(vault.root, "Linked folder"));
    await fs.symlink(join(vault.root, "a.md"), join(vault.root, "Link to a.md"));
    await fs.symlink(join(vault.root, "missing.md"), join(vault.root, "Broken.md"));
    await fs.mkdir(join(vault.root, "Folder named.md"));
    // Listed so the index reads it, is refused and names it (readNote below says why).
    expected.push("Link to a.md", "Broken.md");
    // Set apart a note whose mtime and size are known exactly.
    const when = new Date("2024-03-01T10:00:00Z");
    await fs.utimes(join(vault.root, "a.md"), when, when);

    const notes = await createNodeHost(vault.root).vault.listNotes();
    const paths = notes.map((n) => n.path);
    expect(paths).toEqual([...expected].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
    const a = notes.find((n) => n.path === "a.md");
    expect(a).toEqual({ path: "a.md", mtime: when.getTime(), size: 3 });
    const deep = notes.find((n) => n.path === "Deep 3/Level 2/n68.MD");
    const real = await fs.stat(join(vault.root, "Deep 3", "Level 2", "n68.MD"));
    expect(deep).toEqual({ path: "Deep 3/Level 2/n68.MD", mtime: real.mtimeMs, size: real.size });
  });

  it("lists an empty vault as no notes", async () => {
    const empty = await makeTempVault({});
    try {
      expect(await createNodeHost(empty.root).vault.listNotes()).toEqual([]);
    } finally {
      await empty.cleanup();
    }
  });

  it("lists a folder's folders as the walk goes: empty ones and ones without notes too; nothing hidden, no link to a folder, nothing under one", async () => {
    await fs.mkdir(join(vault.root, "Empty"));
    await fs.mkdir(join(vault.root, "Nested", "Inner"), { recursive: true });
    await vault.write("Images/pic.png", "x");
    await fs.mkdir(join(vault.root, ".hidden", "Below"), { recursive: true });
    await fs.symlink(join(vault.root, "Folder"), join(vault.root, "Linked folder"));
    const outside = await makeTempVault({ "Secret/x.md": "secret" });
    try {
      await fs.symlink(outside.root, join(vault.root, "Outside"));
      const host = createNodeHost(vault.root);
      expect((await host.vault.listFolders("")).sort()).toEqual(["Empty", "Folder", "Images", "Nested"]);
      expect(await host.vault.listFolders("Nested")).toEqual(["Inner"]);
      expect(await host.vault.listFolders("Nested/Inner")).toEqual([]);
      for (const parent of ["Outside", "Linked folder", ".hidden", ".obsidian/plugins", "Missing", "a.md"]) {
        expect([parent, await host.vault.listFolders(parent)]).toEqual([parent, []]);
      }
      await expect(host.vault.listFolders("../..")).rejects.toThrow(/outside the vault/);
    } finally {
      await outside.cleanup();
    }
  });

  it("lists folders through the read policy: not the config folder, nor one an exclude pattern takes whole, in any case", async () => {
    await vault.write("Private/Diary/x.md", "secret");
    await vault.write("Daily/Sub/x.md", "seen");
    await fs.mkdir(join(vault.root, "Config"));
    const host = createNodeHost(vault.root, { configDir: "Config" });
    const policed = policedVault(host.vault, () => ({ excludePatterns: ["private", "Daily/*"] }));
    expect((await host.vault.listFolders("")).sort()).toEqual(["Config", "Daily", "Folder", "Private"]);
    // "Daily/*" excludes the notes directly in Daily, not those in Daily/Sub: the folder is seen.
    expect((await policed.listFolders("")).sort()).toEqual(["Daily", "Folder"]);
    expect(await policed.listFolders("Daily")).toEqual(["Sub"]);
    expect(await policed.listFolders("Private")).toEqual([]);
  });

  it("hides a folder a glob takes whole (\"Archive/**\", \"**/secret/**\"), not one whose notes a glob only picks among", async () => {
    await vault.write("Archive/Old/x.md", "archived");
    await vault.write("Projects/Secret/x.md", "secret");
    await vault.write("Drawings/x.excalidraw.md", "drawing");
    await vault.write("Daily/2023-01/x.md", "seen");
    const policed = policedVault(createNodeHost(vault.root).vault, () => ({ excludePatterns: ["Archive/**", "**/secret/**", "**/*.excalidraw.md", "Daily/2023-*"] }));
    expect((await policed.listFolders("")).sort()).toEqual(["Daily", "Drawings", "Folder", "Projects"]);
    expect(await policed.listFolders("Projects")).toEqual([]);
    // "Daily/2023-*" names the folder itself, not the notes in it: those are read, so the folder is seen.
    expect(await policed.listFolders("Daily")).toEqual(["2023-01"]);
  });

  it("reads notes and reports a missing one by name", async () => {
    const host = createNodeHost(vault.root);
    expect(await host.vault.readNote("Folder/b.md")).toBe("B");
    await expect(host.vault.readNote("nope.md")).rejects.toBeInstanceOf(NoteNotFoundError);
  });

  it("creates notes with parent folders and never overwrites", async () => {
    const host = createNodeHost(vault.root);
    await host.vault.createNote("New/Deep/c.md", "hello");
    expect(await vault.read("New/Deep/c.md")).toBe("hello");
    await expect(host.vault.createNote("a.md", "overwrite!")).rejects.toBeInstanceOf(NoteExistsError);
    expect(await vault.read("a.md")).toBe("# A");
    // No temp files are left behind.
    expect((await fs.readdir(join(vault.root, "New", "Deep"))).sort()).toEqual(["c.md"]);
  });

  it("of several concurrent creations of one path exactly one wins, complete; the others get NoteExistsError", async () => {
    const host = createNodeHost(vault.root);
    const contents = Array.from({ length: 8 }, (_, i) => `# Writer ${i}\n\n${"text ".repeat(20_000)}`);
    const outcomes = await Promise.allSettled(contents.map((c) => host.vault.createNote("Race/x.md", c)));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    for (const o of outcomes) if (o.status === "rejected") expect(o.reason).toBeInstanceOf(NoteExistsError);
    const winner = outcomes.findIndex((o) => o.status === "fulfilled");
    expect(await vault.read("Race/x.md")).toBe(contents[winner]);
    expect(await fs.readdir(join(vault.root, "Race"))).toEqual(["x.md"]); // no temp files left
  });

  it("refuses paths that leave the vault", async () => {
    const host = createNodeHost(vault.root);
    await expect(host.vault.readNote("../outside.md")).rejects.toThrow(/outside the vault/);
    await expect(host.vault.createNote("../../evil.md", "x")).rejects.toThrow(/outside the vault/);
    await expect(host.data.writeAtomic("../a.md", "x")).rejects.toThrow(/outside .krypton/);
    expect(await vault.read("a.md")).toBe("# A");
  });

  it("writes machine state atomically and creates lock files exclusively", async () => {
    const host = createNodeHost(vault.root);
    expect(await host.data.read("index/missing.bin")).toBeNull();
    await host.data.writeAtomic("index/x.bin", new Uint8Array([1, 2, 3]));
    expect(Array.from((await host.data.read("index/x.bin")) ?? [])).toEqual([1, 2, 3]);
    await host.data.writeAtomic("index/x.bin", "replaced");
    expect(await host.data.readText("index/x.bin")).toBe("replaced");
    expect(await host.data.list("index")).toEqual(["x.bin"]);
    expect(await host.data.createExclusive("index/lock", "1")).toBe(true);
    expect(await host.data.createExclusive("index/lock", "2")).toBe(false);
    expect(await host.data.readText("index/lock")).toBe("1");
    await host.data.remove("index/lock");
    await host.data.remove("index/lock");
    expect(await host.data.mtime("index/lock")).toBeNull();
  });
});

describe("FsVault.appendToNote (agent mode, after the user approved the diff)", () => {
  let vault: TempVault;
  beforeEach(async () => {
    vault = await makeTempVault({ "Plan.md": "# Plan\n", "NoNewline.md": "x" });
  });
  afterEach(() => vault.cleanup());

  it("appends in one atomic step and leaves no temp file", async () => {
    const host = createNodeHost(vault.root);
    await host.vault.appendToNote("Plan.md", "- one\n", "# Plan\n");
    expect(await vault.read("Plan.md")).toBe("# Plan\n- one\n");
    await host.vault.appendToNote("NoNewline.md", "\ny\n");
    expect(await vault.read("NoNewline.md")).toBe("x\ny\n");
    expect((await fs.readdir(vault.root)).sort()).toEqual(["NoNewline.md", "Plan.md"]);
  });

  it("refuses when the note differs from what the user approved, and when it is missing; writes nothing", async () => {
    const host = createNodeHost(vault.root);
    await expect(host.vault.appendToNote("Plan.md", "- late\n", "# Old plan\n")).rejects.toBeInstanceOf(NoteChangedError);
    expect(await vault.read("Plan.md")).toBe("# Plan\n");
    await expect(host.vault.appendToNote("Missing.md", "x")).rejects.toBeInstanceOf(NoteNotFoundError);
    expect(await vault.exists("Missing.md")).toBe(false);
    await expect(host.vault.appendToNote("../outside.md", "x")).rejects.toThrow(/outside the vault/);
  });

  it("keeps the file's permissions", async () => {
    await fs.chmod(join(vault.root, "Plan.md"), 0o600);
    await createNodeHost(vault.root).vault.appendToNote("Plan.md", "- one\n");
    expect((await fs.stat(join(vault.root, "Plan.md"))).mode & 0o777).toBe(0o600);
  });

  it("processNote: atomic read-modify-write, one at a time per note; a throwing fn or a changed note writes nothing", async () => {
    const host = createNodeHost(vault.root);
    await fs.chmod(join(vault.root, "Plan.md"), 0o600);
    await Promise.all([host.vault.processNote("Plan.md", (t) => t.replace("Plan", "Plan A")), host.vault.processNote("Plan.md", (t) => `${t}- b\n`)]);
    expect(await vault.read("Plan.md")).toBe("# Plan A\n- b\n");
    expect((await fs.stat(join(vault.root, "Plan.md"))).mode & 0o777).toBe(0o600);
    await expect(
      host.vault.processNote("Plan.md", () => {
        throw new Error("not mine");
      }),
    ).rejects.toThrow("not mine");
    await expect(host.vault.processNote("Plan.md", () => "x", "# Old\n")).rejects.toBeInstanceOf(NoteChangedError);
    expect(await vault.read("Plan.md")).toBe("# Plan A\n- b\n");
    await expect(host.vault.processNote("Missing.md", (t) => t)).rejects.toBeInstanceOf(NoteNotFoundError);
    expect((await fs.readdir(vault.root)).sort()).toEqual(["NoNewline.md", "Plan.md"]);
  });

  it("appends to the note a symbolic link points at and keeps the link a link", async () => {
    await fs.mkdir(join(vault.root, "Real"));
    await fs.rename(join(vault.root, "Plan.md"), join(vault.root, "Real", "Plan.md"));
    await fs.symlink(join("Real", "Plan.md"), join(vault.root, "Plan.md"));
    const host = createNodeHost(vault.root);
    await host.vault.appendToNote("Plan.md", "- one\n", "# Plan\n");
    expect((await fs.lstat(join(vault.root, "Plan.md"))).isSymbolicLink()).toBe(true);
    expect(await vault.read("Real/Plan.md")).toBe("# Plan\n- one\n");
    // The link and its target are one note: writes through both names at once both land.
    await Promise.all([host.vault.appendToNote("Plan.md", "- two\n"), host.vault.appendToNote("Real/Plan.md", "- three\n")]);
    expect(await vault.read("Real/Plan.md")).toBe("# Plan\n- one\n- two\n- three\n");
    expect((await fs.readdir(join(vault.root, "Real"))).sort()).toEqual(["Plan.md"]);
  });

  it("appends to a note that starts with a byte order mark and keeps the mark", async () => {
    await fs.writeFile(join(vault.root, "Bom.md"), "\uFEFF# Bom\n");
    const host = createNodeHost(vault.root);
    const approved = await host.vault.readNote("Bom.md");
    await host.vault.appendToNote("Bom.md", "- one\n", approved);
    await host.vault.processNote("Bom.md", (t) => `${t}- two\n`);
    expect(await fs.readFile(join(vault.root, "Bom.md"), "utf8")).toBe("\uFEFF# Bom\n- one\n- two\n");
  });
});

describe("FsVault reads config files", () => {
  let vault: TempVault;
  beforeEach(async () => {
    vault = await makeTempVault({});
  });
  afterEach(() => vault.cleanup());

  // An editor on Windows (Notepad before 2019, PowerShell's Set-Content) saves JSON with a BOM, which JSON.parse
  // refuses: the Spaced Repetition plugin's own separators were then replaced by its defaults.
  it("without a byte order mark: a Spaced Repetition data.json saved with one keeps the user's separators", async () => {
    const json = JSON.stringify({ settings: { singleLineCardSeparator: ";;" } });
    await fs.mkdir(join(vault.root, ".obsidian/plugins/obsidian-spaced-repetition"), { recursive: true });
    await fs.writeFile(join(vault.root, ".obsidian", SR_DATA_JSON), `\uFEFF${json}`);
    const host = createNodeHost(vault.root);
    expect(await host.vault.readConfigFile(SR_DATA_JSON)).toBe(json);
    expect((await loadSrFormat(host.vault)).singleLine).toBe(";;");
    expect(await host.vault.readConfigFile("plugins/missing/data.json")).toBeNull();
  });

  it("one that is there but cannot be read is an error, not a missing file: SR's defaults come with the reason", async () => {
    await fs.mkdir(join(vault.root, ".obsidian", SR_DATA_JSON), { recursive: true });
    const host = createNodeHost(vault.root);
    await expect(host.vault.readConfigFile(SR_DATA_JSON)).rejects.toThrow(/EISDIR/);
    expect((await loadSrFormat(host.vault)).problem).toMatch(/^\.obsidian\/plugins\/obsidian-spaced-repetition\/data\.json could not be read \(.*EISDIR/);
  });
});

describe("FsVault reads through the read policy's decoding (read-policy.ts)", () => {
  let vault: TempVault;
  beforeEach(async () => {
    vault = await makeTempVault({ "Plain.md": "\uFEFF# Plain\n\nCafé.\n" });
  });
  afterEach(() => vault.cleanup());

  it("decodes Latin-1, drops a BOM, refuses binary and out-of-vault links, and never re-encodes a Latin-1 note to append", async () => {
    const latin = Buffer.from("# Señal\n\nCafé.\n", "latin1");
    await fs.writeFile(join(vault.root, "Latin.md"), latin);
    await fs.writeFile(join(vault.root, "Bin.md"), Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0]));
    await fs.symlink("/etc/hostname", join(vault.root, "Out.md"));
    await fs.symlink(join(vault.root, "Plain.md"), join(vault.root, "In.md"));
    await fs.symlink(join(vault.root, "Moved away.md"), join(vault.root, "Gone.md"));
    await fs.symlink(join(vault.root, "Loop.md"), join(vault.root, "Loop.md"));
    const host = createNodeHost(vault.root);
    expect(await host.vault.readNote("Latin.md")).toBe("# Señal\n\nCafé.\n");
    expect(await host.vault.readNote("Plain.md")).toBe("# Plain\n\nCafé.\n");
    expect(await host.vault.readNote("In.md")).toBe("# Plain\n\nCafé.\n");
    await expect(host.vault.readNote("Bin.md")).rejects.toThrow("Bin.md is not read: it is a binary file (ZIP archive), not a text note");
    await expect(host.vault.readNote("Out.md")).rejects.toThrow("Out.md is not read: it is a symbolic link leading outside the vault");
    await expect(host.vault.readNote("Gone.md")).rejects.toThrow("Gone.md is not read: it is a symbolic link whose target is missing (moved or deleted); fix or remove the link");
    await expect(host.vault.readNote("Loop.md")).rejects.toThrow("Loop.md is not read: it is a symbolic link that leads back to itself (a loop); fix or remove the link");
    await expect(host.vault.appendToNote("Gone.md", "\nmore\n")).rejects.toThrow(/target is missing/);
    await expect(host.vault.readNote("Nothing.md")).rejects.toThrow(NoteNotFoundError);
    await expect(host.vault.appendToNote("Latin.md", "\nmore\n")).rejects.toThrow(/not UTF-8 text/);
    expect(await fs.readFile(join(vault.root, "Latin.md"))).toEqual(latin);
  });

  it("refuses UTF-16 notes (either byte order) as what they are, not as binary, and never writes to one", async () => {
    const little = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("# Liste\n\nÄpfel und Birnen.\n", "utf16le")]);
    const big = Buffer.from(little).swap16();
    await fs.writeFile(join(vault.root, "Little.md"), little);
    await fs.writeFile(join(vault.root, "Big.md"), big);
    const host = createNodeHost(vault.root);
    const why = "it is UTF-16 text: Krypton and Obsidian read notes as UTF-8; save it as UTF-8 to index it";
    await expect(host.vault.readNote("Little.md")).rejects.toThrow(`Little.md is not read: ${why}`);
    await expect(host.vault.readNote("Big.md")).rejects.toThrow(`Big.md is not read: ${why}`);
    await expect(host.vault.appendToNote("Little.md", "\nmore\n")).rejects.toThrow(why);
    expect(await fs.readFile(join(vault.root, "Little.md"))).toEqual(little);
  });
});
