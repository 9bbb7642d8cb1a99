import { promises as fs } from "node:fs";
import { join } from "node:path";
/**
 * Export to the Obsidian_to_Anki plugin's note format, checked against its wiki's documented examples
 * ("Field formatting": START / Basic / Front: / Back: / END; "Deck formatting": TARGET DECK + name on the next
 * line; "Cloze formatting": Anki's {{c1::…}}; "Updating existing notes": the <!--ID: …--> line is the plugin's).
 */
import { parseCards } from "../../../src/core/flashcards/card-parser";
import { ankiExportText } from "../../../src/core/flashcards/anki-export";
import { srFormatFromData } from "../../../src/core/flashcards/sr-format";
import { FlashcardService } from "../../../src/core/flashcards/flashcard-service";
import { makeAgentsWorld, type AgentsWorld } from "../agents/agent-fixtures";

const DECK = [
  "---",
  "krypton-deck: true",
  'deck: "Testing"',
  "---",
  "",
  "#flashcards/testing",
  "",
  "This is a test.::Test successful!",
  "<!--SR:!2024-08-16,51,230-->",
  "",
  "This is a ==cloze note== with ==two clozes== [[Notes/Cloze]]",
  "",
  "Mitochondria:::the powerhouse of the cell [[Bio/Cell#Parts]]",
  "",
  "A multi-line",
  "question",
  "?",
  "Its answer",
  "on two lines",
  "",
].join("\n");

describe("ankiExportText", () => {
  it("writes the documented block format: TARGET DECK, START/type/fields/END, Anki clozes, no ID lines", () => {
    const out = ankiExportText("Mathematics", "Flashcards/Testing", parseCards(DECK).cards, "2026-11-24");
    const body = out.text.slice(out.text.indexOf("TARGET DECK"));
    expect(body).toBe(
      [
        "TARGET DECK",
        "Mathematics",
        "",
        // The wiki's "Field formatting" example, byte for byte.
        "START\nBasic\nFront: This is a test.\nBack: Test successful!\nEND\n",
        "START\nCloze\nText: This is a {{c1::cloze note}} with {{c2::two clozes}}\nBack Extra: [[Notes/Cloze]]\nEND\n",
        "START\nBasic (and reversed card)\nFront: Mitochondria\nBack: the powerhouse of the cell [[Bio/Cell#Parts]]\nEND\n",
        // A field continues on the next lines (documented).
        "START\nBasic\nFront: A multi-line\nquestion\nBack: Its answer\non two lines\nEND\n",
      ].join("\n"),
    );
    expect(out).toMatchObject({ exported: 4, skipped: [] });
    expect(out.text).not.toMatch(/<!--(ID|SR):/);
    expect(out.text.startsWith("---\nkrypton-anki-export: true\nsource deck: \"[[Flashcards/Testing]]\"\nexported: 2026-11-24\n---\n")).toBe(true);
  });

  it("numbered clozes keep their number: deletions SR makes one card of are one Anki card too", () => {
    const deck = "#flashcards\n\nThe ==1;;heart== pumps ==2;;blood;;fluid== through the ==1;;arteries==.\n";
    const out = ankiExportText("Bio", "Flashcards/Bio", parseCards(deck).cards, "2026-11-24");
    expect(out.text).toContain("Text: The {{c1::heart}} pumps {{c2::blood::fluid}} through the {{c1::arteries}}.");
    expect(out.exported).toBe(1);
  });

  // clozecraft 0.4 (SR's lockfile) counts unnumbered deletions pattern by pattern: with highlights before bold SR's
  // siblings ask b, c, then a. Numbered in text order, Anki's c1 was SR's third sibling.
  it("numbers unnumbered clozes in SR's sibling order, pattern by pattern, so each Anki card is SR's sibling", () => {
    const format = srFormatFromData(JSON.stringify({ settings: { clozePatterns: ["==[123;;]answer[;;hint]==", "**[123;;]answer[;;hint]**"] } }));
    const out = ankiExportText("Bio", "Flashcards/Bio", parseCards("#flashcards\n\n**a** ==b== ==c==\n", format).cards, "2026-11-24");
    expect(out.text).toContain("Text: {{c3::a}} {{c1::b}} {{c2::c}}\n");
  });

  it("skips a card a line of which would read as the plugin's syntax (END alone), and says why", () => {
    const out = ankiExportText("D", "Flashcards/D", parseCards("#flashcards\n\nQ\n?\nEND\n\nQ2::A2\n").cards, "2026-11-24");
    expect(out.exported).toBe(1);
    expect(out.skipped).toEqual([{ front: "Q", reason: "a line of it would read as Obsidian_to_Anki syntax" }]);
  });
});

