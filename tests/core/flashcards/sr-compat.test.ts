import { cleanCard } from "../../../src/core/flashcards/card-generator";
import { parseCards, srCards, srSkip } from "../../../src/core/flashcards/card-parser";
import { appendCards, clozeWriter, formatCard, type NewCard } from "../../../src/core/flashcards/card-writer";
import { appendToDeck } from "../../../src/core/flashcards/deck-append";
import { DEFAULT_SR_FORMAT, srFormatFromData } from "../../../src/core/flashcards/sr-format";
import { countCards, parseSchedules } from "../../../src/core/flashcards/sr-schedule";
import { FsVault } from "../../../src/node/fs-vault";
import { quizCardsFromDeck } from "../../../src/core/quiz/quiz-state";
import { makeTempVault } from "../../support/temp-vault";

/**
 * Decks as Spaced Repetition users write them, read the way the plugin's parser (src/parser.ts,
 * note-question-parser.ts) reads them: a card Krypton sees and SR does not, or the reverse, is a lost review.
 */
const fence = "```";

describe("card boundaries as SR draws them", () => {
  it("a code block (blank lines and all) belongs to the multi-line card around it", () => {
    const deck = ["#flashcards/python", "", "How do you print two lines in Python?", "?", `${fence}python`, "print('Hello')", "", "print('World')", fence, "<!--SR:!2024-03-01,4,250-->", "", "Next::card", ""].join("\n");
    const { cards } = parseCards(deck);
    expect(cards.map((c) => [c.kind, c.front])).toEqual([
      ["multiline", "How do you print two lines in Python?"],
      ["basic", "Next"],
    ]);
    expect(cards[0].back).toBe(`${fence}python\nprint('Hello')\n\nprint('World')\n${fence}`);
    expect(cards[0].schedules.map((s) => s.due)).toEqual(["2024-03-01"]);
  });

  it("a separator inside inline code is not a card", () => {
    const deck = "#flashcards\n\nIn C++ `std::vector` is a growable array\n\n`Inlineq::InlineA`\n\nreal::card\n";
    expect(parseCards(deck).cards.map((c) => c.front)).toEqual(["real"]);
  });

  it("a single-line card and a cloze in one paragraph are two cards", () => {
    const { cards } = parseCards("#flashcards\nQ1::A1\nThe ==mitochondria== make ATP\n");
    expect(cards.map((c) => [c.kind, c.front])).toEqual([
      ["basic", "Q1"],
      ["cloze", "The ==mitochondria== make ATP"],
    ]);
  });

  it("headings are text to SR: a heading with a separator is a card", () => {
    expect(parseCards("#flashcards\n\n## Heading::with separator\n").cards.map((c) => [c.front, c.back])).toEqual([["## Heading", "with separator"]]);
  });

  it("HTML comments hide what they contain", () => {
    const deck = "#flashcards\n\n<!-- todo::rewrite -->\n\n<!-- cloze ==deletion== test -->\n\na::b\n";
    expect(parseCards(deck).cards.map((c) => c.front)).toEqual(["a"]);
  });

  it("with an end marker, blank lines still separate paragraphs that are not cards", () => {
    const format = { ...DEFAULT_SR_FORMAT, endMarker: "+++" };
    const deck = "#flashcards\n\nQ1::A1\n\nSome paragraph text\n\nFront\n?\nBack\n\nline 2\n+++\n";
    expect(parseCards(deck, format).cards.map((c) => [c.kind, c.front, c.back])).toEqual([
      ["basic", "Q1", "A1"],
      ["multiline", "Front", "Back\n\nline 2"],
    ]);
  });
});

