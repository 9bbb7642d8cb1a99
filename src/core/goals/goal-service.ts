import { parseCards, srSkip } from "../flashcards/card-parser";
import { deckFolderAsSpelled } from "../flashcards/flashcard-service";
import { loadSrFormat, type SrFormat } from "../flashcards/sr-format";
import { countCards } from "../flashcards/sr-schedule";
import type { VaultIndexApi } from "../indexing/vault-index-api";
import { AgentError } from "../notes/agent-error";
import { baseNameOf, folderAsSpelled, isInFolder, nameKey, normalizeVaultPath, noteNameFor } from "../notes/note-paths";
import type { Host } from "../ports/host";
import { NoteExistsError } from "../ports/vault";
import type { KryptonSettings } from "../settings";
import { errorMessage } from "../util/errors";
import { localDate } from "../util/local-date";
import { isGoalNote, newGoalNote, parseGoalNote, withSessionLogged, type Goal } from "./goal-note";
import { daysBetween, formatMinutes, readDate } from "./goal-parse";
import { countOf } from "../util/text";

/**
 * A goal was named (log, progress, plan) but there is none at all. The message says only that: how to create
 * one is for the caller to add, in the words of where the user is (the chat: a sentence to type; the
 * study_goals tool: its action; the CLI: its command).
 */
export class NoStudyGoalsError extends AgentError {
  constructor() {
    super("You have no study goals yet.", "not-found");
    this.name = "NoStudyGoalsError";
  }
}

export interface GoalsDeps {
  host: Host;
  settings: () => KryptonSettings;
  index: VaultIndexApi;
  /** IANA zone for "today"; default: the host's own. Tests pass explicit zones. */
  timeZone?: string;
}

export interface GoalProgress {
  goal: Goal;
  today: string;
  daysLeft: number | null;
  last7Days: number;
}

/**
 * Study goals: one note per goal in the goals folder (frontmatter + "## Sessions"), read forgivingly,
 * minutes always recomputed from the sessions, "today" in the user's time zone. One implementation for
 * chat, MCP (study_goals) and the hosts.
 */
export class GoalService {
  constructor(private readonly deps: GoalsDeps) {}

  today(): string {
    return localDate(this.deps.host.clock.now(), this.deps.timeZone);
  }

  async create(goal: string, targetText?: string): Promise<Goal> {
    const name = cleanGoalName(goal);
    if (!name) throw new AgentError("Missing required parameter: goal", "invalid-input");
    if (name.length > 200) throw new AgentError("The goal is too long (at most 200 characters).", "invalid-input");
    const today = this.today();
    const read = targetText?.trim() ? readDate(targetText, today) : null;
    if (read && "problem" in read) throw new AgentError(read.problem, "invalid-input");
    const target = read?.date ?? null;
    // Goals are found by name, case and spacing aside: a second "pass aws saa" beside "Pass AWS SAA" (a file of
    // its own on a case-sensitive disk) would leave both of them refused by find().
    const { goals, folder } = await this.scan();
    const same = goals.find((g) => nameKey(g.goal) === nameKey(name));
    if (same) throw new AgentError(`A study goal named "${same.goal}" already exists (${same.path}).`, "invalid-input");
    // In the folder list() reads, as the vault spells it: a disk that ignores case has one folder for both.
    const file = `${noteNameFor(name) || "Goal"}.md`;
    const path = folder ? `${folder}/${file}` : file;
    try {
      await this.deps.host.vault.createNote(path, newGoalNote(name, target, today));
    } catch (err) {
      if (err instanceof NoteExistsError) throw new AgentError(`A note already exists at ${path}: that goal is there already, or choose another name.`, "invalid-input");
      throw new AgentError(`Could not create ${path}: ${errorMessage(err)}`, "failed");
    }
    return parseGoalNote(path, await this.deps.host.vault.readNote(path), today);
  }

  async list(): Promise<Goal[]> {
    return (await this.scan()).goals;
  }

