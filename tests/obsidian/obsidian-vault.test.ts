import { promises as fs } from "node:fs";
import { join } from "node:path";
import { App, Plugin, type PluginManifest } from "../support/obsidian-stub";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { ObsidianVault } from "../../src/obsidian/host/obsidian-vault";
import { nodeVaultLocation } from "../../src/node/path-symlink-guard";
import { loadSrFormat, SR_DATA_JSON } from "../../src/core/flashcards/sr-format";
import { createUniqueNote } from "../../src/core/notes/note-paths";
import { NoteChangedError, NoteExistsError, NoteNotFoundError, type VaultEvent } from "../../src/core/ports/vault";

class TestPlugin extends Plugin {}
const manifest: PluginManifest = { id: "krypton", name: "Krypton", version: "0.0.0" };

let temp: TempVault;
let app: App;
let plugin: TestPlugin;
let vault: ObsidianVault;

beforeEach(async () => {
  temp = await makeTempVault({
    "Welcome.md": "# Welcome\nHello.",
    "Projects/Plan.md": "# Plan\nSteps.",
    "Projects/diagram.png": "not markdown",
    ".obsidian/app.json": "{}",
    ".krypton/index/manifest.json": "{}",
    "Config/hidden.md": "# Not a note when Config is the config folder",
  });
  app = new App(temp.root);
  plugin = new TestPlugin(app, manifest);
  plugin.load();
  vault = new ObsidianVault(app as never, plugin as never);
});

afterEach(async () => {
  plugin.unload();
  await temp.cleanup();
});

test("listNotes returns markdown notes only, never the config folder or .krypton", async () => {
  const paths = (await vault.listNotes()).map((n) => n.path).sort();
  expect(paths).toEqual(["Config/hidden.md", "Projects/Plan.md", "Welcome.md"]);
  // A config folder that is not a dot-folder is still skipped (vault.configDir, not ".obsidian").
  app.vault.configDir = "Config";
  expect((await vault.listNotes()).map((n) => n.path).sort()).toEqual(["Projects/Plan.md", "Welcome.md"]);
  const welcome = (await vault.listNotes()).find((n) => n.path === "Welcome.md");
  expect(welcome?.size).toBe("# Welcome\nHello.".length);
  expect(welcome?.mtime).toBeGreaterThan(0);
});

test("listFolders gives the folders of Obsidian's file tree in their spelling, empty ones too, never the config folder", async () => {
  await fs.mkdir(join(temp.root, "Empty"));
  await fs.mkdir(join(temp.root, "Projects", "Old", "Older"), { recursive: true });
  // Obsidian reads the tree when it opens the vault; on a disk that ignores case the tree still does not.
  const macApp = new App(temp.root, { caseInsensitiveDisk: true });
  const mac = new ObsidianVault(macApp as never, plugin as never);
  expect((await mac.listFolders("")).sort()).toEqual(["Config", "Empty", "Projects"]);
  expect(await mac.listFolders("Projects")).toEqual(["Old"]);
  expect(await mac.listFolders("Projects/Old")).toEqual(["Older"]);
  expect(await mac.listFolders("Projects/Old/Older")).toEqual([]);
  for (const parent of ["projects", "Missing", "Welcome.md", ".obsidian"]) expect([parent, await mac.listFolders(parent)]).toEqual([parent, []]);
  macApp.vault.configDir = "Config";
  expect((await mac.listFolders("")).sort()).toEqual(["Empty", "Projects"]);
  // A folder Obsidian creates is in the tree at once.
  await macApp.vault.createFolder("Empty/New");
  expect(await mac.listFolders("Empty")).toEqual(["New"]);
});

test("listFolders on desktop never goes through a link that leads out of the vault, which Obsidian's tree follows", async () => {
  const outside = await makeTempVault({ "Secret/Deeper/x.md": "# Secret\n" });
  try {
    await fs.symlink(outside.root, join(temp.root, "Outside"));
    await fs.symlink(join(temp.root, "Projects"), join(temp.root, "Linked projects"));
    await fs.mkdir(join(temp.root, "Projects", "Old"));
    // The desktop host's guard (obsidian-host.ts desktopSymlinkGuard): the Node one the CLI uses.
    const desktop = new ObsidianVault(new App(temp.root) as never, plugin as never, { assertInside: nodeVaultLocation(temp.root).assertInside });
    expect((await desktop.listFolders("")).sort()).toEqual(["Config", "Linked projects", "Projects"]);
    for (const parent of ["Outside", "Outside/Secret", "Outside/Secret/Deeper"]) expect([parent, await desktop.listFolders(parent)]).toEqual([parent, []]);
    // A link within the vault leads to notes Obsidian lists and Krypton reads: its folders are seen, as listNotes sees its notes.
    expect(await desktop.listFolders("Linked projects")).toEqual(["Old"]);
  } finally {
    await outside.cleanup();
  }
});

