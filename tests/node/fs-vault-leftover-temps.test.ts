/**
 * The sweep of temp files a killed write left in the vault (".krypton-new-….tmp", ".krypton-write-….tmp"):
 * done by the first listing of a vault the Node host opened, only Krypton's exact names, only old ones.
 */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../../src/core/ports/logger";
import { FsVault, TEMP_FILE_MIN_AGE_MS } from "../../src/node/fs-vault";
import { createNodeHost } from "../../src/node/node-host";
import { makeTempVault, type TempVault } from "../support/temp-vault";

let vault: TempVault;
let logs: string[];
const logger: Logger = { debug() {}, info() {}, warn: (m) => logs.push(m), error: (m) => logs.push(m) };

beforeEach(async () => {
  logs = [];
  vault = await makeTempVault({ "a.md": "# A", "Notes/Deep/b.md": "B" });
});
afterEach(() => vault.cleanup());

/** A file written `ageMs` ago (mtime set back), as a write killed then would have left it. */
async function plant(path: string, ageMs: number, content = "half a note"): Promise<void> {
  await vault.write(path, content);
  const when = new Date(Date.now() - ageMs);
  await fs.utimes(join(vault.root, path), when, when);
}

const hour = 60 * 60 * 1000;
const old = TEMP_FILE_MIN_AGE_MS + hour;

test("removes only Krypton's own old temp files, anywhere in the vault, and logs each; everything else stays", async () => {
  await plant("Notes/Deep/.krypton-new-0123456789ab.tmp", old);
  await plant(".krypton-write-abcdefabcdef.tmp", 3 * 24 * hour);
  const kept = [
    // In flight: another Krypton process is writing it now (or was, a moment ago).
    "Notes/.krypton-write-00000000aaaa.tmp",
    // Look-alikes, however old: not names Krypton makes.
    "Notes/.krypton-new-0123456789AB.tmp",
    "Notes/.krypton-new-0123456789a.tmp",
    "Notes/.krypton-new-0123456789ab.tmp.bak",
    "Notes/.krypton-other-0123456789ab.tmp",
    "Notes/krypton-new-0123456789ab.tmp",
    "Notes/.Krypton-new-0123456789ab.tmp",
    // Inside dot-folders Krypton never writes notes, and the walk does not go there.
    ".obsidian/.krypton-new-0123456789ab.tmp",
    ".krypton/.krypton-write-0123456789ab.tmp",
  ];
  await plant(kept[0], 5 * 60 * 1000);
  for (const path of kept.slice(1)) await plant(path, old);
  // A date in the future (a clock ahead, a synced copy): not known to be old.
  await plant("Notes/.krypton-write-ffffffffffff.tmp", -hour);
  kept.push("Notes/.krypton-write-ffffffffffff.tmp");
  // A folder and a symbolic link of Krypton's name are not its temp files.
  await fs.mkdir(join(vault.root, "Notes/.krypton-write-111111111111.tmp"));
  await fs.symlink(join(vault.root, "a.md"), join(vault.root, "Notes/.krypton-write-222222222222.tmp"));
  await fs.lutimes(join(vault.root, "Notes/.krypton-write-222222222222.tmp"), new Date(Date.now() - old), new Date(Date.now() - old));

  const host = createNodeHost(vault.root, { logger });
  expect((await host.vault.listNotes()).map((n) => n.path)).toEqual(["Notes/Deep/b.md", "a.md"]);

  expect(await vault.exists("Notes/Deep/.krypton-new-0123456789ab.tmp")).toBe(false);
  expect(await vault.exists(".krypton-write-abcdefabcdef.tmp")).toBe(false);
  for (const path of kept) expect([path, await vault.exists(path)]).toEqual([path, true]);
  expect((await fs.lstat(join(vault.root, "Notes/.krypton-write-111111111111.tmp"))).isDirectory()).toBe(true);
  expect((await fs.lstat(join(vault.root, "Notes/.krypton-write-222222222222.tmp"))).isSymbolicLink()).toBe(true);
  expect(await vault.read("a.md")).toBe("# A");
  expect(logs.sort()).toEqual([
    expect.stringMatching(/^removed \.krypton-write-abcdefabcdef\.tmp: a temp file of a Krypton write interrupted at \d{4}-\d\d-\d\dT/),
    expect.stringMatching(/^removed Notes\/Deep\/\.krypton-new-0123456789ab\.tmp: a temp file of a Krypton write interrupted at /),
  ]);
});

test("once per opened vault: later listings do not sweep; a vault opened without the option never does", async () => {
  const host = createNodeHost(vault.root, { logger });
  await host.vault.listNotes();
  await plant("Notes/.krypton-new-0123456789ab.tmp", old);
  await host.vault.listNotes();
  expect(await vault.exists("Notes/.krypton-new-0123456789ab.tmp")).toBe(true);

  await new FsVault(vault.root).listNotes();
  expect(await vault.exists("Notes/.krypton-new-0123456789ab.tmp")).toBe(true);
  expect(logs).toEqual([]);

  // The next process that opens the vault removes it.
  await createNodeHost(vault.root, { logger }).vault.listNotes();
  expect(await vault.exists("Notes/.krypton-new-0123456789ab.tmp")).toBe(false);
  expect(logs).toHaveLength(1);
});