  /** The goals, their folder as the vault spells it ("" for the whole vault), and the vault's note paths read for them. */
  private async scan(): Promise<{ goals: Goal[]; folder: string; paths: string[] }> {
    const [notes, folder] = await Promise.all([this.deps.host.vault.listNotes(), this.folder()]);
    const paths = notes.map((n) => n.path);
    const today = this.today();
    const goals: Goal[] = [];
    for (const path of paths) {
      if (folder && !isInFolder(path, folder)) continue;
      let text: string;
      try {
        text = await this.deps.host.vault.readNote(path);
      } catch {
        continue;
      }
      if (!isGoalNote(text)) continue;
      goals.push(parseGoalNote(path, text, today));
    }
    return { goals, folder, paths };
  }

  /**
   * The goal with exactly this name (case and spacing aside), else the one sharing most whole words with its
   * name or file name ("AWS" finds "Pass AWS SAA"). The folder is not compared (every goal's path has "Study
   * goals" in it), nor are parts of words ("a" was in every goal). A tie, or two goals of the same name, is
   * refused, naming them: a log must not land on whichever goal happened to be listed first.
   */
  async find(name: string): Promise<Goal> {
    return pickGoal(await this.list(), name);
  }

  async log(name: string, minutes: number, note?: string): Promise<Goal> {
    if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60) throw new AgentError("Log between 1 minute and 24 hours.", "invalid-input");
    const goal = await this.find(name);
    const today = this.today();
    const session = { date: today, minutes: Math.round(minutes), note: note?.replace(/\s+/g, " ").trim() };
    // One atomic read-modify-write: the session line appended and only the frontmatter's minutes value
    // updated; withSessionLogged refuses a note that is no longer a goal note (nothing written then).
    try {
      await this.deps.host.vault.processNote(goal.path, (current) => withSessionLogged(current, session, today));
    } catch (err) {
      if (err instanceof AgentError) throw err;
      throw new AgentError(`Could not log on ${goal.path}: ${errorMessage(err)}`, "failed");
    }
    return parseGoalNote(goal.path, await this.deps.host.vault.readNote(goal.path), today);
  }

  async progress(name: string): Promise<GoalProgress> {
    return this.progressOf(await this.find(name));
  }

  /** Progress of a goal already in hand (from list()): listings must not look goals up again by name. */
  progressOf(goal: Goal): GoalProgress {
    const today = this.today();
    const last7Days = goal.sessions.filter((s) => s.date <= today && daysBetween(s.date, today) < 7).reduce((sum, s) => sum + s.minutes, 0);
    return { goal, today, daysLeft: goal.target ? daysBetween(today, goal.target) : null, last7Days };
  }

  /**
   * A week's plan: related notes from the one search API, and the cards due in decks named like the goal.
   * `keywordOnly`: the notes were matched by keywords only, and why (SearchResult.keywordOnly), found or not. `srSettingsProblem`: the
   * decks were read in SR's defaults because its settings cannot be read (SrFormat.problem), so cards in the
   * user's own separators were not counted.
   */
  async plan(
    name: string,
    signal?: AbortSignal,
  ): Promise<{ goal: Goal; notes: string[]; dueCards: number; decks: string[]; days: string[]; keywordOnly?: string; srSettingsProblem?: string }> {
    // One listing for the goals and the decks; both folders as the vault spells them, where goals and decks are written.
    const { goals, folder: goalsFolder, paths } = await this.scan();
    const goal = pickGoal(goals, name);
    const today = this.today();
    const deckFolder = await deckFolderAsSpelled(this.deps.settings(), this.deps.host.vault);
    let notes: string[] = [];
    let keywordOnly: string | undefined;
    try {
      const found = await this.deps.index.searchNotesWithReason(goal.goal, { limit: 8, signal });
      // Only notes the vault still has: the index can lag behind a deletion, and a plan must not send the user to a missing note.
      const present = new Set(paths);
      notes = found.hits.map((h) => h.path).filter((p) => present.has(p) && !isInFolder(p, goalsFolder));
      // Said with no related notes too: a goal worded unlike its notes finds none by keywords.
      keywordOnly = found.keywordOnly;
    } catch {
      notes = []; // no index yet: the plan still has the cards
    }
    const words = wordsOf(goal.goal).filter((w) => w.length > 2);
    let dueCards = 0;
    const decks: string[] = [];
    // The user's own separators and tags (the Spaced Repetition plugin's settings), as flashcards and quizzes read decks.
    let format: SrFormat | undefined;
    for (const path of paths) {
      // "" is the vault root as the flashcards folder: every note is in it.
      if (deckFolder && !isInFolder(path, deckFolder)) continue;
      const base = (deckFolder ? path.slice(deckFolder.length + 1) : path).toLowerCase();
      if (!words.some((w) => base.includes(w))) continue;
      format ??= await loadSrFormat(this.deps.host.vault);
      const parsed = parseCards(await this.deps.host.vault.readNote(path), format);
      // A note SR reviews no card of (srSkip: a folder or tag to ignore, no flashcard tag) is no deck of the plan
      // either, as SR lists no deck for it.
      if (srSkip(parsed, path, format)) continue;
      const cards = parsed.cards;
      // In the root folder, a note without cards is no deck (the goal's own note, notes named like it).
      if (!deckFolder && !cards.length) continue;
      decks.push(path);
      // New cards are part of the week's reviews too.
      const counts = countCards(cards, this.deps.host.clock.now(), this.deps.timeZone);
      dueCards += counts.due + counts.new;
    }
    const days: string[] = [];
    for (let i = 0; i < 7; i++) {
      const date = localDate(Date.parse(`${today}T12:00:00Z`) + i * 86_400_000, "UTC");
      const read = notes[i % Math.max(1, notes.length)];
      const parts = [dueCards ? `review flashcards (${Math.ceil(dueCards / 7)} or more)` : "", read ? `read [[${read.replace(/\.md$/i, "")}]]` : ""].filter(Boolean);
      days.push(`- ${date}: ${parts.length ? parts.join(", then ") : "30 min on the goal"}`);
    }
    return { goal, notes, dueCards, decks, days, ...(keywordOnly ? { keywordOnly } : {}), ...(format?.problem ? { srSettingsProblem: format.problem } : {}) };
  }

  /** The study goals folder of the settings, as the vault spells it. */
  private async folder(): Promise<string> {
    return folderAsSpelled(normalizeVaultPath(this.deps.settings().studyGoalsFolder, this.deps.host.vault.configDir, "folder", "write"), this.deps.host.vault);
  }
}

