// Agent mode blocks under an answer: the tool calls (collapsed), token usage, and the confirmation a
// write tool waits for (preview or diff, allow once / allow for this conversation / deny).
import type { AgentStep, ConfirmDecision } from "../../core/agent-loop/agent-types";
import type { TokenUsage } from "../../core/ports/chat-model";
import type { PendingConfirm } from "./chat-controller";
import { countOf } from "../../core/util/text";
import { stepOutcome, stepOutcomeLabel } from "../../core/agent-loop/step-outcome";

const RESULT_PREVIEW_CHARS = 1500;

/** "Steps (3) · 1,234 tokens", collapsed; each step: thought, call with arguments, result, duration. */
export function renderSteps(el: HTMLElement, steps: readonly AgentStep[], usage: TokenUsage | undefined, open: boolean): void {
  el.empty();
  if (steps.length === 0 && !usage) return;
  const details = el.createEl("details", { cls: "krypton-steps" });
  details.open = open;
  const tokens = usage ? (usage.promptTokens ?? 0) + (usage.completionTokens ?? 0) : 0;
  const summary = [`Steps (${steps.length})`, tokens ? countOf(tokens, "token") : ""].filter(Boolean).join(" · ");
  details.createEl("summary", {
    text: summary,
    attr: usage ? { title: `${usage.promptTokens ?? 0} prompt tokens, ${usage.completionTokens ?? 0} answer tokens` } : {},
  });
  const list = details.createEl("ol", { cls: "krypton-step-list" });
  for (const step of steps) {
    // Stored steps from other writers may lack fields: show what there is.
    const outcome = stepOutcome(step);
    const item = list.createEl("li", { cls: ["krypton-step", `krypton-step-${outcome}`] });
    if (step.thought) item.createDiv({ cls: "krypton-step-thought", text: step.thought });
    if (step.tool) {
      const head = item.createDiv({ cls: "krypton-step-head" });
      head.createEl("code", { cls: "krypton-step-tool", text: step.tool.name });
      head.createSpan({ cls: "krypton-step-meta", text: `${stepOutcomeLabel(step)} · ${step.durationMs ?? 0} ms` });
      item.createEl("pre", { cls: "krypton-step-args", text: JSON.stringify(step.tool.arguments, null, 2) });
    }
    const text = step.result ?? "";
    const result = text.length > RESULT_PREVIEW_CHARS ? `${text.slice(0, RESULT_PREVIEW_CHARS - 1)}…` : text;
    if (result) item.createEl("pre", { cls: "krypton-step-result", text: result });
  }
}

/** The write confirmation: what will change, and three buttons. Once answered, it says what was chosen. */
export function renderConfirm(el: HTMLElement, pending: PendingConfirm | undefined, decide: (decision: ConfirmDecision) => void): void {
  el.empty();
  if (!pending) return;
  const box = el.createDiv({ cls: "krypton-confirm", attr: { role: "group", "aria-label": "Confirm a change to your vault" } });
  box.createDiv({ cls: "krypton-confirm-title", text: pending.request.title });
  const pre = box.createEl("pre", { cls: "krypton-confirm-preview" });
  for (const line of pending.request.preview.split("\n")) {
    const kind = line.startsWith("+") && !line.startsWith("+++") ? "is-added" : line.startsWith("@@") ? "is-hunk" : "";
    pre.createSpan({ cls: ["krypton-diff-line", kind].filter(Boolean), text: `${line}\n` });
  }
  if (pending.decision) {
    const said = pending.decision === "deny" ? "Declined: nothing was changed." : pending.decision === "conversation" ? "Allowed for this conversation." : "Allowed once.";
    box.createDiv({ cls: "krypton-confirm-decision", text: said });
    return;
  }
  const buttons = box.createDiv({ cls: "krypton-confirm-actions" });
  const button = (text: string, decision: ConfirmDecision, cta = false) => {
    const b = buttons.createEl("button", { text, cls: cta ? "mod-cta" : "" });
    b.addEventListener("click", () => decide(decision));
    return b;
  };
  button("Allow once", "once", true);
  button("Allow for this conversation", "conversation");
  button("Deny", "deny").addClass("mod-warning");
}