describe("FlashcardService.exportAnki (real vault)", () => {
  let world: AgentsWorld;
  beforeEach(async () => {
    world = await makeAgentsWorld({ files: { "Flashcards/Testing.md": DECK, "Flashcards/Mine.md": "Q::A\n", "Notes/Plain.md": "# Plain" }, openIndex: false });
  });
  afterEach(() => world.close());
  const service = () => new FlashcardService({ host: world.host, settings: () => world.settings, index: world.index, chatModel: () => null });

  it("writes a new note per export, never touches the deck; refuses non-decks and missing decks", async () => {
    const first = await service().exportAnki("Testing");
    expect(first).toMatchObject({ path: "Anki exports/Testing.md", deckPath: "Flashcards/Testing.md", exported: 4 });
    expect(first.text).toBe("Exported 4 cards of [[Flashcards/Testing]] to [[Anki exports/Testing]] for Obsidian_to_Anki.");
    const written = await world.vault.read("Anki exports/Testing.md");
    expect(written).toContain("TARGET DECK\nTesting\n\nSTART\nBasic\nFront: This is a test.\nBack: Test successful!\nEND\n");
    // Again, by path: a second note; the first and the deck stay as they were.
    expect((await service().exportAnki("Flashcards/Testing.md")).path).toBe("Anki exports/Testing 2.md");
    expect(await world.vault.read("Anki exports/Testing.md")).toBe(written);
    expect(await world.vault.read("Flashcards/Testing.md")).toBe(DECK);
    // Said for an export, which writes nothing to the note ("choose another deck name" is for writing cards).
    await expect(service().exportAnki("Mine")).rejects.toThrow('Flashcards/Mine.md is not a Krypton deck (no "krypton-deck: true" in its frontmatter): only decks Krypton made are exported.');
    await expect(service().exportAnki("Nope")).rejects.toThrow(/No deck at Flashcards\/Nope\.md/);
    await expect(service().exportAnki("Notes/Plain")).rejects.toThrow(/^Notes\/Plain\.md is not a Krypton deck .*only decks Krypton made are exported\.$/);
    expect(await world.vault.read("Flashcards/Mine.md")).toBe("Q::A\n");
  });

  // Only the outer quotes were dropped: the Anki deck was named 'My \"best\" deck'.
  it("names the Anki deck as the deck's name is written, quotes and all", async () => {
    const card = { kind: "basic" as const, front: "Q?", back: "A", source: "Notes/Plain" };
    await service().addCards('My "best" deck', [card]);
    const out = await service().exportAnki('My "best" deck');
    expect(await world.vault.read(out.path)).toContain('TARGET DECK\nMy "best" deck\n');
  });

  it("writes into an empty 'anki exports/' as the vault spells it, not beside it", async () => {
    await fs.mkdir(join(world.vault.root, "anki exports"));
    expect((await service().exportAnki("Testing")).path).toBe("anki exports/Testing.md");
    expect((await service().exportAnki("Testing")).path).toBe("anki exports/Testing 2.md");
    expect((await fs.readdir(world.vault.root)).filter((name) => /^anki exports$/i.test(name))).toEqual(["anki exports"]);
  });

  it("says why when the Spaced Repetition plugin's settings cannot be read and the deck is read in its defaults", async () => {
    await world.vault.write(".obsidian/plugins/obsidian-spaced-repetition/data.json", '{"settings": {"singleLineCardSeparator": ";;",}}');
    const readDefaults =
      /\n\nRead in the Spaced Repetition plugin's default card format \(question::answer, #flashcards\): \.obsidian\/plugins\/obsidian-spaced-repetition\/data\.json is not valid JSON \(.+\)\. Fix it and Krypton reads your own separators, tags and cloze patterns\.$/;
    await world.vault.write("Flashcards/Semi.md", "---\nkrypton-deck: true\n---\n#flashcards/semi\n\nQ;;A\n");
    const none = await service().exportAnki("Semi").then(() => null, (err: unknown) => err as Error);
    expect(none?.message).toMatch(/^Flashcards\/Semi\.md has no cards to export\./);
    expect(none?.message).toMatch(readDefaults);
    const some = await service().exportAnki("Testing");
    expect(some.text).toMatch(/^Exported 4 cards of \[\[Flashcards\/Testing\]\]/);
    expect(some.text).toMatch(readDefaults);
  });
});