describe("decks as SR assigns them", () => {
  it("a flashcard tag anywhere on a line (a heading, a sentence) starts a deck", () => {
    const deck = "## Genetics #flashcards/genetics\n\nWhat carries genes?::DNA\n\nNotes from class, see #flashcards/cells too\n\nPowerhouse?::Mitochondria\n";
    expect(parseCards(deck).cards.map((c) => c.decks)).toEqual([["flashcards/genetics"], ["flashcards/cells"]]);
  });

  it("a tag line touching a multi-line card is that card's own tag, not a deck for the cards after it", () => {
    const deck = "#flashcards/a\n\nQ1::A1\n\n#flashcards/b\nFront\n?\nBack\n\nQ3::A3\n";
    const { cards, trailingDecks } = parseCards(deck);
    expect(cards.map((c) => [c.front, c.decks])).toEqual([
      ["Q1", ["flashcards/a"]],
      ["Front", ["flashcards/b"]],
      ["Q3", ["flashcards/a"]],
    ]);
    expect(trailingDecks).toEqual(["flashcards/a"]);
  });

  // SR (question.ts splitText, topic-path.ts getTopicPathFromCardText) takes any tag that starts a card's
  // text as the card's deck, flashcard tag or not, in a note it reads (one with a flashcard tag).
  it("any tag starting a card's text is that card's deck, flashcard tag or not; the tag is not part of the question", () => {
    const deck = "#flashcards/mechanics\n\n#physics What is F?::ma\n\n#todo\nWhy do ships float?\n?\nBuoyancy\n\n#science/waves The ==wavelength== sets the colour\n\nQ4::A4\n";
    expect(parseCards(deck).cards.map((c) => [c.front, c.decks])).toEqual([
      ["What is F?", ["physics"]],
      ["Why do ships float?", ["todo"]],
      ["The ==wavelength== sets the colour", ["science/waves"]],
      ["Q4", ["flashcards/mechanics"]],
    ]);
  });

  it("a note SR does not read (no flashcard tag anywhere) gives a leading tag no deck", () => {
    expect(parseCards("#physics What is F?::ma\n").cards.map((c) => [c.front, c.decks])).toEqual([["#physics What is F?", []]]);
  });
});

describe("scheduling comments SR reads", () => {
  it("older date formats (DD-MM-YYYY, 'ddd MMM DD YYYY')", () => {
    expect(parseSchedules("<!--SR:!16-08-2024,51,230!Fri Aug 16 2024,3,250-->").map((s) => s.due)).toEqual(["2024-08-16", "2024-08-16"]);
  });

  it("the callout form (useCalloutsForSchedulingComments)", () => {
    const { cards } = parseCards("#flashcards\nQuestion::Answer\n> [!sr|card-metadata] \n> <!--SR:!2021-08-11,4,270-->\n\nNext::one\n");
    expect(cards.map((c) => [c.front, c.back, c.schedules.map((s) => s.due)])).toEqual([
      ["Question", "Answer", ["2021-08-11"]],
      ["Next", "one", []],
    ]);
  });
});

