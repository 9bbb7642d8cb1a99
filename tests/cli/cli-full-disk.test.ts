/**
 * A write that fails halfway (a full disk: the CLI runs with `ulimit -f`, so writes past the limit fail with
 * EFBIG after the part that fits) leaves the vault as it was: the old note byte for byte, and no temp file
 * or new folder of Krypton's.
 */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { buildCli, runCli } from "./cli-harness";

beforeAll(() => buildCli(), 120_000);

const deck = ["---", "krypton-deck: true", 'deck: "AWS"', "---", "#flashcards/aws", "", ...Array.from({ length: 100 }, (_, i) => `What is question ${i} about AWS networking?::Answer ${i}\n`)].join("\n");
const sessions = Array.from({ length: 400 }, (_, i) => `- 2026-01-01: 1 min session ${i}`).join("\n");
const goal = `---\nkrypton-goal: true\ngoal: "Pass AWS SAA"\nstatus: active\nminutes: 400\n---\n# Pass AWS SAA\n\n## Sessions\n\n${sessions}\n`;

/** Every file and folder under the vault, as vault-relative paths. */
async function tree(root: string): Promise<string[]> {
  return ((await fs.readdir(root, { recursive: true })) as string[]).sort();
}

describe("a write that fails halfway", () => {
  let vault: TempVault;
  beforeEach(async () => {
    vault = await makeTempVault({ "Flashcards/AWS.md": deck, "Study goals/Pass AWS SAA.md": goal });
  });
  afterEach(() => vault.cleanup());

  it("a new note (Anki export): nothing is left, neither the half-written file nor its new folder", async () => {
    const before = await tree(vault.root);
    const r = await runCli(["flashcards", vault.root, "--export-anki", "AWS"], { fileSizeLimitKb: 2 });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Could not create Anki exports/AWS.md: EFBIG");
    expect(await tree(vault.root)).toEqual(before);
  });

  it("a changed note (a goal's session logged): the old note stays, byte for byte, and no temp file is left", async () => {
    const before = await tree(vault.root);
    const r = await runCli(["goals", vault.root, "log", "aws", "--minutes", "30"], { fileSizeLimitKb: 8 });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("EFBIG");
    expect(await vault.read("Study goals/Pass AWS SAA.md")).toBe(goal);
    expect(await tree(vault.root)).toEqual(before);
  });
});
