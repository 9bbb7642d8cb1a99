import { NoStudyGoalsError } from "../../core/goals/goal-service";
import { ToolError } from "../../core/tools/tool";
import { flag, parseIntStrict, stringOption } from "../args";
import type { Command } from "../command";
import { CONFIG_OPTIONS } from "../config";
import { CliError, EXIT_OK, UsageError } from "../errors";
import { openVaultSession } from "../vault-session";
import { actionOf, withAbortOnInterrupt } from "./command-helpers";

const ACTIONS = ["list", "create", "log", "progress"] as const;

/** `krypton goals <vault> list|create|log|progress`: the study_goals tool from the one registry. */
export const goalsCommand: Command = {
  name: "goals",
  summary: "Study goals: list, create, log minutes, show progress",
  usage: 'krypton goals <vault> list | create "<goal>" [--by DATE] | log "<goal>" --minutes N | progress "<goal>" [--json]',
  details: [
    "Each goal is a note in the study goals folder (frontmatter + a ## Sessions list) that you can edit by hand;",
    "minutes are always recomputed from the sessions, and sessions are dated by your local day.",
    "",
    "Examples:",
    '  krypton goals ~/Notes create "Pass AWS SAA" --by "January 15"',
    '  krypton goals ~/Notes log aws --minutes 30',
    "  krypton goals ~/Notes list --json",
  ].join("\n"),
  options: {
    by: { type: "string", value: "DATE", description: "create: the target date" },
    minutes: { type: "string", value: "N", description: "log: minutes studied" },
    json: { type: "boolean", description: "Print the goals as JSON" },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    const [vault, word, ...rest] = args.positionals;
    if (vault === undefined) throw new UsageError("missing <vault>");
    const action = actionOf(word, ACTIONS);
    const goal = rest.join(" ").trim();
    if (action !== "list" && !goal) throw new UsageError(`missing the goal for "${action}"`);
    const minutesRaw = stringOption(args, "minutes");
    if (action === "log" && minutesRaw === undefined) throw new UsageError("log needs --minutes N");
    // An option the action does not take would be dropped without a word ("create … --minutes 30" logs nothing).
    if (action !== "log" && minutesRaw !== undefined) throw new UsageError("--minutes is only for log");
    if (action !== "create" && stringOption(args, "by") !== undefined) throw new UsageError("--by is only for create");
    const toolArgs: Record<string, unknown> = { action };
    if (goal) toolArgs.goal = goal;
    if (stringOption(args, "by") !== undefined) toolArgs.target_date = stringOption(args, "by");
    if (minutesRaw !== undefined) toolArgs.minutes = parseIntStrict(minutesRaw, "--minutes", 1, 1440);

    const session = await openVaultSession(vault, args, ctx, { probeEmbedder: false });
    // Where there is no goal yet, the way to make one here: this command, not the chat's sentence.
    const createOne = `create one with: krypton goals ${session.root} create "<goal>" --by DATE`;
    try {
      const result = await withAbortOnInterrupt(ctx, (signal) => session.core.tools.call("study_goals", toolArgs, { signal })).catch((err: unknown) => {
        if (err instanceof ToolError && err.cause instanceof NoStudyGoalsError) throw new CliError(`${err.cause.message.replace(/\.$/, "")}: ${createOne}`);
        throw err;
      });
      const none = action === "list" && (result.structured as { goals?: unknown[] }).goals?.length === 0;
      if (flag(args, "json")) ctx.output.json(result.structured);
      else ctx.output.out(none ? `No study goals yet: ${createOne}\n` : `${result.text}\n`);
      return EXIT_OK;
    } finally {
      await session.close();
    }
  },
};
