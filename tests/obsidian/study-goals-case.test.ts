/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
/**
 * The study goals folder in another case than the setting's, in the real plugin on the Obsidian stand-in, on a
 * disk that ignores case (macOS, Windows): the setting's "Study goals" is the folder "study goals", which
 * Obsidian's file tree knows only by that spelling. Its goals were not listed, and a new goal's
 * vault.createFolder("Study goals") failed because the disk has the folder.
 */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { loadPlugin, type LoadedPlugin } from "./plugin-harness";

const GOAL = "---\nkrypton-goal: true\ngoal: Pass AWS SAA\n---\n# Pass AWS SAA\n\n## Sessions\n- 2026-11-20: 30 min\n";

let p: LoadedPlugin;
afterEach(() => p.close());

test("goals in 'study goals/' are listed and a new goal goes beside them, under the setting 'Study goals'", async () => {
  p = await loadPlugin({ "study goals/Pass AWS SAA.md": GOAL }, { caseInsensitiveDisk: true, data: { studyGoalsFolder: "Study goals" } });
  await p.layoutReady();
  const goals = p.services.core.goals;
  expect((await goals.list()).map((g) => g.path)).toEqual(["study goals/Pass AWS SAA.md"]);
  const created = await goals.create("Learn Rust");
  expect(created.path).toBe("study goals/Learn Rust.md");
  expect(await p.temp.read("study goals/Learn Rust.md")).toMatch(/^---\nkrypton-goal: true\n/);
  expect(p.app.vault.getAllLoadedFiles().map((f) => f.path).filter((f) => /^study goals$/i.test(f))).toEqual(["study goals"]);
  expect(await p.temp.read("study goals/Pass AWS SAA.md")).toBe(GOAL);
});

test("an empty 'study goals/' gets the first goal under the setting 'Study goals', and no second folder", async () => {
  p = await loadPlugin({}, { caseInsensitiveDisk: true, beforeOpen: (root) => fs.mkdir(join(root, "study goals")), data: { studyGoalsFolder: "Study goals" } });
  await p.layoutReady();
  const goals = p.services.core.goals;
  expect(await goals.list()).toEqual([]);
  expect((await goals.create("Learn Rust")).path).toBe("study goals/Learn Rust.md");
  expect(await goals.create("learn rust").catch((e: Error) => e.message)).toMatch(/already exists \(study goals\/Learn Rust\.md\)/);
  expect(p.app.vault.getAllLoadedFiles().map((f) => f.path).filter((f) => /^study goals(\/|$)/i.test(f))).toEqual(["study goals", "study goals/Learn Rust.md"]);
  expect(await fs.readdir(p.temp.root)).not.toContain("Study goals");
});
