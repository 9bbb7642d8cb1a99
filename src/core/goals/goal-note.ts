import { formatMinutes, parseDate, parseMinutes } from "./goal-parse";

/** A study goal as read from its note. Minutes always come from the sessions, never from the frontmatter. */
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
  const fields: Record<string, string> = {};
  let body = 0;
  if (lines[0]?.trim() === "---") {
    const end = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
    if (end > 0) {
      for (const line of lines.slice(1, end)) {
        const kv = /^\s*([A-Za-z][\w -]*?)\s*:\s*(.*)$/.exec(line);
        if (kv) fields[kv[1].toLowerCase().replace(/[\s_-]+/g, "")] = kv[2].trim().replace(/^["']|["']$/g, "");
      }
      body = end + 1;
    }
  }
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
 * The note with one more session: the line goes at the end of the "## Sessions" list (the section is added
 * when missing) and the frontmatter's `minutes` is set to the sessions' total. Nothing else changes.
 */
export function withSession(text: string, session: { date: string; minutes: number; note?: string }, totalAfter: number): string {
  const line = `- ${session.date}: ${formatMinutes(session.minutes)}${session.note ? ` ${session.note}` : ""}`;
  const lines = text.split("\n");
  const start = lines.findIndex((l) => /^#{1,6}\s+sessions?\s*$/i.test(l.trim()));
  if (start < 0) {
    const sep = text.endsWith("\n") ? "" : "\n";
    return setMinutes(`${text}${sep}\n## Sessions\n\n${line}\n`, totalAfter);
  }
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (/^#{1,6}\s/.test(lines[i])) {
      end = i;
      break;
    }
  }
  // After the section's last non-blank line.
  let at = end;
  while (at > start + 1 && lines[at - 1].trim() === "") at--;
  // An empty list: keep the blank line under the heading.
  if (at === start + 1 && lines[start + 1]?.trim() === "" && start + 2 < lines.length) at = start + 2;
  lines.splice(at, 0, line);
  return setMinutes(lines.join("\n"), totalAfter);
}

function setMinutes(text: string, minutes: number): string {
  if (!text.startsWith("---")) return text;
  const end = text.indexOf("\n---", 3);
  if (end < 0) return text;
  const head = text.slice(0, end);
  const next = /^minutes\s*:.*$/im.test(head) ? head.replace(/^minutes\s*:.*$/im, `minutes: ${minutes}`) : `${head}\nminutes: ${minutes}`;
  return next + text.slice(end);
}
