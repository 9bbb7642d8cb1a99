import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseCards } from "../../../src/core/flashcards/card-parser";
import { appendCards, deckTag, formatCard, type NewCard } from "../../../src/core/flashcards/card-writer";
import { appendToDeck, deckSnapshot } from "../../../src/core/flashcards/deck-append";
import { DEFAULT_SR_FORMAT, type SrFormat } from "../../../src/core/flashcards/sr-format";
import { FsVault } from "../../../src/node/fs-vault";
import { seededRandom as rng } from "../../support/seeded-random";
import { makeTempVault } from "../../support/temp-vault";

const WORDS = ["cell", "ATP", "ключ", "数据", "émigré", "λ", "🙂", "x=1", "a|b", "[[Link]]", "#tag", "**bold**", "==hi==", "`code`", "::", "?"];

/** A deck note as it looks after weeks of SR reviews and hand edits. */
function deckNote(random: () => number, format: SrFormat): string {
  const pick = <T,>(xs: T[]) => xs[Math.floor(random() * xs.length)];
  const words = (n: number) => Array.from({ length: 1 + Math.floor(random() * n) }, () => pick(WORDS.filter((w) => w !== "::" && w !== "?"))).join(" ");
  const date = () => `20${20 + Math.floor(random() * 10)}-0${1 + Math.floor(random() * 9)}-1${Math.floor(random() * 9)}`;
  const sm2 = () => `<!--SR:!${date()},${Math.floor(random() * 300)},${130 + Math.floor(random() * 200)}-->`;
  const fsrs = () => `<!--SR:!fsrs,${date()},${(random() * 40).toFixed(2)},${(random() * 10).toFixed(2)},${Math.floor(random() * 4)}-->`;
  const nl = random() < 0.2 ? "\r\n" : "\n";
  const parts: string[] = ["---", "krypton-deck: true", `deck: "Deck ${Math.floor(random() * 9)}"`, "---", "", "#flashcards/deck", ""];
  const n = Math.floor(random() * 25);
  for (let i = 0; i < n; i++) {
    const r = random();
    let card: string;
    if (r < 0.35) card = `${words(4)}${format.singleLine}${words(4)}`;
    else if (r < 0.5) card = `${words(4)}${format.singleLineReversed}${words(3)}`;
    else if (r < 0.65) card = `${words(3)}${nl}${format.multiLine}${nl}${words(5)}`;
    else if (r < 0.8) card = `${words(3)} ==${words(2)}== ${words(2)}`;
    else if (r < 0.9) card = `## ${words(3)}`; // user heading
    else card = `${pick(["#flashcards/other", "#flashcards/deck", "Just a thought"])} ${random() < 0.5 ? words(3) : ""}`.trimEnd();
    const s = random();
    if (s < 0.3) card += `${nl}${sm2()}`;
    else if (s < 0.4) card += ` ${sm2()}`;
    else if (s < 0.5) card += `${nl}${fsrs()}`;
    parts.push(card, random() < 0.85 ? "" : "   ");
  }
  let text = parts.join(nl);
  // Endings users leave: none, one newline, many, trailing spaces.
  const end = random();
  if (end < 0.25) text = text.replace(/\s+$/u, "");
  else if (end < 0.5) text = text.replace(/\s+$/u, "") + nl;
  else if (end < 0.6) text += `${nl}${nl}${nl}`;
  else if (end < 0.7) text += "  ";
  return text;
}

const NEW: NewCard[] = [
  { kind: "basic", front: "What is the powerhouse of the cell?", back: "Mitochondria", source: "Bio/Cell#Organelles" },
  { kind: "reversed", front: "ATP", back: "adenosine triphosphate", source: "Bio/Cell" },
  { kind: "cloze", front: "Plants make ==glucose== from light", back: "", source: "Bio/Photosynthesis#Light" },
];

