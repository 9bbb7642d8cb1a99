/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { clearNotices, noticeMessages } from "../support/obsidian-stub";
import { statusBarTooltip } from "../../src/obsidian/status/index-status-text";
import { loadPlugin, type LoadedPlugin } from "./plugin-harness";

let p: LoadedPlugin | undefined;
beforeEach(() => clearNotices());
afterEach(async () => {
  await p?.close();
  p = undefined;
});

test("a file named .krypton where the data folder goes: search works in memory, the user is told once in plain words, the file is untouched", async () => {
  p = await loadPlugin({ "A.md": "# A\n\nalpha beta", ".krypton": "my own notes about krypton" });
  await p.layoutReady();
  const status = p.services.core.index.status();
  expect(status.writeError).toBe("cannot write .krypton (it is a file, not a folder: move or rename it)");
  expect((await p.services.core.index.searchNotes("alpha"))[0].path).toBe("A.md");
  const said = noticeMessages().filter((m) => m.includes("cannot save its index"));
  expect(said).toEqual(["Krypton cannot save its index: cannot write .krypton (it is a file, not a folder: move or rename it). Search still works; the index is kept in memory only until this is fixed."]);
  expect(statusBarTooltip(status)).toContain("Not saved: cannot write .krypton");
  // Later updates do not repeat the notice.
  await p.temp.write("B.md", "# B\n\ngamma");
  await p.services.core.index.sync();
  await p.settle();
  expect(noticeMessages().filter((m) => m.includes("cannot save its index"))).toHaveLength(1);
  expect(await fs.readFile(join(p.temp.root, ".krypton"), "utf8")).toBe("my own notes about krypton");
});
