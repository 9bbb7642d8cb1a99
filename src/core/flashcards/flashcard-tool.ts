import { z } from "zod";
import { ToolError } from "../tools/tool";
import { defineTool, type ToolRegistry } from "../tools/tool-registry";
import { FLASHCARD_LIMITS } from "./card-generator";
import type { FlashcardService } from "./flashcard-service";

/**
 * `generate_flashcards`: cards from a note or a topic into a deck note. The source note is checked through
 * the registry's own read_note tool first, so MCP clients meet the same path, exclusion and symlink rules
 * as for every other read; decks are named, never pathed, so a client cannot write anywhere else.
 */
export function registerFlashcardTool(registry: ToolRegistry, flashcards: FlashcardService): void {
  registry.register(
    defineTool({
      name: "generate_flashcards",
      changesVault: true,
      title: "Generate flashcards",
      description:
        "Makes spaced-repetition flashcards (Obsidian Spaced Repetition plugin format) from one note (note_path) or from what the vault's notes say " +
        "about a topic, and appends them to a deck note in Krypton's flashcards folder. Each card is grounded in a cited passage and links its source; " +
        "cards already in the deck are not added again. Never changes the source note.",
      // A topic's passages come from the index (a note_path's do not, but one declaration per tool).
      needsIndex: "reads",
      inputSchema: {
        note_path: z.string().max(1024).optional().describe('The source note, vault-relative or absolute inside the vault, e.g. "Biology/Photosynthesis.md".'),
        topic: z.string().max(200).optional().describe("A topic to gather passages for from the index, when no note_path is given."),
        deck: z.string().max(80).optional().describe("Deck name (a note in the flashcards folder); defaults to the note's title or the topic."),
        max_cards: z
          .number()
          .int()
          .min(1)
          .max(FLASHCARD_LIMITS.maxCards)
          .optional()
          .describe(`Cards at most, 1 to ${FLASHCARD_LIMITS.maxCards} (default ${FLASHCARD_LIMITS.defaultCards}).`),
      },
      outputSchema: {
        deckPath: z.string(),
        added: z.array(z.object({ type: z.string(), front: z.string(), back: z.string(), source: z.string() })),
        duplicates: z.number(),
        ungrounded: z.number(),
        unusable: z.number(),
        createdDeck: z.boolean(),
        keywordOnly: z.string().optional().describe("Set when the topic's notes were matched by keywords only: why."),
        srIgnoredFolder: z.string().optional().describe("Set when the deck is in one of the Spaced Repetition plugin's \"Folders to ignore\": that entry (SR will not review its cards)."),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async run(input, context) {
        let notePath: string | undefined;
        if (input.note_path !== undefined && input.note_path.trim() !== "") {
          const note = await registry.call("read_note", { path: input.note_path }, context);
          notePath = (note.structured as { path: string }).path;
        } else if (!input.topic?.trim()) {
          throw new ToolError("Missing required parameter: note_path or topic", "invalid-input");
        }
        const run = await flashcards.generate({ notePath, topic: notePath ? undefined : input.topic, deck: input.deck, max: input.max_cards, signal: context.signal });
        const structured = {
          deckPath: run.deckPath,
          added: run.added.map((c) => ({ type: c.kind, front: c.front, back: c.back, source: c.source })),
          duplicates: run.counts.duplicates,
          ungrounded: run.counts.ungrounded,
          unusable: run.counts.unusable,
          createdDeck: run.createdDeck,
          ...(run.keywordOnly ? { keywordOnly: run.keywordOnly } : {}),
          ...(run.srIgnoredFolder !== undefined ? { srIgnoredFolder: run.srIgnoredFolder } : {}),
        };
        return { structured, text: run.text };
      },
    }),
  );
}