describe("appending cards never changes existing bytes", () => {
  const formats: [string, SrFormat][] = [
    ["default separators", DEFAULT_SR_FORMAT],
    ["custom separators", { ...DEFAULT_SR_FORMAT, singleLine: ";;", singleLineReversed: ";;;", multiLine: "%%", multiLineReversed: "%%%" }],
  ];
  it.each(formats)("%s: 400 generated deck notes with SR comments and user edits", (_name, format) => {
    const tag = deckTag("Deck", format);
    for (let seed = 1; seed <= 400; seed++) {
      const random = rng(seed);
      const before = deckNote(random, format);
      const parsedBefore = parseCards(before, format);
      const lines = NEW.slice(0, 1 + (seed % 3)).map((c) => formatCard(c, format));
      const after = appendCards(before, lines, tag, parsedBefore, format.endMarker);
      // 1. The old text is a byte-for-byte prefix.
      if (!after.startsWith(before)) throw new Error(`seed ${seed}: old content changed`);
      const parsedAfter = parseCards(after, format);
      // 2. Every old card reads the same (text, deck, schedule).
      const strip = (c: (typeof parsedBefore.cards)[number]) => ({ kind: c.kind, front: c.front, back: c.back, decks: c.decks, schedules: c.schedules });
      expect({ seed, cards: parsedAfter.cards.slice(0, parsedBefore.cards.length).map(strip) }).toEqual({ seed, cards: parsedBefore.cards.map(strip) });
      // 3. The new cards parse back as themselves, in the deck, each followed by a blank line.
      const added = parsedAfter.cards.slice(parsedBefore.cards.length);
      expect({ seed, fronts: added.map((c) => c.front.replace(/ \[\[.*\]\]$/, "")) }).toEqual({
        seed,
        fronts: lines.map((l, i) => (NEW[i].kind === "cloze" ? l.replace(/ \[\[.*\]\]$/, "") : NEW[i].front)),
      });
      expect(added.every((c) => c.decks.includes(tag.slice(1)))).toBe(true);
      // 4. The added lines end as the deck's do: a CRLF deck gets no LF-only line (mixed endings), an LF one no CR.
      const eol = before.includes("\r\n") ? "\r\n" : "\n";
      const addedText = after.slice(before.length);
      expect({ seed, blankLineAtEnd: after.endsWith(eol + eol), lfOnly: /(^|[^\r])\n/.test(addedText), cr: addedText.includes("\r") }).toEqual({
        seed,
        blankLineAtEnd: true,
        lfOnly: eol === "\r\n" ? false : true,
        cr: eol === "\r\n",
      });
    }
  });
});

describe("appendToDeck on a real file (VaultPort.appendToNote)", () => {
  const before = "---\nkrypton-deck: true\n---\n#flashcards/x\n\nQ::A\n<!--SR:!2024-08-16,51,230-->";
  const card = (i: number) => ({ card: { kind: "basic" as const, front: `Q${i}`, back: `A${i}`, source: "S" }, line: `Q${i}::A${i}` });

  it("concurrent appends all land once; old bytes stay a prefix", async () => {
    const temp = await makeTempVault({ "Flashcards/X.md": before });
    try {
      const vault = new FsVault(temp.root);
      await Promise.all(Array.from({ length: 5 }, (_, i) => appendToDeck(vault, "Flashcards/X.md", [card(i)], ["#flashcards/x"], DEFAULT_SR_FORMAT)));
      const after = await temp.read("Flashcards/X.md");
      expect(after.startsWith(before)).toBe(true);
      expect(parseCards(after).cards.map((c) => c.front).sort()).toEqual(["Q", "Q0", "Q1", "Q2", "Q3", "Q4"]);
    } finally {
      await temp.cleanup();
    }
  });

  it("a deck changed since it was read (an SR review) is re-read: the review stays, nothing is added twice", async () => {
    const temp = await makeTempVault({ "Flashcards/X.md": before });
    try {
      const vault = new FsVault(temp.root);
      const snapshot = deckSnapshot(before, DEFAULT_SR_FORMAT);
      const reviewed = `${before}\n\nQ1::A1\n<!--SR:!2026-01-01,3,250-->\n`;
      await temp.write("Flashcards/X.md", reviewed);
      const added = await appendToDeck(vault, "Flashcards/X.md", [card(1), card(2)], ["#flashcards/x"], DEFAULT_SR_FORMAT, snapshot);
      expect(added.map((c) => c.front)).toEqual(["Q2"]);
      const after = await temp.read("Flashcards/X.md");
      expect(after).toBe(`${reviewed}\nQ2::A2\n\n`);
      await expect(appendToDeck(vault, "Flashcards/Missing.md", [card(3)], ["#flashcards/x"], DEFAULT_SR_FORMAT)).rejects.toThrow("Note not found");
    } finally {
      await temp.cleanup();
    }
  });

  it("a deck with CRLF line endings gets CRLF lines; its bytes stay a prefix", async () => {
    const crlf = before.replace(/\n/g, "\r\n") + "\r\n";
    const temp = await makeTempVault({ "Flashcards/X.md": crlf });
    try {
      await appendToDeck(new FsVault(temp.root), "Flashcards/X.md", [card(1), card(2)], ["#flashcards/x"], DEFAULT_SR_FORMAT);
      const bytes = await readFile(join(temp.root, "Flashcards/X.md"));
      const old = Buffer.from(crlf, "utf8");
      expect(bytes.subarray(0, old.length).equals(old)).toBe(true);
      expect(bytes.subarray(old.length).toString("utf8")).toBe("\r\nQ1::A1\r\n\r\nQ2::A2\r\n\r\n");
    } finally {
      await temp.cleanup();
    }
  });

  it("refuses a note that is not a Krypton deck and writes nothing", async () => {
    const temp = await makeTempVault({ "D.md": "keep me::yes\n" });
    try {
      await expect(appendToDeck(new FsVault(temp.root), "D.md", [card(1)], ["#flashcards/x"], DEFAULT_SR_FORMAT)).rejects.toThrow(/not a Krypton deck/);
      expect(await temp.read("D.md")).toBe("keep me::yes\n");
    } finally {
      await temp.cleanup();
    }
  });
});