describe("SR's settings", () => {
  it("clozePatterns, when present, decide the cloze delimiters (the convert* flags are only its upgrade source)", () => {
    const format = srFormatFromData(JSON.stringify({ settings: { convertHighlightsToClozes: true, clozePatterns: ["**[123;;]answer[;;hint]**"] } }));
    expect(parseCards("#flashcards\n\nA ==highlight== and a **bold** word\n", format).cards.map((c) => c.deletions)).toEqual([["bold"]]);
  });

  // SR's core.ts processFile reads a note's cards only when it has a deck: a flashcard tag, or with
  // convertFoldersToDecks its folder (topic-path.ts getTopicPathOfFile), tags aside.
  it("a note without a flashcard tag has no cards for SR, unless folders are decks (convertFoldersToDecks)", () => {
    const untagged = "What is F?::ma\n\n#physics What is p?::mv\n";
    const tagged = "#flashcards\n\nWhat is F?::ma\n";
    const tags = DEFAULT_SR_FORMAT;
    expect(srFormatFromData(JSON.stringify({ settings: {} })).convertFoldersToDecks).toBe(false);
    expect(srCards(parseCards(untagged, tags), "Physics/Mechanics.md", tags)).toEqual([]);
    expect(srSkip(parseCards(untagged, tags), "Physics/Mechanics.md", tags)).toEqual({ why: "no-flashcard-tag" });
    expect(srCards(parseCards(tagged, tags), "Mechanics.md", tags).map((c) => c.front)).toEqual(["What is F?"]);

    const folders = srFormatFromData(JSON.stringify({ settings: { convertFoldersToDecks: true } }));
    expect(folders.convertFoldersToDecks).toBe(true);
    // In a folder every card counts, and a tag starting a card's text is taken off it (question.ts splitText).
    expect(srCards(parseCards(untagged, folders), "Physics/Mechanics.md", folders).map((c) => c.front)).toEqual(["What is F?", "What is p?"]);
    // At the vault root a note has no folder to be its deck: none, flashcard tag or not.
    expect(srCards(parseCards(tagged, folders), "Mechanics.md", folders)).toEqual([]);
    expect(srSkip(parseCards(tagged, folders), "Mechanics.md", folders)).toEqual({ why: "vault-root" });
  });
});

describe("SR's \"Folders to ignore\" (noteFoldersToIgnore)", () => {
  // SR's data-manager.ts loadVault skips a note whose path pathMatchesPattern one entry (utils/fs.ts: a text
  // prefix, or a minimatch glob) before reading it: none of its cards, whatever its tags.
  const tagged = "#flashcards\n\nWhat is F?::ma\n";
  const format = srFormatFromData(JSON.stringify({ settings: { noteFoldersToIgnore: ["Archive", "Templates/", "**/old/*.md"], flashcardTagsToIgnore: ["#paused"] } }));

  it("is read from data.json as a list, with SR's own default when the setting or the file is missing", () => {
    expect(format.foldersToIgnore).toEqual(["Archive", "Templates/", "**/old/*.md"]);
    expect(srFormatFromData(JSON.stringify({ settings: { noteFoldersToIgnore: [] } })).foldersToIgnore).toEqual([]);
    expect(srFormatFromData(JSON.stringify({ settings: {} })).foldersToIgnore).toEqual(["**/*.excalidraw.md"]);
    expect(srFormatFromData(null).foldersToIgnore).toEqual(["**/*.excalidraw.md"]);
  });

  it("skips a note whose path starts with an entry or matches it as a glob, before its tags are looked at", () => {
    const deck = parseCards(tagged, format);
    const skip = (path: string) => srSkip(deck, path, format);
    expect(skip("Archive/Physics.md")).toEqual({ why: "ignored-folder", folder: "Archive" });
    // A plain prefix, as SR tests it: another folder starting alike is covered too, another case is not.
    expect(skip("Archived/Physics.md")).toEqual({ why: "ignored-folder", folder: "Archive" });
    expect(skip("archive/Physics.md")).toBeNull();
    expect(skip("Templates/Deck.md")).toEqual({ why: "ignored-folder", folder: "Templates/" });
    expect(skip("School/old/Physics.md")).toEqual({ why: "ignored-folder", folder: "**/old/*.md" });
    expect(skip("School/old/2025/Physics.md")).toBeNull();
    expect(srCards(deck, "Archive/Physics.md", format)).toEqual([]);
    expect(srCards(deck, "School/Physics.md", format).map((c) => c.front)).toEqual(["What is F?"]);
    // SR never loads such a note, so the folder is the reason even when a tag to ignore is there too.
    expect(srSkip(parseCards(`${tagged}#paused\n`, format), "Archive/Physics.md", format)).toEqual({ why: "ignored-folder", folder: "Archive" });
  });
});

