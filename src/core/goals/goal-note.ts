import { readFrontmatter } from "../indexing/frontmatter";
import { AgentError } from "../notes/agent-error";
import { formatMinutes, parseDate, parseMinutes } from "./goal-parse";
import { inLineEndingOf, lineEndingOf } from "../util/text";

/**
 * A study goal as read from its note. Minutes always come from the sessions; the frontmatter's `minutes` key is
 * only a copy Krypton rewrites when it logs a session (withSessionLogged), never read back.
 */
export interface Goal {
  path: string;
  goal: string;
  /** ISO date, or null when missing or unreadable. */
  target: string | null;
  status: string;
  sessions: { date: string; minutes: number; note: string }[];
  minutes: number;
}

export const GOAL_MARKER = "krypton-goal";

/** Reads a goal note, forgiving hand edits: keys in any order or case, dates and durations as people write them. */
export function parseGoalNote(path: string, text: string, today: string): Goal {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  // The one frontmatter reader (quoted values unescaped: the goal name is written with JSON.stringify), keys
  // compared without case, spaces, "_" or "-" ("Target Date", "target_date"); a list stands for its items.
  const frontmatter = readFrontmatter(lines);
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(frontmatter?.fields ?? {})) {
    const name = key.toLowerCase().replace(/[\s_-]+/g, "");
    if (!(name in fields)) fields[name] = typeof value === "string" ? value : Array.isArray(value) ? value.join(" ") : "";
  }
  const body = frontmatter ? frontmatter.endLine + 1 : 0;
  const sessions: Goal["sessions"] = [];
  let inSessions = false;
  for (const line of lines.slice(body)) {
    const heading = /^#{1,6}\s+(.+?)\s*$/.exec(line);
    if (heading) {
      inSessions = /^sessions?$/i.test(heading[1].trim());
      continue;
    }
    if (!inSessions) continue;
    const item = /^\s*[-*+]\s+(.+)$/.exec(line);
    if (!item) continue;
    // "2026-11-20: 30 min reading", "Nov 20, 2026 — 1h 15m", "20 Nov 2026 - 45 min".
    const parts = /^(.+?)\s*(?:[:—–]|\s-\s)\s*(.+)$/.exec(item[1]);
    if (!parts) continue;
    const date = parseDate(parts[1], today);
    const durationText = /^((?:\d+(?:[.,]\d+)?\s*(?:h(?:ours?|rs?)?|m(?:in(?:ute)?s?)?)\b\s*)+|\d+(?:\.\d+)?\b)/i.exec(parts[2].trim());
    const minutes = durationText ? parseMinutes(durationText[1]) : null;
    if (!date || minutes === null) continue;
    sessions.push({ date, minutes, note: parts[2].trim().slice(durationText![1].length).trim() });
  }
  const title = /^#\s+(.+)$/m.exec(lines.slice(body).join("\n"))?.[1];
  return {
    path,
    goal: fields.goal || title || path.replace(/^.*\//, "").replace(/\.md$/i, ""),
    target: parseDate(fields.targetdate ?? fields.target ?? fields.due ?? fields.deadline ?? "", today),
    status: (fields.status || "active").toLowerCase(),
    sessions,
    minutes: sessions.reduce((sum, s) => sum + s.minutes, 0),
  };
}

export function newGoalNote(goal: string, target: string | null, created: string): string {
  return [
    "---",
    `${GOAL_MARKER}: true`,
    `goal: ${JSON.stringify(goal)}`,
    `target date: ${target ?? ""}`,
    "status: active",
    "minutes: 0",
    `created: ${created}`,
    "---",
    "",
    `# ${goal}`,
    "",
    "## Sessions",
    "",
    "",
  ].join("\n");
}

/**
 * The text to append for one more session: a line at the end of the "## Sessions" list when that list ends
 * the note (as in a new goal note), else a new "## Sessions" section at the end (the parser reads every
 * Sessions section). Append-only, so the user's text is never rewritten.
 */
export function sessionAppendText(text: string, session: { date: string; minutes: number; note?: string }): string {
  const line = `- ${session.date}: ${formatMinutes(session.minutes)}${session.note ? ` ${session.note}` : ""}\n`;
  // Headings of the body, as parseGoalNote reads them: a YAML comment ("# Sessions") in the frontmatter is none.
  const headings = [...text.slice(frontmatterRange(text)?.end ?? 0).matchAll(/^#{1,6}\s+(.+?)\s*$/gm)];
  const lastIsSessions = headings.length > 0 && /^sessions?$/i.test(headings[headings.length - 1][1].trim());
  const lead = text === "" || text.endsWith("\n") ? "" : "\n";
  return lastIsSessions ? `${lead}${line}` : `${lead}\n## Sessions\n\n${line}`;
}

/** True when the note's frontmatter marks it as a Krypton goal note (`krypton-goal: true`). */
export function isGoalNote(text: string): boolean {
  const fm = frontmatterRange(text);
  return fm !== null && new RegExp(`^\\s*${GOAL_MARKER}\\s*:\\s*true\\s*$`, "im").test(text.slice(fm.start, fm.end));
}

/**
 * The goal note after logging one session: the session line appended (sessionAppendText) and the frontmatter's
 * `minutes` value set to the recomputed total (a `minutes` line added before the closing `---` when missing).
 * Every other byte stays as the user left it: key order, comments, other text. Refuses any note that is not
 * a goal note, so it can never rewrite a user's note.
 */
export function withSessionLogged(text: string, session: { date: string; minutes: number; note?: string }, today: string): string {
  const fm = frontmatterRange(text);
  if (!fm || !isGoalNote(text)) throw new AgentError(`Not a Krypton goal note (no "${GOAL_MARKER}: true" in its frontmatter): Krypton only appends to it, never rewrites it.`, "invalid-input");
  const appended = text + inLineEndingOf(text, sessionAppendText(text, session));
  const total = parseGoalNote("", appended, today).minutes;
  return appended.slice(0, fm.start) + withMinutesValue(appended.slice(fm.start, fm.end), total) + appended.slice(fm.end);
}

/**
 * The frontmatter's inner lines with the top-level `minutes` value set to `total`, or a `minutes` line added at
 * their end. Only a key at the start of a line is that key (an indented one belongs to another key's mapping or
 * text block); a value written over the next lines (a list, a block) is replaced whole, or the YAML would break;
 * a trailing comment stays.
 */
function withMinutesValue(head: string, total: number): string {
  const lines = head.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const at = lines.findIndex((l) => /^minutes[ \t]*:/i.test(l));
  if (at < 0) return `${head}minutes: ${total}${lineEndingOf(head)}`;
  const [, key, space, value, comment = "", eol = ""] = /^(minutes[ \t]*:)([ \t]*)([^\r\n#]*?)([ \t]+#[^\r\n]*)?(\r?\n)?$/i.exec(lines[at])!;
  let end = at + 1;
  if (value === "" || /^[|>]/.test(value)) while (end < lines.length && /^(?:[ \t]+\S|-(?:[ \t]|\r?\n|$))/.test(lines[end])) end++;
  lines.splice(at, end - at, `${key}${space || " "}${total}${comment}${eol}`);
  return lines.join("");
}

/** The frontmatter's inner lines as [start, end) offsets: after the opening `---` line, up to the closing `---` line. */
function frontmatterRange(text: string): { start: number; end: number } | null {
  const open = /^\uFEFF?---[ \t]*\r?\n/.exec(text);
  if (!open) return null;
  const close = /^---[ \t]*$/m.exec(text.slice(open[0].length));
  if (!close) return null;
  return { start: open[0].length, end: open[0].length + close.index };
}
