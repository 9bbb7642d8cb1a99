import type { Agent } from "../agents/agent";
import { detectGoalRequest, type GoalRequest } from "../agents/intent-patterns";
import { AgentError } from "../notes/agent-error";
import { srDefaultsRemark } from "../flashcards/sr-format";
import type { Logger } from "../ports/logger";
import { parseMinutes } from "./goal-parse";
import { goalLine, NoStudyGoalsError, type GoalService } from "./goal-service";
import { countOf } from "../util/text";
import { agentErrorResult } from "../agents/agent-base";
import type { IntentRouter } from "../agents/agent-router";

export const GOALS_AGENT = "study-goals";

/** How a goal is set in the chat, where there is none yet. */
const SET_ONE_IN_CHAT = 'Say "set a study goal: <goal> by <date>".';

/** A recognised goal request (GoalRequest), with a log's duration read into minutes. */
export type GoalIntent = Exclude<GoalRequest, { type: "log" }> | { type: "log"; minutes: number; goal: string };

/** Recognised in src/core/agents/intent-patterns.ts with the other intents; here a log's duration is read. */
export function detectGoalIntent(message: string): GoalIntent | null {
  return goalIntentOf(detectGoalRequest(message));
}

/** A goal request, from the patterns or the classifier, with a log's duration read into minutes. */
function goalIntentOf(request: GoalRequest | null): GoalIntent | null {
  if (request?.type !== "log") return request;
  const minutes = parseMinutes(request.amount);
  // "log 30 minutes on AWS" but not "log my thoughts on AWS".
  return minutes !== null && /\d/.test(request.amount) ? { type: "log", minutes, goal: request.goal } : null;
}

/** Study goals in chat: set, log, list, progress, plan. */
export function createGoalAgent(deps: { goals: GoalService; logger: Logger; router?: IntentRouter }): Agent {
  return {
    name: GOALS_AGENT,
    async tryHandle(message, history, context) {
      // Without a router (the agent on its own), its patterns decide.
      const intent = deps.router
        ? await deps.router.intentFor(message, history, context.signal, (i) => (i.intent === "study-goal" ? goalIntentOf(i.request) : null), () => detectGoalIntent(message))
        : detectGoalIntent(message);
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
