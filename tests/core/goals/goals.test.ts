import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { detectGoalIntent, createGoalAgent } from "../../../src/core/goals/goal-agent";
import { parseGoalNote, sessionAppendText, withSessionLogged } from "../../../src/core/goals/goal-note";
import { parseDate, parseMinutes, readDate } from "../../../src/core/goals/goal-parse";
import { GoalService } from "../../../src/core/goals/goal-service";
import { registerGoalTool } from "../../../src/core/goals/goal-tool";
import { ToolRegistry } from "../../../src/core/tools/tool-registry";
import { localDate } from "../../../src/core/util/local-date";
import { makeAgentsWorld, type AgentsWorld } from "../agents/agent-fixtures";

describe("goal parsing: what people type", () => {
  it("durations and dates", () => {
    expect(["1h 15m", "45 min", "30 minutes", "1.5 hours", "90", "2h", "1 hr 5 mins"].map(parseMinutes)).toEqual([75, 45, 30, 90, 90, 120, 65]);
    expect(parseMinutes("a while")).toBeNull();
    const today = "2026-11-24";
    expect(["Nov 20, 2026", "2026-11-20", "20 Nov 2026", "November 20th, 2026", "January 15", "Jan 15 2027", "Feb 30 2027", "soon"].map((d) => parseDate(d, today))).toEqual([
      "2026-11-20",
      "2026-11-20",
      "2026-11-20",
      "2026-11-20",
      "2027-01-15", // no year: the next January 15
      "2027-01-15",
      null,
      null,
    ]);
    // No year: the next February 29 is in the next leap year, not "unreadable".
    expect(parseDate("Feb 29", "2026-11-24")).toBe("2028-02-29");
    expect(parseDate("February 29", "2028-02-29")).toBe("2028-02-29");
    expect(parseDate("Feb 31", "2026-11-24")).toBeNull();
  });

  it("dates in every language requests come in; a date that reads two ways is refused, never guessed", () => {
    const today = "2026-11-24";
    const dates: [string, string][] = [
      ["15 de diciembre", "2026-12-15"],
      ["15 de diciembre de 2027", "2027-12-15"],
      ["1er décembre 2027", "2027-12-01"],
      ["3 févr.", "2027-02-03"],
      ["15. Dezember", "2026-12-15"],
      ["3. März 2027", "2027-03-03"],
      ["15 de dezembro", "2026-12-15"],
      ["15 dicembre 2027", "2027-12-15"],
      ["15 декабря", "2026-12-15"],
      ["3 мая 2027 г.", "2027-05-03"],
      ["15 дек. 2027 года", "2027-12-15"],
      ["12月15日まで", "2026-12-15"],
      ["2027年1月15日", "2027-01-15"],
      ["12月15号之前", "2026-12-15"],
      ["12월 15일까지", "2026-12-15"],
      ["the 15th of December", "2026-12-15"],
      ["Sept 3 2027", "2027-09-03"],
      ["15/12/2027", "2027-12-15"],
      ["12/15", "2026-12-15"],
      ["05.05.2027", "2027-05-05"],
    ];
    expect(dates.map(([text]) => [text, readDate(text, today)])).toEqual(dates.map(([text, date]) => [text, { date }]));
    expect(readDate("01/02/2027", today)).toEqual({ problem: 'The date "01/02/2027" is ambiguous (2027-02-01 or 2027-01-02?): write it as YYYY-MM-DD or with the month\'s name.' });
    expect(readDate("3.4.", today)).toEqual({ problem: expect.stringMatching(/is ambiguous \(2027-04-03 or 2027-03-04\?\)/) });
    for (const text of ["someday", "15 Brumaire", "diciembre", "32 de diciembre", "15 de diciembre de 27", "1 2 3"]) {
      expect(readDate(text, today)).toEqual({ problem: `Could not read the date "${text}" (try 2027-01-15, "January 15" or "15 de enero").` });
    }
  });

  it("a hand-edited goal note: reordered keys, other key spellings, odd dates and durations; minutes come from the sessions", () => {
    const text = [
      "---",
      "Status: Active",
      "minutes: 9999",
      "Target Date: Jan 15, 2027",
      "goal: Pass AWS SAA",
      "krypton-goal: true",
      "---",
      "# Pass AWS SAA",
      "",
      "Some thoughts.",
      "",
      "## Sessions",
      "- Nov 20, 2026: 1h 15m networking",
      "- 2026-11-21 — 45 min",
      "* 22 Nov 2026 - 30 minutes IAM",
      "- not a session line",
      "",
      "## Notes",
      "- 2026-11-23: 500 min (not in Sessions)",
    ].join("\n");
    const goal = parseGoalNote("Study goals/Pass AWS SAA.md", text, "2026-11-24");
    expect(goal).toMatchObject({ goal: "Pass AWS SAA", target: "2027-01-15", status: "active", minutes: 150 });
    expect(goal.sessions.map((s) => [s.date, s.minutes, s.note])).toEqual([
      ["2026-11-20", 75, "networking"],
      ["2026-11-21", 45, ""],
      ["2026-11-22", 30, "IAM"],
    ]);
  });

  it("logging only appends: a line under a final Sessions list, else a new Sessions section the parser also reads", () => {
    const endsInSessions = "---\nkrypton-goal: true\ngoal: X\n---\n# X\n\n## Sessions\n\n- 2026-11-20: 30 min\n";
    expect(sessionAppendText(endsInSessions, { date: "2026-11-24", minutes: 45 })).toBe("- 2026-11-24: 45 min\n");
    const edited = "---\nkrypton-goal: true\ngoal: X\n---\n# X\n\n## Sessions\n- 2026-11-20: 30 min\n\n## Notes\nkeep";
    const appended = sessionAppendText(edited, { date: "2026-11-24", minutes: 75, note: "labs" });
    expect(appended).toBe("\n\n## Sessions\n\n- 2026-11-24: 1h 15m labs\n");
    expect(parseGoalNote("X.md", edited + appended, "2026-11-24").minutes).toBe(105);
  });

  // A YAML comment "# Sessions" in the frontmatter was taken for the last heading: the session line went under
  // the body's text, where no Sessions list is, and the logged minutes were lost from the total.
  it("a comment in the frontmatter is no Sessions heading: the logged session is read back", () => {
    const text = "---\nkrypton-goal: true\ngoal: X\n# Sessions\n---\nMy notes.\n";
    const logged = withSessionLogged(text, { date: "2026-11-24", minutes: 15 }, "2026-11-24");
    expect(logged).toBe("---\nkrypton-goal: true\ngoal: X\n# Sessions\nminutes: 15\n---\nMy notes.\n\n## Sessions\n\n- 2026-11-24: 15 min\n");
    expect(parseGoalNote("X.md", logged, "2026-11-24").minutes).toBe(15);
  });

  it("intents", () => {
    expect(detectGoalIntent("set a study goal: pass AWS SAA by January 15")).toEqual({ type: "create", goal: "pass AWS SAA", target: "January 15" });
    expect(detectGoalIntent("log 30 minutes on AWS")).toEqual({ type: "log", minutes: 30, goal: "AWS" });
    expect(detectGoalIntent("Log 1h 15m for aws")).toEqual({ type: "log", minutes: 75, goal: "aws" });
    expect(detectGoalIntent("what are my study goals?")).toEqual({ type: "list" });
    expect(detectGoalIntent("how am I doing on AWS")).toEqual({ type: "progress", goal: "AWS" });
    expect(detectGoalIntent("plan my week for AWS")).toEqual({ type: "plan", goal: "AWS" });
    // Quoted or linked names come without their wrapping, so an exact name still matches exactly.
    expect(detectGoalIntent('log 30 minutes on "Pass AWS"')).toEqual({ type: "log", minutes: 30, goal: "Pass AWS" });
    expect(detectGoalIntent("how am I doing on [[Pass AWS]]?")).toEqual({ type: "progress", goal: "Pass AWS" });
    expect(detectGoalIntent("set a study goal: 'Pass AWS'")).toEqual({ type: "create", goal: "Pass AWS" });
    expect(detectGoalIntent("plan my week for `Pass AWS`.")).toEqual({ type: "plan", goal: "Pass AWS" });
    expect(detectGoalIntent("log my thoughts on AWS")).toBeNull();
    expect(detectGoalIntent("what is a study goal?")).toBeNull();
  });
});