test("createUniqueNote puts a note into an empty folder the setting spells in another case (a disk that ignores case)", async () => {
  await fs.mkdir(join(temp.root, "krypton"));
  const mac = new ObsidianVault(new App(temp.root, { caseInsensitiveDisk: true }) as never, plugin as never);
  expect(await createUniqueNote(mac, "Krypton", "tides", "# Tides\n")).toBe("krypton/tides.md");
  expect(await createUniqueNote(mac, "KRYPTON", "tides", "# Tides again\n")).toBe("krypton/tides-1.md");
  expect((await fs.readdir(join(temp.root, "krypton"))).sort()).toEqual(["tides-1.md", "tides.md"]);
});

test("readNote reads the note's bytes and refuses what is not a note", async () => {
  expect(await vault.readNote("Projects/Plan.md")).toBe("# Plan\nSteps.");
  expect(app.vault.reads.get("Projects/Plan.md")).toBe(1);
  await expect(vault.readNote("Missing.md")).rejects.toBeInstanceOf(NoteNotFoundError);
  await expect(vault.readNote("Projects/diagram.png")).rejects.toBeInstanceOf(NoteNotFoundError);
  await expect(vault.readNote(".obsidian/app.json")).rejects.toBeInstanceOf(NoteNotFoundError);
});

test("createNote creates missing folders and the note appears in the vault", async () => {
  await vault.createNote("Krypton/Ideas/machine-learning.md", "# Machine learning\n");
  expect(await temp.read("Krypton/Ideas/machine-learning.md")).toBe("# Machine learning\n");
  expect(app.vault.getFileByPath("Krypton/Ideas/machine-learning.md")).not.toBeNull();
  expect(app.vault.getFolderByPath("Krypton/Ideas")).not.toBeNull();
  expect(await vault.exists("Krypton/Ideas/machine-learning.md")).toBe(true);
});

test("createNote never overwrites: an existing note, a file Obsidian does not track, or a race", async () => {
  await expect(vault.createNote("Welcome.md", "replaced")).rejects.toBeInstanceOf(NoteExistsError);
  expect(await temp.read("Welcome.md")).toBe("# Welcome\nHello.");

  // Written behind Obsidian's back (a sync client): not in the file tree, but on disk.
  await temp.write("Synced.md", "from another device");
  await expect(vault.createNote("Synced.md", "replaced")).rejects.toBeInstanceOf(NoteExistsError);
  expect(await temp.read("Synced.md")).toBe("from another device");

  await expect(vault.createNote("Projects/picture.png", "x")).rejects.toThrow("Not a note path");
  await expect(vault.createNote(".obsidian/evil.md", "x")).rejects.toThrow("Not a note path");
});

test("onChange reports note events and maps renames across the note boundary", async () => {
  const events: VaultEvent[] = [];
  const off = vault.onChange((e) => events.push(e));
  const plan = app.vault.getFileByPath("Projects/Plan.md")!;
  await app.vault.modify(plan, "# Plan\nMore steps.");
  await app.vault.create("New.md", "new");
  await app.vault.rename(plan, "Projects/Plan v2.md");
  await app.vault.create("Projects/other.png", "png"); // not a note: no event
  await app.vault.rename(app.vault.getFileByPath("New.md")!, "New.txt"); // leaves the notes: delete
  await app.vault.delete(app.vault.getFileByPath("Welcome.md")!);
  expect(events).toEqual([
    { type: "modify", path: "Projects/Plan.md" },
    { type: "create", path: "New.md" },
    { type: "rename", path: "Projects/Plan v2.md", oldPath: "Projects/Plan.md" },
    { type: "delete", path: "New.md" },
    { type: "delete", path: "Welcome.md" },
  ]);
  off();
  await app.vault.create("After.md", "x");
  expect(events).toHaveLength(5);
  expect(app.vault.listenerCount("create")).toBe(0);
});

test("vault listeners are registered with the plugin, so unloading it detaches them", async () => {
  const events: VaultEvent[] = [];
  vault.onChange((e) => events.push(e));
  expect(app.vault.listenerCount("modify")).toBe(1);
  plugin.unload();
  expect(app.vault.listenerCount("modify")).toBe(0);
  await app.vault.create("Late.md", "x");
  expect(events).toEqual([]);
});

test("appendToNote goes through Vault.process, refuses a changed note, never writes a non-note", async () => {
  await vault.appendToNote("Projects/Plan.md", "\n- one\n", "# Plan\nSteps.");
  expect(await temp.read("Projects/Plan.md")).toBe("# Plan\nSteps.\n- one\n");
  await expect(vault.appendToNote("Projects/Plan.md", "- two\n", "# Plan\nSteps.")).rejects.toBeInstanceOf(NoteChangedError);
  expect(await temp.read("Projects/Plan.md")).toBe("# Plan\nSteps.\n- one\n");
  await expect(vault.appendToNote("Missing.md", "x")).rejects.toBeInstanceOf(NoteNotFoundError);
  await expect(vault.appendToNote(".obsidian/app.json", "x")).rejects.toBeInstanceOf(NoteNotFoundError);
  expect(await temp.read(".obsidian/app.json")).toBe("{}");
});

