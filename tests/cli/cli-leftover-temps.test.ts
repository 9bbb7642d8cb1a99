/**
 * A CLI killed in the middle of a write leaves its hidden temp file beside the note (Obsidian hides it, sync
 * tools copy it). The next Krypton process that opens the vault removes it once it is old enough that no
 * running write can own it, and says so with --verbose; nothing else is touched.
 *
 * The kill is real (SIGKILL, so no clean-up runs), at the one moment that leaves the file: the temp file is
 * complete and about to take the note's place (tests/support/die-at-temp-swap.cjs). A full disk (ulimit -f)
 * does not leave one: that write fails and cleans up (tests/cli/cli-full-disk.test.ts).
 */
import { promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEMP_FILE_MIN_AGE_MS } from "../../src/node/fs-vault";
import { startCli } from "../support/cli-processes";
import { tempDirForFile } from "../support/temp-dirs";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { buildCli, runCli } from "./cli-harness";

beforeAll(() => buildCli(), 120_000);

const DIE_AT_SWAP = { NODE_OPTIONS: `--require ${join(__dirname, "..", "support", "die-at-temp-swap.cjs")}` };
const deck = '---\nkrypton-deck: true\ndeck: "AWS"\n---\n#flashcards/aws\n\nWhat does S3 stand for?::Simple Storage Service\n';
const goal = '---\nkrypton-goal: true\ngoal: "Pass AWS SAA"\nstatus: active\nminutes: 30\n---\n# Pass AWS SAA\n\n## Sessions\n\n- 2026-01-01: 30 min\n';
const TEMP = /^\.krypton-(new|write)-[0-9a-f]{12}\.tmp$/;

/** Every file and folder under the vault but .krypton (the index's own files), as vault-relative paths. */
async function tree(root: string): Promise<string[]> {
  return ((await fs.readdir(root, { recursive: true })) as string[]).filter((p) => !p.startsWith(".krypton")).sort();
}
const temps = async (root: string) => (await tree(root)).filter((p) => TEMP.test(p.replace(/^.*\//, "")));

async function age(root: string, paths: string[], ms: number): Promise<void> {
  const when = new Date(Date.now() - ms);
  for (const p of paths) await fs.utimes(join(root, p), when, when);
}

let vault: TempVault;
beforeEach(async () => {
  vault = await makeTempVault({ "Flashcards/AWS.md": deck, "Study goals/Pass AWS SAA.md": goal, "Notes/.krypton-new-notmine.tmp": "a user's file" });
});
afterEach(() => vault.cleanup());

test("killed mid-write: the temp file stays; the next run keeps it while it is young, then removes it and says so", async () => {
  const before = await tree(vault.root);
  const log = await runCli(["goals", vault.root, "log", "aws", "--minutes", "30"], { env: DIE_AT_SWAP });
  expect(log.signal).toBe("SIGKILL");
  const exported = await runCli(["flashcards", vault.root, "--export-anki", "AWS"], { env: DIE_AT_SWAP });
  expect(exported.signal).toBe("SIGKILL");
  // What a crash leaves: the notes as they were, and the two temp files the reviews found.
  expect(await vault.read("Study goals/Pass AWS SAA.md")).toBe(goal);
  const left = await temps(vault.root);
  expect(left).toEqual([expect.stringMatching(/^Anki exports\/\.krypton-new-/), expect.stringMatching(/^Study goals\/\.krypton-write-/)]);

  // Right after: as young as another process's write in flight, so they stay.
  const soon = await runCli(["goals", vault.root, "list", "--verbose"]);
  expect(soon.code).toBe(0);
  expect(soon.stderr).not.toMatch(/removed/);
  expect(await temps(vault.root)).toEqual(left);

  await age(vault.root, left, TEMP_FILE_MIN_AGE_MS + 60_000);
  const later = await runCli(["goals", vault.root, "list", "--verbose"]);
  expect(later.code).toBe(0);
  expect(later.stdout).toContain("Pass AWS SAA");
  for (const path of left) expect(later.stderr).toMatch(new RegExp(`krypton warn: removed ${path.replace(/\./g, "\\.")}: a temp file of a Krypton write interrupted at \\d{4}-`));
  // Only those: the user's look-alike and every note stay (the export's new, now empty, folder too).
  expect(await tree(vault.root)).toEqual([...before, "Anki exports"].sort());
  expect(await vault.read("Notes/.krypton-new-notmine.tmp")).toBe("a user's file");
  expect(await vault.read("Study goals/Pass AWS SAA.md")).toBe(goal);
});

test("a leftover that cannot be removed (a read-only vault) is said, and the command still works", async () => {
  // Another user needs a readable copy of the bundle; root ignores permissions, so the CLI runs as nobody.
  const dir = tempDirForFile("krypton-cli-shared-");
  const entry = join(dir, "cli.cjs");
  await fs.copyFile(await buildCli(), entry);
  await fs.chmod(dir, 0o755);
  await fs.chmod(entry, 0o644);
  const runAs = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  await vault.write("Study goals/.krypton-write-0123456789ab.tmp", "half a goal");
  await age(vault.root, ["Study goals/.krypton-write-0123456789ab.tmp"], TEMP_FILE_MIN_AGE_MS + 60_000);
  await fs.chmod(join(vault.root, ".."), 0o755).catch(() => undefined);
  const folders = [vault.root, join(vault.root, "Study goals"), join(vault.root, "Flashcards"), join(vault.root, "Notes")];
  for (const d of folders) await fs.chmod(d, 0o555);
  try {
    const run = await startCli(["goals", vault.root, "list", "--verbose"], { entry, env: { HOME: tmpdir() }, cwd: tmpdir(), ...runAs });
    run.endInput();
    const r = await run.exited();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Pass AWS SAA");
    expect(r.stderr).toContain("krypton warn: could not remove Study goals/.krypton-write-0123456789ab.tmp, a temp file of an interrupted Krypton write");
  } finally {
    for (const d of folders) await fs.chmod(d, 0o755);
  }
  expect(await vault.read("Study goals/.krypton-write-0123456789ab.tmp")).toBe("half a goal");
});