describe("numbered and hinted clozes (SR's clozePatterns, default ==[123;;]answer[;;hint]==)", () => {
  // clozecraft 0.4 (SR's lockfile) counts unnumbered deletions pattern by pattern: its sibling cards, and the
  // schedule entries SR keeps for them in that order, follow the user's patterns before the text.
  it("with several patterns in one cloze, siblings come pattern by pattern, as SR makes them", () => {
    const format = srFormatFromData(JSON.stringify({ settings: { clozePatterns: ["==[123;;]answer[;;hint]==", "**[123;;]answer[;;hint]**"] } }));
    const { cards } = parseCards("#flashcards\n\nThe **Krebs cycle** runs in the ==mitochondrial matrix== and makes ==NADH==\n", format);
    expect(quizCardsFromDeck(cards, "Flashcards/Bio.md").map((q) => [q.prompt, q.answer])).toEqual([
      ["The Krebs cycle runs in the [...] and makes NADH", "mitochondrial matrix"],
      ["The Krebs cycle runs in the mitochondrial matrix and makes [...]", "NADH"],
      ["The [...] runs in the mitochondrial matrix and makes NADH", "Krebs cycle"],
    ]);
  });

  it("where two patterns match the same text, the sibling asking the inner deletion blanks it, as SR's does", () => {
    const format = srFormatFromData(JSON.stringify({ settings: { clozePatterns: ["==[123;;]answer[;;hint]==", "**[123;;]answer[;;hint]**"] } }));
    const { cards } = parseCards("#flashcards\n\nThe ==**Krebs** cycle== runs in the matrix\n", format);
    expect(quizCardsFromDeck(cards, "Flashcards/Bio.md").map((q) => [q.prompt, q.answer])).toEqual([
      ["The [...] runs in the matrix", "**Krebs** cycle"],
      ["The [...] cycle runs in the matrix", "Krebs"],
    ]);
  });

  it("reads the answer without number or hint; deletions sharing a number are one card", () => {
    const text = "#flashcards\n\nThe ==1;;mitochondria;;organelle== makes ==2;;ATP== from ==1;;glucose==\n<!--SR:!2024-08-16,3,250!2030-01-01,4,270-->\n";
    const [card] = parseCards(text).cards;
    expect([card.deletions, card.reviewCards, card.back]).toEqual([["mitochondria", "ATP", "glucose"], 2, "mitochondria, ATP, glucose"]);
  });

  it("a hint without a number is a simple cloze; numbers make as many cards as the highest (as SR does)", () => {
    const { cards } = parseCards("#flashcards\n\nParis is the capital of ==France;;country==\n\nStep ==2;;two== follows ==3;;three==\n");
    expect(cards.map((c) => [c.deletions, c.reviewCards, c.clozes.map((z) => z.hint)])).toEqual([
      [["France"], 1, ["country"]],
      [["two", "three"], 3, ["", ""]],
    ]);
  });

  it("in a numbered note an unnumbered deletion is text, as SR leaves it", () => {
    const [card] = parseCards("#flashcards\n\n==1;;Canberra== is the capital, not ==Sydney==\n").cards;
    expect([card.deletions, card.reviewCards]).toEqual([["Canberra"], 1]);
  });

  it("honours custom patterns from data.json: Anki-like {{c1::answer::hint}} and footnote numbers", () => {
    const format = srFormatFromData(JSON.stringify({ settings: { singleLineCardSeparator: "||", clozePatterns: ["{{[c1::]answer[::hint]}}", "==answer==[^\\[hint\\]][\\[^123\\]]"] } }));
    const text = "#flashcards\n\nBrazilians speak {{c1::Portuguese::language}} and eat {{c2::feijoada}} with {{c1::rice}}\n\nThis is a ==cloze==^[a hint][^1]. This is ==too==[^2]. And ==this==[^1].\n";
    expect(parseCards(text, format).cards.map((c) => [c.deletions, c.reviewCards])).toEqual([
      [["Portuguese", "feijoada", "rice"], 2],
      [["cloze", "too", "this"], 2],
    ]);
  });

  it("a quiz asks one deletion with its hint, the others shown as answers", () => {
    const [card] = parseCards("#flashcards\n\nThe ==1;;mitochondria;;organelle== makes ==2;;ATP==\n").cards;
    expect(quizCardsFromDeck([card], "Bio").map((q) => [q.prompt, q.answer])).toEqual([
      ["The [organelle] makes ATP", "mitochondria"],
      ["The mitochondria makes [...]", "ATP"],
    ]);
  });

  // clozecraft 0.4 (ClozeNoteClassic/ClozeNoteOL getCardFront): SR's i-th sibling asks every deletion numbered
  // i at once; with a/h/s sequences it asks the "a" ones, hides the "h" ones and shows the rest.
  it("a quiz asks one SR sibling at a time: deletions sharing a number are blanked together", () => {
    const [card] = parseCards("#flashcards\n\nThe ==1;;mitochondria;;organelle== makes ==2;;ATP== from ==1;;glucose==\n").cards;
    const quiz = quizCardsFromDeck([card], "Bio");
    expect(quiz.map((q) => [q.prompt, q.answer])).toEqual([
      ["The [organelle] makes ATP from [...]", "mitochondria, glucose"],
      ["The mitochondria makes [...] from glucose", "ATP"],
    ]);
    expect(quiz).toHaveLength(countCards([card], 0).new);
  });

  it("overlapping sequences: asked deletions are blanks, hidden ones are marked, the rest shown; a sibling asking nothing is not a question", () => {
    const { cards } = parseCards("#flashcards\n\n==as;;Mercury==, ==sa;;Venus==, ==h;;Earth==\n\nStep ==2;;two== follows ==3;;three==\n");
    expect(quizCardsFromDeck(cards, "Sky").map((q) => [q.prompt, q.answer])).toEqual([
      ["[...], Venus, (...)", "Mercury"],
      ["Mercury, [...], Earth", "Venus"],
      // SR's first sibling of the second card asks nothing (there is no deletion 1): there is nothing to quiz.
      ["Step [...] follows three", "two"],
      ["Step two follows [...]", "three"],
    ]);
  });
});

