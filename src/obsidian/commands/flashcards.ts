import { Notice } from "obsidian";
import { AgentError } from "../../core/notes/agent-error";
import type { FlashcardRun } from "../../core/flashcards/flashcard-service";
import { errorMessage } from "../../core/util/errors";
import type { KryptonServices } from "../plugin-services";

/** "Generate flashcards" for a note, or for the selected part of it (cards still link the note). */
export async function generateFlashcards(services: KryptonServices, path: string | undefined, selection?: string): Promise<FlashcardRun | null> {
  if (!path) {
    new Notice("Open a note first.");
    return null;
  }
  const notice = new Notice(selection ? "Making flashcards from the selection…" : `Making flashcards from ${path}…`, 0);
  try {
    const run = await services.core.flashcards.generate({ notePath: path, selection });
    notice.hide();
    // The first paragraph says what happened (added N to [[deck]] / skipped …); the card list stays in the deck.
    new Notice(run.text.split("\n\n").slice(0, 2).join("\n"), 8000);
    return run;
  } catch (err) {
    notice.hide();
    new Notice(err instanceof AgentError ? err.message : `Could not make flashcards: ${errorMessage(err)}`);
    return null;
  }
}

/** "Export deck for Obsidian_to_Anki": the open deck note's cards to a new note in that plugin's format. */
export async function exportDeckForAnki(services: KryptonServices, path: string | undefined): Promise<void> {
  if (!path) {
    new Notice("Open a deck note first.");
    return;
  }
  try {
    const result = await services.core.flashcards.exportAnki(path);
    new Notice(result.text, 8000);
  } catch (err) {
    new Notice(err instanceof AgentError ? err.message : `Could not export the deck: ${errorMessage(err)}`);
  }
}