/** find()'s choice among the goals (see there), for a caller that has them already (plan). */
function pickGoal(goals: readonly Goal[], name: string): Goal {
  // Exact first: "Pass AWS" shares as many words with "AWS Pass exam", which may be listed before it.
  const key = nameKey(name);
  const exact = goals.filter((g) => nameKey(g.goal) === key);
  if (exact.length === 1) return exact[0];
  if (exact.length > 1) {
    throw new AgentError(`More than one study goal is named "${exact[0].goal}": ${exact.map((g) => g.path).join(", ")}. Rename one of them.`, "invalid-input");
  }
  const words = [...new Set(wordsOf(name))];
  const scored = goals
    .map((g) => {
      const own = new Set([...wordsOf(g.goal), ...wordsOf(baseNameOf(g.path))]);
      return { g, score: words.filter((w) => own.has(w)).length };
    })
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score);
  if (!goals.length) throw new NoStudyGoalsError();
  if (!scored.length) throw new AgentError(`No study goal matches "${name}". Your goals: ${goals.map((g) => g.goal).join("; ")}.`, "not-found");
  const tied = scored.filter((x) => x.score === scored[0].score);
  if (tied.length > 1) {
    throw new AgentError(`"${name}" matches more than one study goal: ${tied.map((x) => `"${x.g.goal}"`).join(", ")}. Use the goal's full name.`, "invalid-input");
  }
  return scored[0].g;
}

/** Lowercased whole words (letters and digits), for find()'s and plan()'s word matching. */
function wordsOf(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

/** A goal's name as create() stores it: spacing collapsed (goals are compared by nameKey). */
function cleanGoalName(name: string): string {
  return name.replace(/\s+/g, " ").trim();
}

export function goalLine(p: GoalProgress): string {
  const { goal } = p;
  const target = goal.target ? `, target ${goal.target} (${p.daysLeft !== null && p.daysLeft >= 0 ? `${countOf(p.daysLeft, "day")} left` : "passed"})` : "";
  return `**${goal.goal}**: ${formatMinutes(goal.minutes)} in ${countOf(goal.sessions.length, "session")}, ${formatMinutes(p.last7Days)} in the last 7 days${target} — ${goal.status}`;
}
