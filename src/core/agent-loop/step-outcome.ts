import type { AgentStep } from "../chat/conversation-types";

/** The words every host shows for a step's outcome (chat view, CLI step lines and /steps), defined once. */
const OUTCOME_LABELS: Record<NonNullable<AgentStep["outcome"]>, string> = { ok: "ok", error: "error", denied: "declined", blocked: "blocked (repeated)" };

/** A step's outcome; stored steps from other writers may lack it, so it is read from isError then. */
export function stepOutcome(step: AgentStep): NonNullable<AgentStep["outcome"]> {
  return step.outcome ?? (step.isError ? "error" : "ok");
}

/** "declined" for a write nobody allowed: the word the UI, the CLI and the README use. */
export function stepOutcomeLabel(step: AgentStep): string {
  return OUTCOME_LABELS[stepOutcome(step)];
}