test("processNote goes through Vault.process: fn's result is written, a throwing fn or a changed note writes nothing", async () => {
  await vault.processNote("Projects/Plan.md", (t) => t.replace("Steps.", "Steps: 2."));
  expect(await temp.read("Projects/Plan.md")).toBe("# Plan\nSteps: 2.");
  await expect(
    vault.processNote("Projects/Plan.md", () => {
      throw new Error("not mine");
    }),
  ).rejects.toThrow("not mine");
  await expect(vault.processNote("Projects/Plan.md", () => "x", "# Old")).rejects.toBeInstanceOf(NoteChangedError);
  expect(await temp.read("Projects/Plan.md")).toBe("# Plan\nSteps: 2.");
  await expect(vault.processNote(".obsidian/app.json", () => "x")).rejects.toBeInstanceOf(NoteNotFoundError);
});

test("appendToNote and processNote refuse what readNote refuses: a Latin-1 note is not re-encoded, a link out of the vault is not written through", async () => {
  const latin = Buffer.from("---\nkrypton-goal: true\n---\n# Señal\n", "latin1");
  await fs.writeFile(join(temp.root, "Latin.md"), latin);
  const outside = await makeTempVault({ "Secret.md": "# Secret\n" });
  try {
    await fs.symlink(join(outside.root, "Secret.md"), join(temp.root, "Linked.md"));
    const guarded = new ObsidianVault(new App(temp.root) as never, plugin as never, {
      assertInside: async (path) => {
        const real = await fs.realpath(join(temp.root, path));
        if (!real.startsWith(`${await fs.realpath(temp.root)}/`)) throw new Error("it is a symbolic link leading outside the vault");
      },
    });
    await expect(guarded.processNote("Latin.md", (t) => `${t}- 2026-11-24: 30 min\n`)).rejects.toThrow(/not UTF-8 text/);
    await expect(guarded.appendToNote("Latin.md", "more\n", await guarded.readNote("Latin.md"))).rejects.toThrow(/not UTF-8 text/);
    expect(await fs.readFile(join(temp.root, "Latin.md"))).toEqual(latin);
    await expect(guarded.processNote("Linked.md", (t) => `${t}written\n`)).rejects.toThrow(/symbolic link leading outside the vault/);
    expect(await outside.read("Secret.md")).toBe("# Secret\n");
  } finally {
    await outside.cleanup();
  }
});

test("the stand-in reads a note with a byte order mark as Obsidian does: Vault.read and cachedRead drop it, adapter.read and Vault.process keep it", async () => {
  await temp.write("Bom.md", "\uFEFF# Bom\n");
  const app2 = new App(temp.root);
  const file = app2.vault.getFileByPath("Bom.md")!;
  expect(await app2.vault.read(file)).toBe("# Bom\n");
  expect(await app2.vault.cachedRead(file)).toBe("# Bom\n");
  expect(await app2.vault.adapter.read("Bom.md")).toBe("\uFEFF# Bom\n");
  let seen = "";
  await app2.vault.process(file, (text) => (seen = text));
  expect(seen).toBe("\uFEFF# Bom\n");
});

test("a note that starts with a byte order mark: read without it, appended to and processed with exactly one BOM kept on disk", async () => {
  await temp.write("Bom.md", "\uFEFF# Bom\nText.\n");
  const bomVault = new ObsidianVault(new App(temp.root) as never, plugin as never);
  const read = await bomVault.readNote("Bom.md");
  expect(read).toBe("# Bom\nText.\n");
  // The text the user approved (read without the BOM) is what the note still holds: the append goes through.
  await bomVault.appendToNote("Bom.md", "- one\n", read);
  expect(await fs.readFile(join(temp.root, "Bom.md"), "utf8")).toBe("\uFEFF# Bom\nText.\n- one\n");
  // processNote's fn sees the text readNote gives, and the BOM stays, once.
  let seen = "";
  await bomVault.processNote("Bom.md", (t) => {
    seen = t;
    return `${t}- two\n`;
  });
  expect(seen).toBe("# Bom\nText.\n- one\n");
  expect(await fs.readFile(join(temp.root, "Bom.md"), "utf8")).toBe("\uFEFF# Bom\nText.\n- one\n- two\n");
  // A note without a BOM does not get one.
  await bomVault.appendToNote("Welcome.md", "\nMore.");
  expect((await fs.readFile(join(temp.root, "Welcome.md")))[0]).toBe("#".charCodeAt(0));
});

