/**
 * Flashcards: parsing a 10,000-card deck note (every card kind, SR scheduling comments), and appending 20
 * cards to a 2 MB deck the way FlashcardService does it, on a real file: the deck is read and parsed before
 * the model call; the append is one FsVault.appendToNote against that text (re-read and re-checked if it changed),
 * de-duplicates and writes old text + new cards atomically. Both the append step and read+parse+append are reported.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseCards } from "../src/core/flashcards/card-parser";
import { formatCard, type NewCard } from "../src/core/flashcards/card-writer";
import { appendToDeck, deckSnapshot } from "../src/core/flashcards/deck-append";
import { DEFAULT_SR_FORMAT } from "../src/core/flashcards/sr-format";
import { FsVault } from "../src/node/fs-vault";
import { now, stats, target, type Measurement } from "./bench-kit";

/** A deck note of about `targetChars`, or of `cards` cards, mixing kinds and SR comments like a reviewed deck. */
export function syntheticDeck(options: { cards?: number; targetChars?: number }): { text: string; cards: number } {
  const parts = ["---", "krypton-deck: true", 'deck: "Bench"', "---", "", "#flashcards/bench", ""];
  let size = parts.join("\n").length;
  let n = 0;
  const filler = "about the topic with enough words to look like a real card written by a person";
  for (;;) {
    if (options.cards !== undefined && n >= options.cards) break;
    if (options.targetChars !== undefined && size >= options.targetChars) break;
    let card: string;
    switch (n % 5) {
      case 0:
        card = `Question ${n} ${filler}?::Answer ${n} ${filler} [[Source ${n % 97}#Part ${n % 7}]]\n<!--SR:!2026-0${1 + (n % 9)}-1${n % 9},${n % 300},${130 + (n % 200)}-->`;
        break;
      case 1:
        card = `Term ${n}:::Definition ${n} ${filler} [[Source ${n % 97}]]`;
        break;
      case 2:
        card = `Multi ${n} line front\n${filler}\n?\nBack ${n}\n${filler}\n<!--SR:!fsrs,2026-03-0${n % 9},12.5,4.2,3-->`;
        break;
      case 3:
        card = `Cloze ${n}: the ==key term ${n}== is ${filler} and ==another== [[Source ${n % 97}]]`;
        break;
      default:
        card = `Question ${n} ${filler}?::Answer ${n} <!--SR:!2026-01-01,3,250-->`;
    }
    parts.push(card, "");
    size += card.length + 2;
    n++;
  }
  return { text: parts.join("\n"), cards: n };
}

const NEW: NewCard[] = Array.from({ length: 20 }, (_, i) => ({ kind: "basic", front: `Fresh question ${i} never seen before?`, back: `Fresh answer ${i}`, source: "New/Source#Part" }));

export const flashcardsMeasurement: Measurement = {
  name: "flashcards",
  describe: "flashcards: parsing a 10,000-card deck; appending 20 cards to a 2 MB deck (read + parse before the model call; append: de-dup, appendToNote with its re-check, atomic write)",
  async run(ctx) {
    const failures: { what: string; error: string }[] = [];
    const big = syntheticDeck({ cards: 10_000 });
    for (let i = 0; i < 5; i++) parseCards(big.text);
    const parseTimes: number[] = [];
    let parsed = 0;
    for (let i = 0; i < 30; i++) {
      const t0 = now();
      parsed = parseCards(big.text).cards.length;
      parseTimes.push(now() - t0);
    }
    if (parsed !== big.cards) failures.push({ what: "parse", error: `parsed ${parsed} cards of ${big.cards}` });
    const p = stats(parseTimes);

    const dir = join(ctx.workDir, "flashcards-bench");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, "Flashcards"), { recursive: true });
    const deck = syntheticDeck({ targetChars: 2 * 1024 * 1024 });
    const vault = new FsVault(dir);
    const lines = NEW.map((c) => formatCard(c, DEFAULT_SR_FORMAT));
    const appendTimes: number[] = [];
    const coldTimes: number[] = [];
    const cards = NEW.map((card, i) => ({ card, line: lines[i] }));
    for (let round = 0; round < 25; round++) {
      writeFileSync(join(dir, "Flashcards", "Bench.md"), deck.text);
      // What FlashcardService does before the model call: read the deck and parse it (for de-duplication).
      const t0 = now();
      const text = await vault.readNote("Flashcards/Bench.md");
      const snapshot = deckSnapshot(text, DEFAULT_SR_FORMAT);
      // After the model answered: the append itself (de-dup from the snapshot, appendToNote: re-check, atomic write).
      const t1 = now();
      const added = await appendToDeck(vault, "Flashcards/Bench.md", cards, ["#flashcards/bench"], DEFAULT_SR_FORMAT, snapshot);
      const t2 = now();
      if (added.length !== 20) failures.push({ what: `append round ${round}`, error: `added ${added.length} of 20` });
      if (round >= 5) {
        appendTimes.push(t2 - t1);
        coldTimes.push(t2 - t0);
      }
    }
    const cold = stats(coldTimes);
    const a = stats(appendTimes);
    rmSync(dir, { recursive: true, force: true });
    return {
      figures: {
        parse10kCards: big.cards,
        parse10kChars: big.text.length,
        parse10kP50Ms: p.p50,
        parse10kP95Ms: p.p95,
        append20To2MbChars: deck.text.length,
        append20To2MbCards: deck.cards,
        append20P50Ms: a.p50,
        append20P95Ms: a.p95,
        readParseAppend20P50Ms: cold.p50,
      },
      targets: [
        target("flashcards-parse-10k", "parsing a 10,000-card deck ≤ 100 ms (p50)", p.p50, "ms", p.p50 <= 100),
        target("flashcards-append-2mb", "appending 20 cards to a 2 MB deck ≤ 50 ms (p50: the write step, de-dup against the deck read before the model call, atomic write)", a.p50, "ms", a.p50 <= 50),
      ],
      failures,
    };
  },
};
