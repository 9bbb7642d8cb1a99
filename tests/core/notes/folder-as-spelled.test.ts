import { folderAsSpelled, isInFolder } from "../../../src/core/notes/note-paths";

/** The lookup a disk that ignores case needs, modelled on the note list (no such disk is needed to test it). */
describe("folderAsSpelled: a folder as the vault spells it, case aside", () => {
  const notes = ["flashcards/AWS.md", "Study/Goals/Pass.md", "Study/Other/x.md", "Mixed/a.md", "mixed/b.md", "Top.md"];

  it("takes the vault's spelling level by level", () => {
    expect(folderAsSpelled("Flashcards", notes)).toBe("flashcards");
    expect(folderAsSpelled("study/goals", notes)).toBe("Study/Goals");
    // A level the vault does not have stays as given, below a resolved one too.
    expect(folderAsSpelled("STUDY/New", notes)).toBe("Study/New");
  });

  it("keeps the given spelling when it exists, is unknown, or two spellings exist (a case-sensitive disk)", () => {
    expect(folderAsSpelled("flashcards", notes)).toBe("flashcards");
    expect(folderAsSpelled("Decks", notes)).toBe("Decks");
    expect(folderAsSpelled("MIXED", notes)).toBe("MIXED");
    // A note's name is not a folder.
    expect(folderAsSpelled("top.md", notes)).toBe("top.md");
    expect(folderAsSpelled("", notes)).toBe("");
  });

  it("isInFolder compares by exact text, whole levels only; the empty folder holds nothing", () => {
    expect(isInFolder("flashcards/AWS.md", "flashcards")).toBe(true);
    expect(isInFolder("flashcards", "flashcards")).toBe(true);
    expect(isInFolder("flashcards/AWS.md", "Flashcards")).toBe(false);
    expect(isInFolder("flashcards-old/AWS.md", "flashcards")).toBe(false);
    expect(isInFolder("Top.md", "")).toBe(false);
    // The folder a setting names, resolved first: the vault's spelling holds its notes.
    expect(isInFolder("flashcards/AWS.md", folderAsSpelled("FLASHCARDS", notes))).toBe(true);
    expect(isInFolder("mixed/b.md", folderAsSpelled("Mixed", notes))).toBe(false);
  });
});
