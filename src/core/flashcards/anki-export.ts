import type { ParsedCard } from "./card-parser";
import { srOrder } from "./sr-cloze";

/**
 * A Krypton deck's cards in the note format of the Obsidian_to_Anki plugin (Pseudonium), as its wiki documents:
 * `TARGET DECK` and the deck name on the next line; one block per card, `START`, the note type (`Basic`,
 * `Basic (and reversed card)`, `Cloze`), fields prefixed `Front:` / `Back:` (Cloze: `Text:` / `Back Extra:`),
 * a field continuing on the next lines, `END`. The `<!--ID: …-->` lines are that plugin's to add when it
 * creates the Anki notes, so an export has none. Clozes use Anki's own `{{c1::…}}` syntax (no CurlyCloze needed).
 */
export const ANKI_EXPORT_MARKER = "krypton-anki-export";
/** Exports go here, outside the flashcards folder, so their `{{c1::…}}` never read as Spaced Repetition cards. */
export const ANKI_EXPORT_FOLDER = "Anki exports";

/** Lines Obsidian_to_Anki reads as syntax: a card containing one as a whole line cannot be a block. */
const SYNTAX_LINE = /^(START|END|STARTI|ENDI|TARGET DECK|FILE TAGS|DELETE|FROZEN)$/;

export interface AnkiExport {
  text: string;
  exported: number;
  /** Cards left out, with why. */
  skipped: { front: string; reason: string }[];
}

export function ankiExportText(deckName: string, deckLink: string, cards: readonly ParsedCard[], date: string): AnkiExport {
  const blocks: string[] = [];
  const skipped: AnkiExport["skipped"] = [];
  for (const card of cards) {
    const block = ankiBlock(card);
    if (typeof block === "string") blocks.push(block);
    else skipped.push({ front: card.front.split("\n")[0].slice(0, 80), reason: block.reason });
  }
  const head = [
    "---",
    `${ANKI_EXPORT_MARKER}: true`,
    `source deck: "[[${deckLink}]]"`,
    `exported: ${date}`,
    "---",
    "",
    `Cards of [[${deckLink}]] for the Obsidian_to_Anki plugin: run its "Scan vault" to send them to Anki. The deck note`,
    "itself is unchanged; export again after adding cards (a new note is written).",
    "",
    "TARGET DECK",
    deckName,
    "",
  ];
  return { text: `${[...head, ...blocks.map((b) => `${b}\n`)].join("\n")}`, exported: blocks.length, skipped };
}

function ankiBlock(card: ParsedCard): string | { reason: string } {
  const clean = (s: string) => s.replace(/<!--SR:[^>]*-->/g, "").replace(/[ \t]+$/gm, "").trim();
  const front = clean(card.front);
  const back = clean(card.back);
  if ([...front.split("\n"), ...back.split("\n")].some((l) => SYNTAX_LINE.test(l.trim()))) return { reason: "a line of it would read as Obsidian_to_Anki syntax" };
  if (card.kind === "cloze") {
    let text = front;
    const link = /\s*(\[\[[^\]]*\]\])\s*$/.exec(text);
    if (link) text = text.slice(0, link.index);
    let found = 0;
    // SR's order (srOrder), so an unnumbered deletion's Anki number is its sibling's place in SR: with several
    // patterns SR counts them pattern by pattern, not in text order.
    for (const [k, i] of srOrder(card.clozes).entries()) {
      const cloze = card.clozes[i];
      if (!text.includes(cloze.raw)) continue;
      found++;
      // Numbered deletions keep their number: those sharing it are one card in SR, and one in Anki.
      const number = cloze.group ?? k + 1;
      text = text.replace(cloze.raw, `{{c${number}::${cloze.answer}${cloze.hint ? `::${cloze.hint}` : ""}}}`);
    }
    if (!found) return { reason: "no cloze deletion found" };
    return ["START", "Cloze", `Text: ${text}`, ...(link ? [`Back Extra: ${link[1]}`] : []), "END"].join("\n");
  }
  if (!front || !back) return { reason: "an empty side" };
  const type = card.kind === "reversed" || card.kind === "multiline-reversed" ? "Basic (and reversed card)" : "Basic";
  return ["START", type, `Front: ${front}`, `Back: ${back}`, "END"].join("\n");
}
