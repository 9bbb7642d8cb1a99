import { z } from "zod";
import { ToolError } from "../tools/tool";
import { defineTool, type ToolRegistry } from "../tools/tool-registry";
import { formatMinutes } from "./goal-parse";
import { goalLine, NoStudyGoalsError, type GoalProgress, type GoalService } from "./goal-service";
import { countOf } from "../util/text";

const GOAL_ACTIONS = ["list", "create", "log", "progress"] as const;
/** The actions that write a goal note; "list" and "progress" only read. */
const WRITING_ACTIONS: readonly (typeof GOAL_ACTIONS)[number][] = ["create", "log"];

/** `study_goals`: list / create / log / progress on the goal notes. Goals are named, never pathed. */
export function registerGoalTool(registry: ToolRegistry, goals: GoalService): void {
  registry.register(
    defineTool({
      name: "study_goals",
      // A read leaves the index alone; the annotations below still say the tool as a whole writes.
      changesVault: (input) => WRITING_ACTIONS.some((action) => action === input.action),
      title: "Study goals",
      description:
        'Study goals kept as notes in the vault. action "list": every goal with its minutes and target; "create": a new goal (goal, optional target_date ' +
        'such as "January 15" or 2027-01-15); "log": add minutes studied today to a goal; "progress": one goal\'s totals and days left.',
      inputSchema: {
        action: z.enum(GOAL_ACTIONS).describe("What to do."),
        goal: z.string().max(200).optional().describe('The goal (create) or a word of its name (log, progress), e.g. "AWS".'),
        target_date: z.string().max(40).optional().describe("create: the target date."),
        minutes: z.number().int().min(1).max(1440).optional().describe("log: minutes studied."),
      },
      outputSchema: {
        goals: z.array(
          z.object({
            goal: z.string(),
            path: z.string(),
            target: z.string().nullable(),
            status: z.string(),
            minutes: z.number(),
            sessions: z.number(),
            last7Days: z.number().describe("Minutes in the last 7 days, today included."),
            daysLeft: z.number().nullable().describe("Days until the target date (negative: passed); null without one."),
          }),
        ),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      async run(input) {
        const need = (value: string | undefined, name: string) => {
          if (!value?.trim()) throw new ToolError(`Missing required parameter: ${name} (needed for action "${input.action}")`, "invalid-input");
          return value;
        };
        let list: GoalProgress[];
        try {
          if (input.action === "list") list = (await goals.list()).map((g) => goals.progressOf(g));
          else if (input.action === "create") list = [goals.progressOf(await goals.create(need(input.goal, "goal"), input.target_date))];
          else if (input.action === "log") {
            if (input.minutes === undefined) throw new ToolError('Missing required parameter: minutes (needed for action "log")', "invalid-input");
            list = [goals.progressOf(await goals.log(need(input.goal, "goal"), input.minutes))];
          } else list = [await goals.progress(need(input.goal, "goal"))];
        } catch (err) {
          // Said as this tool's caller creates one; the cause lets a host say it in its own words.
          if (err instanceof NoStudyGoalsError) throw new ToolError(`${err.message} Create one first (action "create").`, "not-found", { cause: err });
          throw err;
        }
        const structured = {
          goals: list.map(({ goal: g, last7Days, daysLeft }) => ({
            goal: g.goal,
            path: g.path,
            target: g.target,
            status: g.status,
            minutes: g.minutes,
            sessions: g.sessions.length,
            last7Days,
            daysLeft,
          })),
        };
        // "progress" answers as the chat does: the last 7 days and the days left too.
        const text =
          input.action === "progress"
            ? goalLine(list[0])
            : structured.goals.length
              ? structured.goals.map((g) => `${g.goal}: ${formatMinutes(g.minutes)} in ${countOf(g.sessions, "session")}${g.target ? `, target ${g.target}` : ""} (${g.path})`).join("\n")
              : "No study goals yet.";
        return { structured, text };
      },
    }),
  );
}
