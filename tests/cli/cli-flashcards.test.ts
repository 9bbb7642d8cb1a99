/**
 * `krypton flashcards` as a real process: a deck note written through the one tool registry, a repeat adds
 * nothing, usage and model failures exit non-zero and write nothing.
 */
import { useCliTestBed } from "../support/cli-test-bed";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { buildCli, runCli } from "./cli-harness";

beforeAll(() => buildCli(), 120_000);

describe("krypton flashcards", () => {
  const bed = useCliTestBed({ notes: { ".obsidian/app.json": "{}", "Bio/Cell.md": "# Cell\n\nMitochondria make ATP for the cell.\n" } });

  it("--note writes a deck (exit 0), --json reports it, a repeat adds nothing", async () => {
    bed.ollama.setDefault({ route: "chat", reply: '{"cards":[{"type":"basic","front":"What makes ATP?","back":"Mitochondria","passage":1}]}' });
    const r = await runCli(["flashcards", bed.vault.root, "--note", "Bio/Cell.md"], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Added 1 flashcard to [[Flashcards/Cell]] (new deck)");
    expect(await bed.vault.read("Flashcards/Cell.md")).toContain("What makes ATP?::Mitochondria [[Bio/Cell#Cell]]\n\n");
    const again = await runCli(["flashcards", bed.vault.root, "--note", "Bio/Cell.md", "--json"], { env: bed.env });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ deckPath: "Flashcards/Cell.md", added: [], duplicates: 1 });
  });

  it("usage errors exit 2; a model that never returns valid JSON exits 1 and writes nothing", async () => {
    expect((await runCli(["flashcards", bed.vault.root])).code).toBe(2);
    expect((await runCli(["flashcards", bed.vault.root, "--note", "a.md", "--topic", "x"])).code).toBe(2);
    expect((await runCli(["flashcards", bed.vault.root, "--note", "Bio/Cell.md", "--max", "99"])).code).toBe(2);
    bed.ollama.setDefault({ route: "chat", reply: "no json here" });
    const r = await runCli(["flashcards", bed.vault.root, "--note", "Bio/Cell.md"], { env: bed.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Could not generate flashcards: the model did not return valid JSON/);
    expect(await bed.vault.exists("Flashcards")).toBe(false);
  });
  it("--export-anki writes the deck in Obsidian_to_Anki's format to a new note (no model), usage errors exit 2", async () => {
    await bed.vault.write("Flashcards/Cell.md", "---\nkrypton-deck: true\ndeck: \"Cell\"\n---\n\n#flashcards/cell\n\nWhat makes ATP?::Mitochondria [[Bio/Cell#Cell]]\n");
    const r = await runCli(["flashcards", bed.vault.root, "--export-anki", "Cell", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ path: "Anki exports/Cell.md", exported: 1, skipped: [] });
    expect(await bed.vault.read("Anki exports/Cell.md")).toContain("TARGET DECK\nCell\n\nSTART\nBasic\nFront: What makes ATP?\nBack: Mitochondria [[Bio/Cell#Cell]]\nEND\n");
    expect(bed.ollama.requestsTo("chat")).toHaveLength(0);
    expect((await runCli(["flashcards", bed.vault.root, "--export-anki", "Cell", "--note", "Bio/Cell.md"])).code).toBe(2);
    const missing = await runCli(["flashcards", bed.vault.root, "--export-anki", "Nope"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("No deck at Flashcards/Nope.md");
  });
});

describe("krypton goals", () => {
  let vault: TempVault;
  beforeEach(async () => {
    vault = await makeTempVault({ ".obsidian/app.json": "{}" });
  });
  afterEach(() => vault.cleanup());

  it("create, log, list --json; usage errors exit 2", async () => {
    const created = await runCli(["goals", vault.root, "create", "Pass AWS SAA", "--by", "2027-01-15"]);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain("Pass AWS SAA: 0 min in 0 sessions, target 2027-01-15 (Study goals/Pass AWS SAA.md)");
    expect((await runCli(["goals", vault.root, "log", "aws", "--minutes", "40"])).code).toBe(0);
    const list = await runCli(["goals", vault.root, "list", "--json"]);
    expect(JSON.parse(list.stdout)).toMatchObject({ goals: [{ goal: "Pass AWS SAA", minutes: 40, sessions: 1 }] });
    expect((await runCli(["goals", vault.root, "list"])).stdout).toContain("Pass AWS SAA: 40 min in 1 session, target 2027-01-15");
    expect((await runCli(["goals", vault.root, "log", "aws"])).code).toBe(2);
    const unknown = await runCli(["goals", vault.root, "fly"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown action "fly": use list, create, log or progress');
    const none = await runCli(["goals", vault.root]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("missing action: list, create, log or progress");
    // An option the action does not take is a usage error, not dropped: "create … --minutes" once logged nothing, silently.
    const misplaced = await runCli(["goals", vault.root, "create", "Learn Rust", "--minutes", "30"]);
    expect([misplaced.code, misplaced.stderr]).toEqual([2, expect.stringContaining("--minutes is only for log")]);
    expect((await runCli(["goals", vault.root, "log", "aws", "--minutes", "5", "--by", "May 1"])).stderr).toContain("--by is only for create");
    expect(JSON.parse((await runCli(["goals", vault.root, "list", "--json"])).stdout).goals).toHaveLength(1);
    const missing = await runCli(["goals", vault.root, "progress", "kubernetes"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No study goal matches "kubernetes"/);
  });

  it("with no goal yet, points to `krypton goals … create`, not to a chat sentence", async () => {
    const createOne = `create one with: krypton goals ${vault.root} create "<goal>" --by DATE`;
    for (const args of [["log", "aws", "--minutes", "30"], ["progress", "aws"]]) {
      const r = await runCli(["goals", vault.root, ...args]);
      expect([r.code, r.stderr]).toEqual([1, `krypton: You have no study goals yet: ${createOne}\n`]);
    }
    const list = await runCli(["goals", vault.root, "list"]);
    expect([list.code, list.stdout]).toEqual([0, `No study goals yet: ${createOne}\n`]);
    expect(JSON.parse((await runCli(["goals", vault.root, "list", "--json"])).stdout)).toEqual({ goals: [] });
  });
});
