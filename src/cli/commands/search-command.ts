import type { NoteHit } from "../../core/search/search-types";
import { unsearchableQueryText } from "../../core/search/unsearchable-query";
import { flag, parseIntStrict, stringOption } from "../args";
import type { Command } from "../command";
import { CONFIG_OPTIONS } from "../config";
import { EXIT_OK, UsageError } from "../errors";
import { printHits, type Output } from "../output";
import { openIndex, openVaultSession, reportIndexProblems } from "../vault-session";
import { withAbortOnInterrupt } from "./command-helpers";

/** One line of `krypton search --json`: the shape scripts rely on. */
export interface SearchResultJson {
  /** Vault-relative, '/'-separated. */
  path: string;
  title: string;
  snippet: string;
  /** 0..1, best first. */
  score: number;
}

export const searchCommand: Command = {
  name: "search",
  summary: "Search the vault's notes (hybrid: meaning and keywords)",
  usage: 'krypton search <vault> "<query>" [--limit N] [--json]',
  details: [
    "Searches the saved index (`krypton index` builds it), reading only what the query needs when no note",
    "changed since; notes changed since are searched in memory, by keywords until the next `krypton index`",
    "embeds them. search never writes the index. Without a reachable embedder, or when the query's vector",
    "fails, it searches by keywords only and says why once on stderr, also with --json (exit code 0).",
    "",
    "Examples:",
    '  krypton search ~/Notes "gradient descent"',
    '  krypton search ~/Notes "meeting notes" --limit 3 --json | jq -r ".[].path"',
  ].join("\n"),
  options: {
    limit: { type: "string", value: "N", short: "n", description: "How many notes (default 10)" },
    json: { type: "boolean", description: "Print a JSON array of {path, title, snippet, score}" },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    const [vault, ...words] = args.positionals;
    const query = words.join(" ").trim();
    if (vault === undefined) throw new UsageError("missing <vault> and <query>");
    if (query === "") throw new UsageError("missing <query>: what to search for");
    const limitRaw = stringOption(args, "limit");
    const limit = limitRaw === undefined ? 10 : parseIntStrict(limitRaw, "--limit", 1, 1000);

    const session = await openVaultSession(vault, args, ctx);
    try {
      const { hits, keywordOnly } = await withAbortOnInterrupt(ctx, async (signal) => {
        // A saved index that matches the vault answers without being loaded (only what the query needs is read).
        const saved = await session.core.index.searchSavedNotes(query, { limit, signal });
        if (saved) {
          reportIndexProblems(session, saved.status, ctx.output, { use: "search", warnReadOnly: true });
          return saved;
        }
        await openIndex(session, ctx.output, { signal, readOnly: true });
        return session.core.index.searchNotesWithReason(query, { limit, signal });
      });
      // Why this search went without meaning (embedder down, or the query's vector failed), as every host says it;
      // on stderr with --json too, which prints the bare list of results scripts read.
      if (keywordOnly) ctx.output.warn(keywordOnly);
      const results = hits.map(toJson);
      if (flag(args, "json")) {
        ctx.output.json(results);
        // Scripts read the bare list on stdout; why a query the analyser dropped whole found nothing goes to stderr.
        const unsearchable = hits.length === 0 ? unsearchableQueryText(query) : null;
        if (unsearchable) ctx.output.info(unsearchable);
      } else printResults(ctx.output, query, hits);
      return EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

export function toJson(hit: NoteHit): SearchResultJson {
  return { path: hit.path, title: hit.title, snippet: hit.snippet, score: Math.round(hit.score * 10_000) / 10_000 };
}

function printResults(output: Output, query: string, hits: NoteHit[]): void {
  if (hits.length === 0) output.info(unsearchableQueryText(query) ?? `No notes match "${query}".`);
  else printHits(output, hits);
}
