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
  usage: 'krypton flashcards <vault> (--note NOTE | --topic "...") [--deck NAME] [--max N] [--json]',
  details: [
    "Cards are written in the Spaced Repetition plugin's format (its separators when it is installed) to",
    "<flashcards folder>/<deck>.md, a note Krypton creates and only ever appends to. A repeated run adds",
    "only cards the deck does not have yet. The source note is never changed.",
    "",
    "Examples:",
    '  krypton flashcards ~/Notes --note "Biology/Photosynthesis.md"',
    '  krypton flashcards ~/Notes --topic "AWS networking" --deck "AWS SAA" --max 20 --json',
  ].join("\n"),
  options: {
    note: { type: "string", value: "NOTE", description: "The source note (vault-relative, or a path to it)" },
    topic: { type: "string", value: "TEXT", description: "A topic: passages come from the vault's index" },
    deck: { type: "string", value: "NAME", description: "Deck name (default: the note's title or the topic)" },
    max: { type: "string", value: "N", description: "Cards at most, 1 to 30 (default 10)" },
    json: { type: "boolean", description: "Print the result as JSON" },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    const [vault] = args.positionals;
    if (vault === undefined) throw new UsageError("missing <vault>");
    checkPositionals(args.positionals, 1);
    const note = stringOption(args, "note");
    const topic = stringOption(args, "topic");
    if ((note === undefined) === (topic === undefined)) throw new UsageError("give exactly one of --note or --topic");
    const maxRaw = stringOption(args, "max");
    const max = maxRaw === undefined ? undefined : parseIntStrict(maxRaw, "--max", 1, 30);

    const session = await openVaultSession(vault, args, ctx, { probeEmbedder: topic !== undefined });
    try {
      const result = await withAbortOnInterrupt(ctx, async (signal) => {
        if (topic !== undefined) await openIndex(session, ctx.output, { signal });
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
