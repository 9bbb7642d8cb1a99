import { parseCards, type CardKind } from "../../../src/core/flashcards/card-parser";
import { DEFAULT_SR_FORMAT, srFormatFromData } from "../../../src/core/flashcards/sr-format";
import { countCards, parseSchedules } from "../../../src/core/flashcards/sr-schedule";

/** The docs' footnote examples (^[hint], [^1]) need the footnote pattern from its custom-pattern table; SR's default reads [^1] as text. */
const FOOTNOTES = ["==answer==[^\\[hint\\]][\\[^123\\]]"];

/** Each example from the Spaced Repetition plugin's docs, under a deck tag, with the documented result. */
const DOC_EXAMPLES: { name: string; text: string; kind: CardKind; reviewCards: number; front?: string; back?: string; patterns?: string[] }[] = [
  { name: "single-line basic", text: "the question goes on this side::answer goes here!", kind: "basic", reviewCards: 1, front: "the question goes on this side", back: "answer goes here!" },
  { name: "single-line bidirectional", text: "info 1:::info 2", kind: "reversed", reviewCards: 2, front: "info 1", back: "info 2" },
  {
    name: "multi-line basic",
    text: 'As per the definition\nof "multiline" the prompt\ncan be on multiple lines\n?\nsame goes for\nthe answer',
    kind: "multiline",
    reviewCards: 1,
    front: 'As per the definition\nof "multiline" the prompt\ncan be on multiple lines',
    back: "same goes for\nthe answer",
  },
  { name: "multi-line bidirectional (trailing space after ??)", text: "info 1A\ninfo 1B\ninfo 1C\n?? \ninfo 2A\ninfo 2B", kind: "multiline-reversed", reviewCards: 2, back: "info 2A\ninfo 2B" },
  { name: "single cloze", text: "The first female prime minister of Australia was ==Julia Gillard==", kind: "cloze", reviewCards: 1, back: "Julia Gillard" },
  { name: "multiple clozes", text: "The first female ==prime minister== of Australia was ==Julia Gillard==", kind: "cloze", reviewCards: 2, back: "prime minister, Julia Gillard" },
  { name: "simplified clozes with a hint", text: "This ==note== doesn't need to have ==number==^[hint] on clozes", kind: "cloze", reviewCards: 2, patterns: FOOTNOTES },
  {
    name: "classic clozes (sequence numbers)",
    text: "This is a ==cloze==^[a hint][^1]. This is ==too, but without hint==[^2]. And this one is asked ==together with the first cloze==[^1].",
    kind: "cloze",
    reviewCards: 2,
    patterns: FOOTNOTES,
  },
  {
    name: "generalized cloze overlapping",
    text: "==Some context for items 2 and 4, but that could spoil items 1 and 3. Note that this doesn't even need to be asked==[^hshs]\n.\n- ==Item 1==[^ashh]\n- ==Item 2==[^hash]\n- ==Item 3==[^hhas]\n- ==Item 4==[^hhha]",
    kind: "cloze",
    reviewCards: 4,
    patterns: FOOTNOTES,
  },
  { name: "data-storage example", text: "The RCU and WCU limits for a single partition key value::3000 RCU, 1000 WCU\n<!--SR:!2024-08-16,51,230-->", kind: "basic", reviewCards: 1, back: "3000 RCU, 1000 WCU" },
];

