import { Modal, type App } from "obsidian";
import type { GoalProgress } from "../../core/goals/goal-service";
import { formatMinutes } from "../../core/goals/goal-parse";
import { errorMessage } from "../../core/util/errors";
import type { KryptonServices } from "../plugin-services";
import { countOf } from "../../core/util/text";

/** "Study goals dashboard": every goal's minutes, last 7 days, target and days left; click a goal to open its note. */
export class StudyGoalsModal extends Modal {
  constructor(
    app: App,
    private readonly services: KryptonServices,
  ) {
    super(app);
  }

  private rendering: Promise<void> = Promise.resolve();

  onOpen(): void {
    this.titleEl.setText("Study goals");
    this.rendering = this.render();
  }

  onClose(): void {
    this.contentEl.empty();
  }

  /** Resolves when the goals opening the modal asked for are on screen (tests wait for it). */
  rendered(): Promise<void> {
    return this.rendering;
  }

  private async render(): Promise<void> {
    const el = this.contentEl;
    el.empty();
    el.addClass("krypton-goals");
    let rows: GoalProgress[];
    try {
      const goals = this.services.core.goals;
      rows = (await goals.list()).map((g) => goals.progressOf(g));
    } catch (err) {
      el.createEl("p", { text: `Could not read the goals: ${errorMessage(err)}` });
      return;
    }
    if (!rows.length) {
      el.createEl("p", { text: "No study goals yet. Set one in the chat, for example: set a study goal." });
      return;
    }
    const table = el.createEl("table", { cls: "krypton-goals-table" });
    const head = table.createEl("tr");
    for (const h of ["Goal", "Total", "Last 7 days", "Target", "Status"]) head.createEl("th", { text: h });
    for (const p of rows) {
      const tr = table.createEl("tr");
      const link = tr.createEl("td").createEl("a", { text: p.goal.goal, href: "#" });
      link.addEventListener("click", (event) => {
        event.preventDefault();
        void this.app.workspace.openLinkText(p.goal.path, "", false);
        this.close();
      });
      tr.createEl("td", { text: formatMinutes(p.goal.minutes) });
      tr.createEl("td", { text: formatMinutes(p.last7Days) });
      tr.createEl("td", { text: p.goal.target ? `${p.goal.target}${p.daysLeft !== null ? ` (${p.daysLeft >= 0 ? `${countOf(p.daysLeft, "day")} left` : "passed"})` : ""}` : "—" });
      tr.createEl("td", { text: p.goal.status });
    }
  }
}