describe("what Krypton writes stays a card to SR", () => {
  const cloze: NewCard = { kind: "cloze", front: "Plants make ==glucose== from light", back: "", source: "Bio/P" };
  const basic: NewCard = { kind: "basic", front: "Powerhouse?", back: "Mitochondria", source: "Bio/C" };

  it("with an end marker set, a cloze is closed by it (else SR merges it into the next card)", () => {
    const format = { ...DEFAULT_SR_FORMAT, endMarker: "+++" };
    const text = appendCards("---\nkrypton-deck: true\n---\n#flashcards/bio\n\n", [formatCard(cloze, format), formatCard(basic, format), formatCard(cloze, format).replace("glucose", "oxygen")], "#flashcards/bio", { trailingDecks: ["flashcards/bio"], openFence: null, openCard: false }, format.endMarker);
    expect(parseCards(text, format).cards.map((c) => [c.kind, c.deletions])).toEqual([
      ["cloze", ["glucose"]],
      ["basic", []],
      ["cloze", ["oxygen"]],
    ]);
  });

  it.each([
    ["Anki-like {{c1::…}}", ["{{[c1::]answer[::hint]}}"], "Plants make {{glucose}} from light [[Bio/P]]"],
    ["curly brackets", ["{{[123;;]answer[;;hint]}}"], "Plants make {{glucose}} from light [[Bio/P]]"],
    ["bold", ["**[123;;]answer[;;hint]**"], "Plants make **glucose** from light [[Bio/P]]"],
    ["footnote numbers, curly first", ["{{[c1::]answer[::hint]}}", "==answer==[^\\[hint\\]][\\[^123\\]]"], "Plants make {{glucose}} from light [[Bio/P]]"],
  ])("a cloze is written in the user's first cloze pattern SR reads (%s)", (_name, clozePatterns, line) => {
    const format = srFormatFromData(JSON.stringify({ settings: { clozePatterns } }));
    expect(formatCard(cloze, format)).toBe(line);
    expect(parseCards(`#flashcards\n\n${line}\n`, format).cards.map((c) => [c.kind, c.deletions])).toEqual([["cloze", ["glucose"]]]);
    expect(cleanCard(cloze, format)).toEqual(cloze);
  });

  it("a cloze whose deletion would read back otherwise in the user's pattern is dropped", () => {
    const format = srFormatFromData(JSON.stringify({ settings: { clozePatterns: ["{{[c1::]answer[::hint]}}"] } }));
    expect(cleanCard({ kind: "cloze", front: "Templates close with ==}}== here", back: "", source: "S" }, format)).toBeNull();
    // A numbered deletion in SR's default pattern still reads back as the one the model meant.
    expect(cleanCard({ kind: "cloze", front: "The ==1;;heart;;organ== pumps", back: "", source: "S" }, DEFAULT_SR_FORMAT)).not.toBeNull();
  });

  it("no cloze pattern SR can use: the cloze is written as a question and answer, and clozeWriter says there is none", () => {
    for (const clozePatterns of [[], ["{{answer}}"]]) {
      const format = srFormatFromData(JSON.stringify({ settings: { clozePatterns } }));
      expect(clozeWriter(format)).toBeNull();
      expect(parseCards(`#flashcards\n\n${formatCard(cloze, format)}\n`, format).cards.map((c) => [c.kind, c.front, c.back])).toEqual([["basic", "Plants make … from light", "glucose [[Bio/P]]"]]);
    }
  });

  it("a card whose separator would fall inside inline code is dropped", () => {
    expect(cleanCard({ kind: "basic", front: "What does `x do", back: "it y` maps", source: "S" }, DEFAULT_SR_FORMAT)).toBeNull();
  });

  it.each([
    ["an open code fence", `${fence}js\nconst a = 1;`],
    ["an open tilde fence, no final newline", "~~~~\nsome code\n~~~"],
  ])("cards appended after %s are cards, and the old bytes stay", async (_name, tail) => {
    const before = `---\nkrypton-deck: true\n---\n#flashcards/x\n\nQ::A\n<!--SR:!2024-08-16,51,230-->\n\n${tail}`;
    const temp = await makeTempVault({ "Flashcards/X.md": before });
    try {
      await appendToDeck(new FsVault(temp.root), "Flashcards/X.md", [{ card: basic, line: formatCard(basic, DEFAULT_SR_FORMAT) }], ["#flashcards/x"], DEFAULT_SR_FORMAT);
      const after = await temp.read("Flashcards/X.md");
      expect(after.startsWith(before)).toBe(true);
      const { cards } = parseCards(after);
      expect(cards.map((c) => [c.front, c.decks, c.schedules.length])).toEqual([
        ["Q", ["flashcards/x"], 1],
        ["Powerhouse?", ["flashcards/x"], 0],
      ]);
    } finally {
      await temp.cleanup();
    }
  });

  it("refuses to append after an HTML comment left open (SR reads nothing after it)", async () => {
    const before = "---\nkrypton-deck: true\n---\n#flashcards/x\n\nQ::A\n\n<!-- draft\n";
    const temp = await makeTempVault({ "Flashcards/X.md": before });
    try {
      await expect(appendToDeck(new FsVault(temp.root), "Flashcards/X.md", [{ card: basic, line: formatCard(basic, DEFAULT_SR_FORMAT) }], ["#flashcards/x"], DEFAULT_SR_FORMAT)).rejects.toThrow(/line 8/);
      expect(await temp.read("Flashcards/X.md")).toBe(before);
    } finally {
      await temp.cleanup();
    }
  });
});