describe("SR parser: the plugin's documented examples", () => {
  it.each(DOC_EXAMPLES)("$name", ({ text, kind, reviewCards, front, back, patterns }) => {
    const { cards } = parseCards(`#flashcards\n${text}\n`, patterns ? { ...DEFAULT_SR_FORMAT, clozePatterns: patterns } : DEFAULT_SR_FORMAT);
    expect(cards).toHaveLength(1);
    expect(cards[0]).toMatchObject({ kind, reviewCards, decks: ["flashcards"] });
    if (front !== undefined) expect(cards[0].front).toBe(front);
    if (back !== undefined) expect(cards[0].back).toBe(back);
  });

  it("decks: a tag line applies to the cards after it until the next tag line", () => {
    const text = [
      "#flashcards/deckA",
      "Question1 (in deckA)::Answer1",
      "Question2 (also in deckA)::Answer2",
      "Question3 (also in deckA)::Answer3",
      "",
      "#flashcards/deckB",
      "Question4 (in deckB)::Answer4",
      "Question5 (also in deckB)::Answer5",
      "",
      "#flashcards/deckC",
      "Question6 (in deckC)::Answer6",
    ].join("\n");
    const { cards, trailingDecks } = parseCards(text);
    expect(cards.map((c) => [c.front.split(" ")[0], c.decks])).toEqual([
      ["Question1", ["flashcards/deckA"]],
      ["Question2", ["flashcards/deckA"]],
      ["Question3", ["flashcards/deckA"]],
      ["Question4", ["flashcards/deckB"]],
      ["Question5", ["flashcards/deckB"]],
      ["Question6", ["flashcards/deckC"]],
    ]);
    expect(trailingDecks).toEqual(["flashcards/deckC"]);
  });

  it("decks: one card in several decks (all tags on one line)", () => {
    const { cards } = parseCards("#flashcards/language/words #flashcards/trivia #flashcards/learned-from-tv\nA group of cats is called a::clowder");
    expect(cards).toHaveLength(1);
    expect(cards[0].decks).toEqual(["flashcards/language/words", "flashcards/trivia", "flashcards/learned-from-tv"]);
    expect(cards[0].back).toBe("clowder");
  });

  it("decks: a tag at the start of a card's first line applies to that card only", () => {
    const text = [
      "#flashcards/deckA",
      "Question1 (in deckA)::Answer1",
      "Question2 (also in deckA)::Answer2",
      "Question3 (also in deckA)::Answer3",
      "",
      "#flashcards/deckB Question4 (in deckB)::Answer4",
      "",
      "Question6 (in deckA)::Answer6",
    ].join("\n");
    const { cards } = parseCards(text);
    expect(cards.map((c) => c.decks[0])).toEqual(["flashcards/deckA", "flashcards/deckA", "flashcards/deckA", "flashcards/deckB", "flashcards/deckA"]);
    expect(cards[3].front).toBe("Question4 (in deckB)");
  });

  it("decks: frontmatter tags put the whole note in a deck", () => {
    const { cards } = parseCards("---\ntags: [flashcards/bio, other]\n---\nWhat makes ATP?::Mitochondria\n");
    expect(cards[0].decks).toEqual(["flashcards/bio"]);
  });

  // SR's splitNoteIntoFrontmatterAndContent: exactly "---" opens and closes it; YAML's "..." closes nothing.
  it("frontmatter is found as SR finds it: '---' to '---', not closed by '...' nor opened by '--- '", () => {
    const dots = parseCards("---\ntags: [flashcards/bio]\n...\nWhat makes ATP?::Mitochondria\n\n#flashcards/other\n");
    expect(dots.frontmatter).toEqual({});
    expect(dots.cards.map((c) => [c.front, c.decks])).toEqual([["What makes ATP?", ["flashcards/other"]]]);
    const spaced = parseCards("--- \ntags: [flashcards/bio]\n---\nWhat makes ATP?::Mitochondria\n\n#flashcards/other\n");
    expect(spaced.cards.map((c) => c.decks)).toEqual([["flashcards/other"]]);
    // Closed by "---" after a "...", CRLF or not: the frontmatter of SR, tags and all.
    const closed = parseCards("---\r\ntags: [flashcards/bio]\r\n...\r\n---\r\nWhat makes ATP?::Mitochondria\r\n\r\n#flashcards/other\r\n");
    expect(closed.cards.map((c) => c.decks)).toEqual([["flashcards/bio"]]);
  });

  it("never reads cards from code blocks", () => {
    const text = "#flashcards\n```\nnot::a card\n```\n\nreal::card\n";
    expect(parseCards(text).cards.map((c) => c.front)).toEqual(["real"]);
  });

  it("custom separators from SR's data.json (users move off '::' because of Dataview)", () => {
    const format = srFormatFromData(
      JSON.stringify({
        settings: {
          singleLineCardSeparator: ";;",
          singleLineReversedCardSeparator: ";;;",
          multilineCardSeparator: "%%",
          multilineReversedCardSeparator: "%%%",
          flashcardTags: ["#cards"],
        },
      }),
    );
    const text = "#cards/x\nfield:: a Dataview field, not a card\n\nQ;;A\n\nterm;;;definition\n\nfront\n%%\nback\n\nf1\n%%%\nb1\n";
    const { cards } = parseCards(text, format);
    expect(cards.map((c) => [c.kind, c.front, c.back])).toEqual([
      ["basic", "Q", "A"],
      ["reversed", "term", "definition"],
      ["multiline", "front", "back"],
      ["multiline-reversed", "f1", "b1"],
    ]);
    expect(cards.every((c) => c.decks[0] === "cards/x")).toBe(true);
  });

  it("a missing, broken or partial data.json keeps SR's defaults; a broken one says why", () => {
    expect(srFormatFromData(null)).toEqual(DEFAULT_SR_FORMAT);
    expect(srFormatFromData("{}")).toEqual(DEFAULT_SR_FORMAT);
    expect(srFormatFromData(JSON.stringify({ settings: { singleLineCardSeparator: 5 } }))).toEqual(DEFAULT_SR_FORMAT);
    expect(srFormatFromData("{not json", "x/data.json")).toEqual({ ...DEFAULT_SR_FORMAT, problem: expect.stringMatching(/^x\/data\.json is not valid JSON \(.+\)$/) });
    for (const odd of ["[]", "null", '{"settings": "x"}', '{"settings": []}']) {
      expect(srFormatFromData(odd, "x/data.json")).toEqual({ ...DEFAULT_SR_FORMAT, problem: "x/data.json holds no settings object" });
    }
  });

  it("the end marker setting lets multi-line cards contain blank lines", () => {
    const format = { ...DEFAULT_SR_FORMAT, endMarker: "+++" };
    const { cards } = parseCards("#flashcards\nfront\n?\n\n| a | b |\n+++\nnext::card\n", format);
    expect(cards.map((c) => [c.kind, c.front, c.back])).toEqual([
      ["multiline", "front", "\n| a | b |"],
      ["basic", "next", "card"],
    ]);
  });
});

