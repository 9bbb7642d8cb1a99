import type { Agent } from "../agents/agent";
import { cleanArgument, normalizeMessage } from "../agents/intent-patterns";
import { AgentError } from "../notes/agent-error";
import { srDefaultsRemark } from "../flashcards/sr-format";
import type { Logger } from "../ports/logger";
import { parseMinutes } from "./goal-parse";
import { goalLine, NoStudyGoalsError, type GoalService } from "./goal-service";
import { countOf } from "../util/text";
import { agentErrorResult } from "../agents/agent-base";

export const GOALS_AGENT = "study-goals";

/** How a goal is set in the chat, where there is none yet. */
const SET_ONE_IN_CHAT = 'Say "set a study goal: <goal> by <date>".';

export type GoalIntent =
  | { type: "create"; goal: string; target?: string }
  | { type: "log"; minutes: number; goal: string }
  | { type: "list" }
  | { type: "progress"; goal: string }
  | { type: "plan"; goal: string };

const LEAD = String.raw`^(?:(?:please|pls|ok|okay|hey\s+krypton)[,]?\s+|(?:can|could|will)\s+you\s+)*`;
const CREATE = new RegExp(`${LEAD}(?:set|add|create|new)\\s+(?:a\\s+|my\\s+)?(?:new\\s+)?study\\s+goal\\s*[:\\-–]?\\s*(.+?)(?:\\s+by\\s+(.+))?$`, "i");
const LOG = new RegExp(`${LEAD}(?:log|add|record|track)\\s+(.+?)\\s+(?:on|for|to)\\s+(.+)$`, "i");
const LIST = new RegExp(`${LEAD}(?:what\\s+are|show(?:\\s+me)?|list)\\s+(?:all\\s+)?my\\s+study\\s+goals$`, "i");
const PROGRESS = new RegExp(`${LEAD}(?:how\\s+am\\s+i\\s+doing|how'?s\\s+my\\s+progress|what'?s\\s+my\\s+progress)\\s+(?:on|with|for)\\s+(.+)$`, "i");
const PLAN = new RegExp(`${LEAD}plan\\s+(?:my|the|this)\\s+week\\s+(?:for|on)\\s+(.+)$`, "i");

/** Goal names lose the quotes, brackets and end punctuation a chat message wraps them in ("Pass AWS"), as other agents' arguments do. */
export function detectGoalIntent(message: string): GoalIntent | null {
  if (message.length > 400) return null;
  const text = normalizeMessage(message);
  let m = CREATE.exec(text);
  if (m) return { type: "create", goal: cleanArgument(m[1]), ...(m[2] ? { target: m[2].trim() } : {}) };
  if (LIST.test(text)) return { type: "list" };
  m = PROGRESS.exec(text);
  if (m) return { type: "progress", goal: cleanArgument(m[1]) };
  m = PLAN.exec(text);
  if (m) return { type: "plan", goal: cleanArgument(m[1]) };
  m = LOG.exec(text);
  if (m) {
    const minutes = parseMinutes(m[1]);
    // "log 30 minutes on AWS" but not "log my thoughts on AWS".
    if (minutes !== null && /\d/.test(m[1])) return { type: "log", minutes, goal: cleanArgument(m[2]) };
  }
  return null;
}

/** Study goals in chat: set, log, list, progress, plan. */
export function createGoalAgent(deps: { goals: GoalService; logger: Logger }): Agent {
  return {
    name: GOALS_AGENT,
    async tryHandle(message, _history, context) {
      const intent = detectGoalIntent(message);
      if (!intent) return null;
      try {
        return { kind: "message", agent: GOALS_AGENT, text: await runGoalIntent(deps.goals, intent, context.signal) };
      } catch (err) {
        if (!(err instanceof AgentError)) throw err;
        deps.logger.info("agents: study goals could not act", { code: err.code });
        return agentErrorResult(GOALS_AGENT, err instanceof NoStudyGoalsError ? new AgentError(`${err.message} ${SET_ONE_IN_CHAT}`, err.code) : err);
      }
    },
  };
}

export async function runGoalIntent(goals: GoalService, intent: GoalIntent, signal?: AbortSignal): Promise<string> {
  switch (intent.type) {
    case "create": {
      const goal = await goals.create(intent.goal, intent.target);
      return `Study goal set: **${goal.goal}**${goal.target ? `, target ${goal.target}` : ""}. Saved in [[${goal.path.replace(/\.md$/i, "")}]].`;
    }
    case "log": {
      const goal = await goals.log(intent.goal, intent.minutes);
      return `Logged ${intent.minutes} min on **${goal.goal}** — ${goal.minutes} min in total.`;
    }
    case "list": {
      const all = await goals.list();
      if (!all.length) return `${new NoStudyGoalsError().message} ${SET_ONE_IN_CHAT}`;
      const lines = all.map((g) => `- ${goalLine(goals.progressOf(g))}`);
      return `Your study goals:\n${lines.join("\n")}`;
    }
    case "progress":
      return goalLine(await goals.progress(intent.goal));
    case "plan": {
      const plan = await goals.plan(intent.goal, signal);
      const head = `Plan for **${plan.goal.goal}** (${countOf(plan.dueCards, "flashcard")} due${plan.decks.length ? ` in ${countOf(plan.decks.length, "deck")}` : ""}, ${countOf(plan.notes.length, "related note")}):`;
      const defaults = plan.srSettingsProblem ? `\n\n${srDefaultsRemark(plan.srSettingsProblem, "read")}` : "";
      return `${head}\n${plan.days.join("\n")}${defaults}${plan.keywordOnly ? `\n\n_${plan.keywordOnly}_` : ""}`;
    }
  }
}
