import { promises as fs } from "node:fs";
import { join } from "node:path";
import { folderAsSpelled, isInFolder } from "../../../src/core/notes/note-paths";
import { createNodeHost } from "../../../src/node/node-host";
import type { VaultPort } from "../../../src/core/ports/vault";
import { makeTempVault, type TempVault } from "../../support/temp-vault";

/**
 * The lookup a disk that ignores case needs, on a real vault folder (this disk keeps case, so both spellings of
 * a name can be there; no case-insensitive disk is needed to test the lookup).
 */
describe("folderAsSpelled: a folder as the vault spells it, case aside", () => {
  let temp: TempVault;
  let vault: VaultPort;
  beforeEach(async () => {
    temp = await makeTempVault({ "flashcards/AWS.md": "", "Study/Goals/Pass.md": "", "Study/Other/x.md": "", "Mixed/a.md": "", "mixed/b.md": "", "Top.md": "", "Pictures/cat.png": "" });
    // Folders holding no note: empty, or only empty folders below.
    await fs.mkdir(join(temp.root, "Study goals"));
    await fs.mkdir(join(temp.root, "Archive", "Old decks"), { recursive: true });
    vault = createNodeHost(temp.root).vault;
  });
  afterEach(() => temp.cleanup());

  it("takes the vault's spelling level by level", async () => {
    expect(await folderAsSpelled("Flashcards", vault)).toBe("flashcards");
    expect(await folderAsSpelled("study/goals", vault)).toBe("Study/Goals");
    // A level the vault does not have stays as given, below a resolved one too, and so does all below it.
    expect(await folderAsSpelled("STUDY/New", vault)).toBe("Study/New");
    expect(await folderAsSpelled("new/goals/x", vault)).toBe("new/goals/x");
  });

  it("finds folders that hold no note: empty ones, ones with no markdown, ones with only empty folders below", async () => {
    expect(await folderAsSpelled("study GOALS", vault)).toBe("Study goals");
    expect(await folderAsSpelled("pictures", vault)).toBe("Pictures");
    expect(await folderAsSpelled("archive/old DECKS", vault)).toBe("Archive/Old decks");
  });

  it("keeps the given spelling when it exists, is unknown, or two spellings exist (a case-sensitive disk)", async () => {
    expect(await folderAsSpelled("flashcards", vault)).toBe("flashcards");
    expect(await folderAsSpelled("Decks", vault)).toBe("Decks");
    expect(await folderAsSpelled("MIXED", vault)).toBe("MIXED");
    expect(await folderAsSpelled("mixed", vault)).toBe("mixed");
    // A note's name is not a folder.
    expect(await folderAsSpelled("top.md", vault)).toBe("top.md");
    expect(await folderAsSpelled("", vault)).toBe("");
  });

  it("isInFolder compares by exact text, whole levels only; the empty folder holds nothing", async () => {
    expect(isInFolder("flashcards/AWS.md", "flashcards")).toBe(true);
    expect(isInFolder("flashcards", "flashcards")).toBe(true);
    expect(isInFolder("flashcards/AWS.md", "Flashcards")).toBe(false);
    expect(isInFolder("flashcards-old/AWS.md", "flashcards")).toBe(false);
    expect(isInFolder("Top.md", "")).toBe(false);
    // The folder a setting names, resolved first: the vault's spelling holds its notes.
    expect(isInFolder("flashcards/AWS.md", await folderAsSpelled("FLASHCARDS", vault))).toBe(true);
    expect(isInFolder("mixed/b.md", await folderAsSpelled("Mixed", vault))).toBe(false);
  });
});