describe("SR scheduling comments", () => {
  it("reads SM-2 comments on the next line and on the same line, and sibling entries", () => {
    const text = "#flashcards\nQ1::A1\n<!--SR:!2024-08-16,51,230-->\n\nQ2:::A2 <!--SR:!2024-01-01,3,250!2030-01-01,4,270-->\n\nmulti\n?\nline\n<!--SR:!2024-02-02,1,230-->\n";
    const { cards } = parseCards(text);
    expect(cards.map((c) => c.schedules.map((s) => s.due))).toEqual([["2024-08-16"], ["2024-01-01", "2030-01-01"], ["2024-02-02"]]);
    expect(cards[1].back).toBe("A2");
  });

  it("counts due cards in both the SM-2 and the FSRS forms", () => {
    const schedules = parseSchedules("<!--SR:!2024-08-16,51,230-->\n<!--SR:!fsrs,2030-05-01,12.5,4.2,3-->\n<!--SR:!fsrs,2024-01-02,1,5,1-->");
    expect(schedules.map((s) => s.algorithm)).toEqual(["sm2", "fsrs", "fsrs"]);
    expect(countCards([{ reviewCards: 3, schedules }], Date.UTC(2025, 0, 1, 12), "UTC")).toEqual({ due: 2, new: 0 });
  });

  it("an FSRS entry's due is its own second field: '-' (never scheduled) is new, whatever date its last review has", () => {
    const schedules = parseSchedules("<!--SR:!fsrs,-,0,0,0,0,0,0,0,2024-01-01T08:00:00.000Z!fsrs,2024-03-01T08:00:00.000Z,3,4,5,2,1,0,0,2024-02-27T08:00:00.000Z-->");
    expect(schedules).toEqual([
      { due: null, algorithm: "fsrs" },
      { due: "2024-03-01T08:00:00.000Z", algorithm: "fsrs" },
    ]);
    // Seven hours before the instant it is not due, even where that day has begun (Kiritimati, UTC+14).
    expect(countCards([{ reviewCards: 2, schedules }], Date.UTC(2024, 2, 1, 1), "Pacific/Kiritimati")).toEqual({ due: 0, new: 1 });
    expect(countCards([{ reviewCards: 2, schedules }], Date.UTC(2024, 2, 1, 8), "Pacific/Kiritimati")).toEqual({ due: 1, new: 1 });
  });

  it("a sibling with SR's placeholder date 2000-01-01 is new, not due; one with no entry is new too", () => {
    // SR writes the placeholder for siblings not yet reviewed when one of them was.
    const text = "#flashcards\n\nThe ==heart== pumps ==blood== through ==arteries==\n<!--SR:!2000-01-01,1,250!2024-05-01,3,250-->\n";
    const { cards } = parseCards(text);
    expect(cards[0].schedules.map((s) => s.due)).toEqual([null, "2024-05-01"]);
    expect(countCards(cards, Date.UTC(2025, 0, 1, 12), "UTC")).toEqual({ due: 1, new: 2 });
  });
});