describe("today is the user's local date", () => {
  // 2026-11-24 10:30 UTC: already the 25th in Kiritimati (UTC+14), still the 24th in Los Angeles (UTC-8).
  const instant = Date.UTC(2026, 10, 24, 10, 30);
  it("with explicit zones (Intl)", () => {
    expect(localDate(instant, "Pacific/Kiritimati")).toBe("2026-11-25");
    expect(localDate(instant, "America/Los_Angeles")).toBe("2026-11-24");
  });
  it("with the host's zone from TZ, in a child process", () => {
    const script = `const p=new Intl.DateTimeFormat("en-CA",{year:"numeric",month:"2-digit",day:"2-digit"}).formatToParts(new Date(${instant}));process.stdout.write(["year","month","day"].map(t=>p.find(x=>x.type===t).value).join("-"))`;
    const run = (tz: string) => execFileSync(process.execPath, ["-e", script], { env: { ...process.env, TZ: tz } }).toString();
    expect(run("Pacific/Kiritimati")).toBe("2026-11-25");
    expect(run("America/Los_Angeles")).toBe("2026-11-24");
  });
});

describe("GoalService over a real vault", () => {
  let world: AgentsWorld;
  const deck = "---\nkrypton-deck: true\n---\n#flashcards/aws\n\nQ1::A1\n<!--SR:!2026-11-20,3,250-->\n\nQ2::A2\n<!--SR:!fsrs,2026-11-25,3.1,5.2,2-->\n\nQ3::A3\n<!--SR:!2027-03-01,60,270-->\n\nQ4::A4\n";
  beforeEach(async () => {
    world = await makeAgentsWorld({ files: { "AWS/VPC.md": "# AWS VPC\n\nSubnets and route tables for AWS SAA.", "Flashcards/AWS.md": deck } });
    // The clock: 2026-11-24 10:30 UTC.
    world.host = { ...world.host, clock: { ...world.host.clock, now: () => Date.UTC(2026, 10, 24, 10, 30) } };
  });
  afterEach(() => world.close());
  const service = (timeZone: string) => new GoalService({ host: world.host, settings: () => world.settings, index: world.index, timeZone });

  it("create, log (in the user's day), list, progress; two time zones log on different dates", async () => {
    const la = service("America/Los_Angeles");
    const goal = await la.create("Pass AWS SAA", "January 15");
    expect(goal).toMatchObject({ path: "Study goals/Pass AWS SAA.md", target: "2027-01-15", minutes: 0 });
    await la.log("aws", 30);
    await service("Pacific/Kiritimati").log("AWS", 45);
    const text = await world.vault.read("Study goals/Pass AWS SAA.md");
    expect(text).toContain("## Sessions\n\n- 2026-11-24: 30 min\n- 2026-11-25: 45 min\n");
    expect(text.startsWith("---\nkrypton-goal: true\n")).toBe(true);
    const progress = await la.progress("AWS");
    expect(progress).toMatchObject({ today: "2026-11-24", daysLeft: 52, last7Days: 30 });
    expect(progress.goal.minutes).toBe(75);
    await expect(la.create("Pass AWS SAA")).rejects.toThrow(/already exists/);
    await expect(la.create("Other", "someday")).rejects.toThrow(/Could not read the date/);
    await expect(la.log("kubernetes", 10)).rejects.toThrow(/No study goal matches/);
  });

  it("a goal of the same name in other case or spacing is refused, not created beside it (logging would then refuse both)", async () => {
    const goals = service("UTC");
    await goals.create("Pass AWS SAA");
    await expect(goals.create("pass  aws saa")).rejects.toThrow('A study goal named "Pass AWS SAA" already exists (Study goals/Pass AWS SAA.md)');
    expect(await fs.readdir(join(world.vault.root, "Study goals"))).toEqual(["Pass AWS SAA.md"]);
    await goals.log("pass aws saa", 20);
    expect((await goals.progress("Pass AWS SAA")).goal.minutes).toBe(20);
  });

  // The name is written JSON-quoted; only the outer quotes were dropped when reading it back, so 'Read "Dune"'
  // came back as 'Read \"Dune\"' (in lists, the dashboard, MCP) and was no longer found by its exact name.
  it("a goal named with quotes or a backslash reads back as written; a nested key is not the goal's", async () => {
    const utc = service("UTC");
    for (const name of ['Read "Dune"', "C:\\temp course"]) {
      expect((await utc.create(name)).goal).toBe(name);
      await expect(utc.create(name)).rejects.toThrow(`A study goal named "${name}" already exists`);
    }
    expect((await utc.list()).map((g) => g.goal).sort()).toEqual(["C:\\temp course", 'Read "Dune"']);
    const nested = parseGoalNote("G.md", "---\nkrypton-goal: true\ngoal: 'It''s mine'\nold:\n  goal: Not this\n  status: done\n---\n", "2026-11-24");
    expect(nested).toMatchObject({ goal: "It's mine", status: "active" });
  });

  it("an exact name wins over shared words: \"Pass AWS\" is not \"AWS Pass exam\", which lists first with as many", async () => {
    const goals = service("UTC");
    await goals.create("Pass AWS");
    await goals.create("AWS Pass exam");
    expect((await goals.list()).map((g) => g.goal)).toEqual(["AWS Pass exam", "Pass AWS"]);
    await goals.log("Pass AWS", 30);
    // Case and spacing as create() normalises them.
    await goals.log("  pass   aws ", 15);
    expect(await world.vault.read("Study goals/Pass AWS.md")).toContain("## Sessions\n\n- 2026-11-24: 30 min\n- 2026-11-24: 15 min\n");
    expect(await world.vault.read("Study goals/AWS Pass exam.md")).toMatch(/## Sessions\n\n$/);
    expect((await goals.progress("Pass AWS")).goal.path).toBe("Study goals/Pass AWS.md");
    expect((await goals.progress("aws pass EXAM")).goal.path).toBe("Study goals/AWS Pass exam.md");
  });

  it("without an exact name, the goal sharing most whole words; a tie is refused and nothing is logged", async () => {
    const goals = service("UTC");
    await goals.create("Pass AWS");
    await goals.create("AWS Pass exam");
    await goals.create("Learn Rust");
    expect((await goals.log("rust", 20)).path).toBe("Study goals/Learn Rust.md");
    expect((await goals.log("exam", 10)).path).toBe("Study goals/AWS Pass exam.md");
    expect((await goals.progress("pass the aws exam")).goal.path).toBe("Study goals/AWS Pass exam.md");
    const before = await world.vault.read("Study goals/Pass AWS.md");
    await expect(goals.log("aws", 10)).rejects.toThrow(/"aws" matches more than one study goal: "AWS Pass exam", "Pass AWS"\. Use the goal's full name\./);
    // Neither the folder ("Study goals/") nor part of a word matches: "a" and "study" name no goal.
    await expect(goals.log("study", 10)).rejects.toThrow(/No study goal matches "study"/);
    await expect(goals.log("a", 10)).rejects.toThrow(/No study goal matches "a"/);
    await expect(goals.log("rus", 10)).rejects.toThrow(/No study goal matches "rus"/);
    expect(await world.vault.read("Study goals/Pass AWS.md")).toBe(before);
    await expect(goals.log("kubernetes", 10)).rejects.toThrow(/No study goal matches "kubernetes"\. Your goals: AWS Pass exam; Learn Rust; Pass AWS\./);
  });

  it("listing shows each goal note once with its own minutes, even when names overlap or repeat", async () => {
    const goals = service("UTC");
    await goals.create("Pass AWS");
    await goals.create("AWS Pass exam");
    await goals.log("AWS Pass exam", 45);
    // A second note with the very same name (kept by hand in a subfolder): still a goal of its own.
    await world.vault.write("Study goals/Archive/Pass AWS.md", "---\nkrypton-goal: true\ngoal: Pass AWS\n---\n# Pass AWS\n\n## Sessions\n- 2025-03-01: 2h\n");
    const agent = createGoalAgent({ goals, logger: world.host.logger });
    const text = (await agent.tryHandle("what are my study goals", [], {}))?.text ?? "";
    const lines = text.split("\n").slice(1);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^- \*\*AWS Pass exam\*\*: 45 min in 1 session,/);
    expect(lines[1]).toMatch(/^- \*\*Pass AWS\*\*: 2h in 1 session,/);
    expect(lines[2]).toMatch(/^- \*\*Pass AWS\*\*: 0 min in 0 sessions,/);
    // Two goals of the very same name: a log names both notes and writes neither.
    const before = await world.vault.read("Study goals/Pass AWS.md");
    await expect(goals.log("pass aws", 10)).rejects.toThrow('More than one study goal is named "Pass AWS": Study goals/Archive/Pass AWS.md, Study goals/Pass AWS.md. Rename one of them.');
    expect(await world.vault.read("Study goals/Pass AWS.md")).toBe(before);
  });

  it("logging keeps frontmatter minutes in step: a hand-edited goal note differs only in the minutes value and the new session line", async () => {
    const handEdited = [
      "---",
      "Status: Active # still on it",
      "Target Date: Jan 15, 2027",
      "Minutes:   9999   # Krypton keeps this",
      "goal: Pass AWS SAA",
      "krypton-goal: true",
      "tags: [aws, cert]",
      "---",
      "# Pass AWS SAA",
      "",
      "My own words, *kept*.",
      "",
      "## Sessions",
      "- Nov 20, 2026: 1h 15m networking",
      "",
    ].join("\n");
    await fs.mkdir(join(world.vault.root, "Study goals"), { recursive: true });
    await fs.writeFile(join(world.vault.root, "Study goals/Pass AWS SAA.md"), handEdited);
    const goal = await service("UTC").log("aws", 30, "IAM");
    expect(goal.minutes).toBe(105);
    const after = await world.vault.read("Study goals/Pass AWS SAA.md");
    expect(after).toBe(handEdited.replace("Minutes:   9999   # Krypton", "Minutes:   105   # Krypton") + "- 2026-11-24: 30 min IAM\n");
    // A new goal note carries minutes: 0, and logging keeps it in step.
    await service("UTC").create("Learn Rust");
    await service("UTC").log("rust", 90);
    expect(await world.vault.read("Study goals/Learn Rust.md")).toMatch(/^---\nkrypton-goal: true\n[^]*\nminutes: 90\n[^]*## Sessions\n\n- 2026-11-24: 1h 30m\n$/);
  });

  it("a goal note without a minutes line gets one before the closing ---; the added lines follow the note's CRLF", () => {
    const text = "---\r\nkrypton-goal: true\r\ngoal: X\r\n---\r\n# X\r\n\r\n## Sessions\r\n- 2026-11-20: 30 min\r\n";
    expect(withSessionLogged(text, { date: "2026-11-24", minutes: 15 }, "2026-11-24")).toBe(
      "---\r\nkrypton-goal: true\r\ngoal: X\r\nminutes: 45\r\n---\r\n# X\r\n\r\n## Sessions\r\n- 2026-11-20: 30 min\r\n- 2026-11-24: 15 min\r\n",
    );
    // A new Sessions section too: no LF-only line in a CRLF note.
    const noSessions = "---\r\nkrypton-goal: true\r\nminutes: 0\r\n---\r\n# X\r\n";
    expect(withSessionLogged(noSessions, { date: "2026-11-24", minutes: 15 }, "2026-11-24")).toBe(
      "---\r\nkrypton-goal: true\r\nminutes: 15\r\n---\r\n# X\r\n\r\n## Sessions\r\n\r\n- 2026-11-24: 15 min\r\n",
    );
  });

  // An indented "minutes:" (another key's, or a line of a text block) was rewritten in place of the top-level one,
  // and a hand-made list value became "minutes:45" followed by its old items: invalid YAML.
  it("sets only the top-level minutes value, a value over several lines replaced whole", () => {
    const session = { date: "2026-11-24", minutes: 15 };
    const nested = "---\nkrypton-goal: true\nstats:\n  minutes: 3\nabout: |\n  minutes: my own words\n---\n## Sessions\n- 2026-11-20: 30 min\n";
    expect(withSessionLogged(nested, session, "2026-11-24")).toBe(nested.replace("words\n---", "words\nminutes: 45\n---") + "- 2026-11-24: 15 min\n");
    const list = "---\nkrypton-goal: true\nminutes:\n  - 5\n  - 6\nstatus: active\n---\n## Sessions\n- 2026-11-20: 30 min\n";
    expect(withSessionLogged(list, session, "2026-11-24")).toBe("---\nkrypton-goal: true\nminutes: 45\nstatus: active\n---\n## Sessions\n- 2026-11-20: 30 min\n- 2026-11-24: 15 min\n");
  });

  it("never rewrites a user's note that is not a goal note: refused, nothing written", async () => {
    for (const userNote of ["# Diary\n\nminutes: 5\n", "---\nminutes: 5\ngoal: X\n---\n## Sessions\n", "---\nkrypton-goal: false\n---\n"]) {
      expect(() => withSessionLogged(userNote, { date: "2026-11-24", minutes: 15 }, "2026-11-24")).toThrow(/Not a Krypton goal note/);
    }
    // The note stops being a goal note between find and write (the user removed the marker): the real FsVault
    // write is refused inside processNote and the user's text stays byte for byte.
    await service("UTC").create("Pass AWS SAA");
    const path = "Study goals/Pass AWS SAA.md";
    const userText = "---\ngoal: Pass AWS SAA\nminutes: 7\n---\nNow my own note.\n";
    const inner = world.host.vault;
    const racing = {
      ...inner,
      listNotes: () => inner.listNotes(),
      listFolders: (p: string) => inner.listFolders(p),
      readNote: (p: string) => inner.readNote(p),
      processNote: async (p: string, fn: (t: string) => string, e?: string) => {
        await fs.writeFile(join(world.vault.root, p), userText);
        return inner.processNote(p, fn, e);
      },
    };
    const goals = new GoalService({ host: { ...world.host, vault: racing }, settings: () => world.settings, index: world.index, timeZone: "UTC" });
    await expect(goals.log("aws", 30)).rejects.toThrow(/Not a Krypton goal note/);
    expect(await world.vault.read(path)).toBe(userText);
  });

  it("plan: cards due in the goal's decks (SM-2 and FSRS forms, new cards) and related notes from search", async () => {
    const la = service("America/Los_Angeles");
    await la.create("Pass AWS SAA", "2027-01-15");
    const plan = await la.plan("AWS");
    // Due by 2026-11-24: Q1 (SM-2, 11-20), Q4 (new). Q2 (FSRS, 11-25) and Q3 (2027) are not due.
    expect(plan.dueCards).toBe(2);
    expect(plan.decks).toEqual(["Flashcards/AWS.md"]);
    expect(plan.notes).toContain("AWS/VPC.md");
    expect(plan.days).toHaveLength(7);
    expect(plan.days[0]).toMatch(/^- 2026-11-24: review flashcards/);
    // In Kiritimati it is already the 25th: the FSRS card is due too.
    expect((await service("Pacific/Kiritimati").plan("AWS")).dueCards).toBe(3);
  });

  it("plan: a related note deleted since it was indexed is not suggested", async () => {
    const utc = service("UTC");
    await utc.create("Pass AWS SAA");
    expect((await utc.plan("AWS")).notes).toContain("AWS/VPC.md");
    // Deleted on disk, the index not told yet (it catches up on its own time).
    await world.vault.remove("AWS/VPC.md");
    const plan = await utc.plan("AWS");
    expect(plan.notes).not.toContain("AWS/VPC.md");
    expect(plan.days.join("\n")).not.toContain("[[AWS/VPC]]");
  });

  // isInFolder(path, "") is false for every path: with decks at the vault root the plan found none.
  it("plan: with the vault root as the flashcards folder, the decks there are counted, notes without cards are not decks", async () => {
    world.settings = { ...world.settings, flashcardsFolder: "/" };
    await world.vault.rename("Flashcards/AWS.md", "AWS cards.md");
    const utc = service("UTC");
    await utc.create("Pass AWS SAA");
    const plan = await utc.plan("AWS");
    expect(plan.decks).toEqual(["AWS cards.md"]);
    expect(plan.dueCards).toBe(2);
  });

  it("plan: lists the vault once, for the goal and both folders", async () => {
    const la = service("America/Los_Angeles");
    await la.create("Pass AWS SAA", "2027-01-15");
    const listNotes = jest.spyOn(world.host.vault, "listNotes");
    await la.plan("AWS");
    expect(listNotes).toHaveBeenCalledTimes(1);
  });

  it("plan: an FSRS card is due from the instant SR wrote (its UTC timestamp), an SM-2 one from the start of its day where the user is", async () => {
    // SR writes FSRS due times with toISOString and shows a card once that instant has passed
    // (fsrs-helpers.ts formatFsrsTimestamp/parseFsrsTimestamp, rep-item-schedule-info.ts isDue); an SM-2 date
    // is read as local midnight (DateUtil.dateStrToMoment). The clock: 2026-11-25 06:00 UTC, which is the
    // 24th, 22:00 in Los Angeles and the 25th, 20:00 in Kiritimati.
    const fsrs = (due: string) => `<!--SR:!fsrs,${due},1,2.3,5.1,2,1,0,0,2026-11-24T05:00:00.000Z-->`;
    const deck = [
      "---\nkrypton-deck: true\n---\n#flashcards/aws\n",
      `Reviewed in LA on the 23rd, due the 24th at 21:00 there::A1\n${fsrs("2026-11-25T05:00:00.000Z")}\n`,
      `Due in an hour::A2\n${fsrs("2026-11-25T07:00:00.000Z")}\n`,
      "Due on the 25th (SM-2)::A3\n<!--SR:!2026-11-25,3,250-->\n",
      `Never scheduled by FSRS::A4\n<!--SR:!fsrs,-,0,0,0,0,0,0,0,2026-11-20T05:00:00.000Z-->\n`,
    ].join("\n");
    await world.vault.write("Flashcards/AWS.md", deck);
    world.host = { ...world.host, clock: { ...world.host.clock, now: () => Date.UTC(2026, 10, 25, 6, 0) } };
    const la = service("America/Los_Angeles");
    await la.create("Pass AWS SAA", "2027-01-15");
    // Los Angeles: the first (its instant has passed) and the new one; the 25th has not begun there.
    expect((await la.plan("AWS")).dueCards).toBe(2);
    // Kiritimati: the first, the SM-2 card of its 25th, and the new one; the second is still an hour away.
    expect((await service("Pacific/Kiritimati").plan("AWS")).dueCards).toBe(3);
  });

  it("plan: reads decks with the user's own separators and tags (the Spaced Repetition plugin's data.json)", async () => {
    await world.vault.write(
      ".obsidian/plugins/obsidian-spaced-repetition/data.json",
      JSON.stringify({ settings: { singleLineCardSeparator: ";;", singleLineReversedCardSeparator: ";;;", flashcardTags: ["#cards"] } }),
    );
    // Two new cards (never reviewed: due) and one scheduled for 2027, in the user's format.
    await world.vault.write("Flashcards/AWS.md", "---\nkrypton-deck: true\n---\n#cards/aws\n\nS3;;object storage\n\nIAM;;identities\n\nVPC;;network\n<!--SR:!2027-03-01,60,270-->\n");
    const la = service("America/Los_Angeles");
    await la.create("Pass AWS SAA", "2027-01-15");
    expect((await la.plan("AWS")).dueCards).toBe(2);
  });

  it("plan: counts no card of a deck with one of the Spaced Repetition plugin's tags to ignore", async () => {
    await world.vault.write(".obsidian/plugins/obsidian-spaced-repetition/data.json", JSON.stringify({ settings: { flashcardTagsToIgnore: ["#paused"] } }));
    await world.vault.write("Flashcards/AWS.md", "---\nkrypton-deck: true\n---\n#flashcards/aws #paused/exam\n\nS3::object storage\n\nIAM::identities\n");
    await world.vault.write("Flashcards/AWS Extra.md", "---\nkrypton-deck: true\n---\n#flashcards/aws\n\nVPC::network\n");
    const la = service("America/Los_Angeles");
    await la.create("Pass AWS SAA", "2027-01-15");
    const plan = await la.plan("AWS");
    // Nor names it a deck: SR lists none for it.
    expect([plan.dueCards, plan.decks]).toEqual([1, ["Flashcards/AWS Extra.md"]]);
  });

  // SR loads no note in one of its "Folders to ignore": the plan neither counts such a deck's cards nor names it a deck.
  it("plan: counts no card or deck in one of the Spaced Repetition plugin's folders to ignore", async () => {
    await world.vault.write(".obsidian/plugins/obsidian-spaced-repetition/data.json", JSON.stringify({ settings: { noteFoldersToIgnore: ["Flashcards/Paused"] } }));
    await world.vault.write("Flashcards/Paused/AWS.md", "---\nkrypton-deck: true\n---\n#flashcards/aws\n\nS3::object storage\n\nIAM::identities\n");
    await world.vault.write("Flashcards/AWS.md", "---\nkrypton-deck: true\n---\n#flashcards/aws\n\nVPC::network\n");
    const la = service("America/Los_Angeles");
    await la.create("Pass AWS SAA", "2027-01-15");
    const plan = await la.plan("AWS");
    expect([plan.dueCards, plan.decks]).toEqual([1, ["Flashcards/AWS.md"]]);
  });

  it("plan: counts no card of a deck without a flashcard tag, unless folders are decks (convertFoldersToDecks)", async () => {
    await world.vault.write("Flashcards/AWS.md", "---\nkrypton-deck: true\n---\nS3::object storage\n\nIAM::identities\n");
    const la = service("America/Los_Angeles");
    await la.create("Pass AWS SAA", "2027-01-15");
    expect((await la.plan("AWS")).dueCards).toBe(0);
    await world.vault.write(".obsidian/plugins/obsidian-spaced-repetition/data.json", JSON.stringify({ settings: { convertFoldersToDecks: true } }));
    expect((await la.plan("AWS")).dueCards).toBe(2);
  });

  it("plan: says why when the Spaced Repetition plugin's settings cannot be read and decks are read in its defaults", async () => {
    await world.vault.write(".obsidian/plugins/obsidian-spaced-repetition/data.json", '{"settings": {"singleLineCardSeparator": ";;",}}');
    await world.vault.write("Flashcards/AWS.md", "---\nkrypton-deck: true\n---\n#flashcards/aws\n\nS3;;object storage\n\nIAM;;identities\n");
    const goals = service("America/Los_Angeles");
    await goals.create("Pass AWS SAA", "2027-01-15");
    const text = (await createGoalAgent({ goals, logger: world.host.logger }).tryHandle("plan my week for AWS", [], {}))!.text;
    expect(text).toMatch(/^Plan for \*\*Pass AWS SAA\*\* \(0 flashcards due in 1 deck, 2 related notes\)/);
    expect(text).toMatch(
      /\n\nRead in the Spaced Repetition plugin's default card format \(question::answer, #flashcards\): \.obsidian\/plugins\/obsidian-spaced-repetition\/data\.json is not valid JSON \(.+\)\. Fix it and Krypton reads your own separators, tags and cloze patterns\./,
    );
    // Without decks of the goal, nothing was read: nothing to say.
    await world.vault.remove("Flashcards/AWS.md");
    expect((await goals.plan("AWS")).srSettingsProblem).toBeUndefined();
  });

  // On a disk that ignores case (macOS, Windows) the setting's "Study goals" is the folder "study goals": goals
  // there were not listed, and Obsidian cannot create "Study goals/…" beside it. Decks likewise for the plan.
  it("the goals and flashcards folders as the vault spells them, whatever the settings' case", async () => {
    const goalNote = "---\nkrypton-goal: true\ngoal: Pass AWS SAA\n---\n# Pass AWS SAA\n\n## Sessions\n- 2026-11-20: 30 min\n";
    await world.vault.write("study goals/Pass AWS SAA.md", goalNote);
    world.settings.flashcardsFolder = "FLASHCARDS/";
    const goals = service("UTC");
    expect((await goals.list()).map((g) => g.path)).toEqual(["study goals/Pass AWS SAA.md"]);
    expect((await goals.create("Learn Rust")).path).toBe("study goals/Learn Rust.md");
    expect(await fs.readdir(world.vault.root)).not.toContain("Study goals");
    expect(await goals.create("pass aws saa").catch((e: Error) => e.message)).toMatch(/already exists \(study goals\/Pass AWS SAA\.md\)/);
    await world.index.sync();
    // Search finds the goal notes themselves; the plan leaves them out.
    expect((await world.index.searchNotes("Pass AWS SAA", { limit: 8 })).map((h) => h.path)).toContain("study goals/Pass AWS SAA.md");
    const plan = await goals.plan("AWS");
    expect(plan.decks).toEqual(["Flashcards/AWS.md"]);
    expect(plan.notes).toContain("AWS/VPC.md");
    expect(plan.notes.filter((p) => p.toLowerCase().startsWith("study goals/"))).toEqual([]);
  });

  it("an empty goals folder in another case than the setting's gets the first goal; nothing is made twice", async () => {
    await fs.mkdir(join(world.vault.root, "study goals"));
    const goals = service("UTC");
    expect(await goals.list()).toEqual([]);
    expect((await goals.create("Learn Rust")).path).toBe("study goals/Learn Rust.md");
    expect((await fs.readdir(world.vault.root)).filter((n) => /^study goals$/i.test(n))).toEqual(["study goals"]);
    expect(await fs.readdir(join(world.vault.root, "study goals"))).toEqual(["Learn Rust.md"]);
    expect(await goals.create("learn rust").catch((e: Error) => e.message)).toMatch(/already exists \(study goals\/Learn Rust\.md\)/);
  });

  it("a case-sensitive disk holding both spellings: the settings' exact spelling is the folder", async () => {
    const goalNote = (name: string) => `---\nkrypton-goal: true\ngoal: ${name}\n---\n# ${name}\n\n## Sessions\n`;
    await world.vault.write("study goals/Other.md", goalNote("Other"));
    await world.vault.write("Study goals/Mine.md", goalNote("Mine"));
    const goals = service("UTC");
    expect((await goals.list()).map((g) => g.path)).toEqual(["Study goals/Mine.md"]);
    expect((await goals.create("New")).path).toBe("Study goals/New.md");
  });

  it("chat agent: the five requests", async () => {
    const agent = createGoalAgent({ goals: service("America/Los_Angeles"), logger: world.host.logger });
    const say = async (m: string) => (await agent.tryHandle(m, [], {}))?.text ?? null;
    expect(await say("set a study goal: pass AWS SAA by January 15")).toMatch(/Study goal set: \*\*pass AWS SAA\*\*, target 2027-01-15/);
    expect(await say("log 30 minutes on AWS")).toMatch(/Logged 30 min on \*\*pass AWS SAA\*\* — 30 min in total/);
    expect(await say("what are my study goals")).toMatch(/pass AWS SAA\*\*: 30 min in 1 session/);
    expect(await say("how am I doing on AWS")).toMatch(/52 days left/);
    expect(await say("plan my week for AWS")).toMatch(/Plan for \*\*pass AWS SAA\*\* \(2 flashcards due/);
    expect(await say("how do I study better?")).toBeNull();
  });

  it("chat agent: a goal's date in the request's language; an ambiguous one sets no goal and says why", async () => {
    const agent = createGoalAgent({ goals: service("UTC"), logger: world.host.logger });
    const say = async (m: string) => (await agent.tryHandle(m, [], {}))?.text ?? null;
    const requests: [string, string, string][] = [
      ["fija un objetivo de estudio: aprobar AWS para el 15 de diciembre", "aprobar AWS", "2026-12-15"],
      ["setze ein Lernziel: Rust lernen bis zum 15. Dezember", "Rust lernen", "2026-12-15"],
      ["поставь учебную цель: сдать экзамен до 15 декабря", "сдать экзамен", "2026-12-15"],
      ["学習目標を設定して：AWSに合格 12月15日まで", "AWSに合格", "2026-12-15"],
      ["设定学习目标：通过考试 2027年1月15日之前", "通过考试", "2027-01-15"],
      ["학습 목표 설정해 줘: 토픽 합격 12월 15일까지", "토픽 합격", "2026-12-15"],
    ];
    for (const [message, goal, target] of requests) expect(await say(message)).toMatch(new RegExp(`^Study goal set: \\*\\*${goal}\\*\\*, target ${target}\\.`));
    expect(await say("fixe un objectif d'étude : réussir le DELF pour le 01/02/2027")).toBe(
      'The date "01/02/2027" is ambiguous (2027-02-01 or 2027-01-02?): write it as YYYY-MM-DD or with the month\'s name.',
    );
    expect((await service("UTC").list()).map((g) => g.goal).sort()).toEqual(requests.map(([, goal]) => goal).sort());
  });

  it("with no goal yet: the chat says the sentence that sets one, the study_goals tool its action", async () => {
    const agent = createGoalAgent({ goals: service("UTC"), logger: world.host.logger });
    const say = async (m: string) => (await agent.tryHandle(m, [], {}))?.text ?? null;
    const inChat = 'You have no study goals yet. Say "set a study goal: <goal> by <date>".';
    expect(await say("log 30 minutes on AWS")).toBe(inChat);
    expect(await say("how am I doing on AWS")).toBe(inChat);
    expect(await say("what are my study goals")).toBe(inChat);
    const registry = new ToolRegistry();
    registerGoalTool(registry, service("UTC"));
    await expect(registry.call("study_goals", { action: "progress", goal: "AWS" })).rejects.toThrow('You have no study goals yet. Create one first (action "create").');
  });
});
