import { AgentError } from "../notes/agent-error";
import type { VaultPort } from "../ports/vault";
import { parseCards, type ParsedDeck } from "./card-parser";
import { appendCards, cardKey, DECK_MARKER, existingKeys, type NewCard } from "./card-writer";
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
 * Appends cards to a Krypton deck in one atomic VaultPort.process: the deck is re-checked inside (still a
 * Krypton deck, cards added meanwhile are not added twice) and the old text stays a byte-for-byte prefix.
 * Reading, parsing and the model call happen before; when the deck is unchanged since `snapshot` its
 * parse is reused, so the write itself costs one comparison, the append and the file write.
 * Resolves with the cards actually added.
 */
export async function appendToDeck(
  vault: VaultPort,
  deckPath: string,
  cards: { card: NewCard; line: string }[],
  tag: string,
  format: SrFormat,
  snapshot?: DeckSnapshot,
): Promise<NewCard[]> {
  let added: NewCard[] = [];
  await vault.process(deckPath, (current) => {
    const { parsed, keys } = snapshot && current === snapshot.text ? snapshot : deckSnapshot(current, format);
    if (parsed.frontmatter[DECK_MARKER] !== "true") throw notADeck(deckPath);
    const keep = cards.filter(({ card }) => !keys.has(cardKey(card.front)));
    added = keep.map((k) => k.card);
    return appendCards(
      current,
      keep.map((k) => k.line),
      tag,
      parsed.trailingDecks,
    );
  });
  return added;
}

export function notADeck(path: string): AgentError {
  return new AgentError(
    `${path} exists and is not a Krypton deck (no "${DECK_MARKER}: true" in its frontmatter). Krypton never changes your notes: choose another deck name.`,
    "invalid-input",
  );
}
