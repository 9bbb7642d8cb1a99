import { AgentError } from "../notes/agent-error";
import { NoteChangedError, type VaultPort } from "../ports/vault";
import { parseCards, type ParsedDeck } from "./card-parser";
import { appendCards, DECK_MARKER, deckTagOf, existingKeys, newCardKey, type NewCard } from "./card-writer";
import type { SrFormat } from "./sr-format";

/** A deck's text as read before generating, with its parse: reused at write time when the deck has not changed. */
export interface DeckSnapshot {
  text: string;
  parsed: ParsedDeck;
  /** cardKey of every card in `parsed`. */
  keys: Set<string>;
}

export function deckSnapshot(text: string, format: SrFormat): DeckSnapshot {
  const parsed = parseCards(text, format);
  return { text, parsed, keys: existingKeys(parsed.cards) };
}

/**
 * Appends cards to a Krypton deck with VaultPort.appendToNote against the text the cards were checked
 * against: the deck must still be a Krypton deck, cards already there are not added twice, and the old text
 * stays a byte-for-byte prefix. When the deck changed in between (an SR review, an edit), appendToNote
 * writes nothing and this re-reads and re-checks, a few times. Reading, parsing and the model call happen
 * before; when the deck is unchanged since `snapshot` its parse is reused. `tags` are the deck's possible tags
 * (deckTags): the cards go under the one the deck has. Resolves with the cards added.
 */
export async function appendToDeck(
  vault: VaultPort,
  deckPath: string,
  cards: { card: NewCard; line: string }[],
  tags: readonly string[],
  format: SrFormat,
  snapshot?: DeckSnapshot,
): Promise<NewCard[]> {
  let current = snapshot?.text ?? (await vault.readNote(deckPath));
  for (let attempt = 0; ; attempt++) {
    const { parsed, keys } = snapshot && current === snapshot.text ? snapshot : deckSnapshot(current, format);
    if (parsed.frontmatter[DECK_MARKER] !== "true") throw notADeck(deckPath);
    if (parsed.hiddenFrom !== null) throw hiddenTail(deckPath, parsed.hiddenFrom);
    const keep = cards.filter(({ card }) => !keys.has(newCardKey(card, format)));
    if (!keep.length) return [];
    const next = appendCards(
      current,
      keep.map((k) => k.line),
      deckTagOf(parsed, tags),
      parsed,
      format.endMarker,
    );
    try {
      await vault.appendToNote(deckPath, next.slice(current.length), current);
      return keep.map((k) => k.card);
    } catch (err) {
      if (!(err instanceof NoteChangedError) || attempt >= 8) throw err;
      current = await vault.readNote(deckPath);
    }
  }
}

export function notADeck(path: string): AgentError {
  return new AgentError(
    `${path} exists and is not a Krypton deck (no "${DECK_MARKER}: true" in its frontmatter). Krypton never changes your notes: choose another deck name.`,
    "invalid-input",
  );
}

/** Appending after an HTML comment SR never sees closed would write cards no review ever shows. */
function hiddenTail(path: string, line: number): AgentError {
  return new AgentError(
    `${path}: line ${line + 1} starts an HTML comment (<!--) that does not close on that line, and the Spaced Repetition plugin reads nothing after such a line, so new cards there would never come up for review. Close the comment on the same line (or remove it) and try again.`,
    "invalid-input",
  );
}
