import { existsSync } from "node:fs";
import * as path from "node:path";
import { nodeVaultLocation } from "../../node/path-symlink-guard";
import { flag, parseIntStrict, stringOption } from "../args";
import type { Command } from "../command";
import { CONFIG_OPTIONS } from "../config";
import { EXIT_OK, UsageError } from "../errors";
import { openIndex, openVaultSession } from "../vault-session";
import { checkPositionals, withAbortOnInterrupt } from "./command-helpers";

/**
 * `krypton flashcards <vault> --note … | --topic …`: the generate_flashcards tool from the one registry,
 * so the CLI meets the same path rules, grounding, de-duplication and deck writing as chat and MCP.
 */
export const flashcardsCommand: Command = {
  name: "flashcards",
  summary: "Make Spaced Repetition flashcards from a note or a topic into a deck note",
  usage: 'krypton flashcards <vault> (--note NOTE | --topic "...") [--deck NAME] [--max N] [--json] | --export-anki DECK',
  details: [
    "Cards are written in the Spaced Repetition plugin's format (its separators when it is installed) to",
    "<flashcards folder>/<deck>.md, a note Krypton creates and only ever appends to. A repeated run adds",
    "only cards the deck does not have yet. The source note is never changed.",
    "--export-anki DECK writes the deck's cards in the Obsidian_to_Anki plugin's format (START/END blocks,",
    'TARGET DECK) to a new note "Anki exports/<deck>.md"; the deck is not changed and no model is called.',
    "",
    "Examples:",
    '  krypton flashcards ~/Notes --note "Biology/Photosynthesis.md"',
    '  krypton flashcards ~/Notes --topic "AWS networking" --deck "AWS SAA" --max 20 --json',
    '  krypton flashcards ~/Notes --export-anki "AWS SAA"',
  ].join("\n"),
  options: {
    note: { type: "string", value: "NOTE", description: "The source note (vault-relative, or a path to it)" },
    topic: { type: "string", value: "TEXT", description: "A topic: passages come from the vault's index" },
    deck: { type: "string", value: "NAME", description: "Deck name (default: the note's title or the topic)" },
    max: { type: "string", value: "N", description: "Cards at most, 1 to 30 (default 10)" },
    "export-anki": { type: "string", value: "DECK", description: "Export a deck for the Obsidian_to_Anki plugin (a new note)" },
    json: { type: "boolean", description: "Print the result as JSON" },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    const [vault] = args.positionals;
    if (vault === undefined) throw new UsageError("missing <vault>");
    checkPositionals(args.positionals, 1);
    const exportDeck = stringOption(args, "export-anki");
    if (exportDeck !== undefined) {
      if (["note", "topic", "deck", "max"].some((o) => stringOption(args, o) !== undefined)) throw new UsageError("--export-anki takes no --note, --topic, --deck or --max");
      const session = await openVaultSession(vault, args, ctx, { probeEmbedder: false });
      try {
        const result = await session.core.flashcards.exportAnki(exportDeck);
        if (flag(args, "json")) ctx.output.json({ path: result.path, deckPath: result.deckPath, exported: result.exported, skipped: result.skipped });
        else ctx.output.out(`${result.text}\n`);
        return EXIT_OK;
      } finally {
        await session.close();
      }
    }
    const note = stringOption(args, "note");
    const topic = stringOption(args, "topic");
    if ((note === undefined) === (topic === undefined)) throw new UsageError("give exactly one of --note or --topic");
    const maxRaw = stringOption(args, "max");
    const max = maxRaw === undefined ? undefined : parseIntStrict(maxRaw, "--max", 1, 30);

    const session = await openVaultSession(vault, args, ctx, { probeEmbedder: topic !== undefined });
    try {
      const result = await withAbortOnInterrupt(ctx, async (signal) => {
        // The run's text says when the topic's notes were matched by keywords only (as on every host): not the index too.
        if (topic !== undefined) await openIndex(session, ctx.output, { signal, use: "search" });
        const toolArgs: Record<string, unknown> = { deck: stringOption(args, "deck"), max_cards: max };
        if (note !== undefined) toolArgs.note_path = notePathArg(note, session.root, ctx.cwd);
        else toolArgs.topic = topic;
        return session.core.tools.call("generate_flashcards", toolArgs, { signal, vault: nodeVaultLocation(session.root) });
      });
      if (flag(args, "json")) ctx.output.json(result.structured);
      else ctx.output.out(`${result.text}\n`);
      return EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

/** A path the shell completed ("Notes/x.md" from the vault's parent) is taken as a file; else as vault-relative. */
function notePathArg(note: string, root: string, cwd: string): string {
  const full = path.resolve(cwd, note);
  return full.startsWith(root + path.sep) && existsSync(full) ? full : note;
}