test("the stand-in's adapter.rmdir is not recursive, as documented: a folder holding a hidden file stays; an empty one leaves disk and tree", async () => {
  await app.vault.createFolder("Empty");
  await app.vault.createFolder("Held");
  await temp.write("Held/.sync-partial", "x");
  await expect(app.vault.adapter.rmdir("Held", false)).rejects.toThrow(/ENOTEMPTY/);
  expect(app.vault.getFolderByPath("Held")).not.toBeNull();
  const deleted: string[] = [];
  app.vault.on("delete", (f: { path: string }) => deleted.push(f.path));
  await app.vault.adapter.rmdir("Empty", false);
  expect(await app.vault.adapter.exists("Empty")).toBe(false);
  expect(app.vault.getFolderByPath("Empty")).toBeNull();
  expect(deleted).toEqual(["Empty"]);
});

test("createNote checks the disk again as its last step before vault.create: a file a sync client wrote while the folders were made is kept", async () => {
  const createFolder = app.vault.createFolder.bind(app.vault);
  app.vault.createFolder = async (path: string) => {
    const folder = await createFolder(path);
    // The sync client delivers the same note from another device, behind the vault's back.
    if (path === "Krypton/Ideas") await temp.write("Krypton/Ideas/Tides.md", "from another device");
    return folder;
  };
  await expect(vault.createNote("Krypton/Ideas/Tides.md", "# Tides\n")).rejects.toBeInstanceOf(NoteExistsError);
  expect(await temp.read("Krypton/Ideas/Tides.md")).toBe("from another device");
});

test("a failed createNote removes the folders it made, and only those", async () => {
  // A name the disk refuses (over 255 bytes): vault.create fails after the folders are made.
  const tooLong = `${"n".repeat(300)}.md`;
  await expect(vault.createNote(`Krypton/Ideas/${tooLong}`, "x")).rejects.toThrow(/ENAMETOOLONG/);
  expect(await app.vault.adapter.exists("Krypton")).toBe(false);
  expect(app.vault.getFolderByPath("Krypton")).toBeNull();
  // The user's folder stays; the one made inside it for this note goes.
  await expect(vault.createNote(`Projects/Drafts/${tooLong}`, "x")).rejects.toThrow(/ENAMETOOLONG/);
  expect(await app.vault.adapter.exists("Projects/Drafts")).toBe(false);
  expect(await temp.read("Projects/Plan.md")).toBe("# Plan\nSteps.");
  // The next try makes them again.
  await vault.createNote("Krypton/Ideas/Tides.md", "# Tides\n");
  expect(await temp.read("Krypton/Ideas/Tides.md")).toBe("# Tides\n");
});

test("a failed createNote keeps a folder it made when something else was put in it meanwhile, even a hidden file", async () => {
  app.vault.create = async () => {
    // A sync client writes its partial file into the new folder, then the create fails (a full disk).
    await temp.write("Krypton/Ideas/.sync-partial", "x");
    throw new Error("ENOSPC: no space left on device");
  };
  await expect(vault.createNote("Krypton/Ideas/Tides.md", "# Tides\n")).rejects.toThrow(/ENOSPC/);
  expect(await temp.read("Krypton/Ideas/.sync-partial")).toBe("x");
  expect(app.vault.getFolderByPath("Krypton/Ideas")).not.toBeNull();
});

// DataAdapter.read keeps a byte order mark, which JSON.parse refuses: a Spaced Repetition data.json saved with one
// (Windows editors) had the user's separators replaced by SR's defaults.
test("readConfigFile gives a config file without its byte order mark: SR's data.json keeps the user's separators", async () => {
  const json = JSON.stringify({ settings: { singleLineCardSeparator: ";;" } });
  await temp.write(`.obsidian/${SR_DATA_JSON}`, `\uFEFF${json}`);
  expect(await app.vault.adapter.read(`.obsidian/${SR_DATA_JSON}`)).toBe(`\uFEFF${json}`);
  expect(await vault.readConfigFile(SR_DATA_JSON)).toBe(json);
  expect((await loadSrFormat(vault)).singleLine).toBe(";;");
  expect(await vault.readConfigFile("plugins/missing/data.json")).toBeNull();
});

test("readConfigFile: a config file there but unreadable is an error, not a missing file: SR's defaults come with the reason", async () => {
  await fs.mkdir(join(temp.root, ".obsidian", SR_DATA_JSON), { recursive: true });
  await expect(vault.readConfigFile(SR_DATA_JSON)).rejects.toThrow(/EISDIR/);
  expect((await loadSrFormat(vault)).problem).toMatch(/^\.obsidian\/plugins\/obsidian-spaced-repetition\/data\.json could not be read \(.*EISDIR/);
});
