// The desktop plugin loads src/node/node-process.ts into Obsidian's own (Electron) process: the exit and
// signal listeners it installs for a held index lock must go away when the lock is released, or every
// disable/enable of the plugin leaves another set on Obsidian's process (Obsidian's guidelines: clean up
// on unload; Node warns past ten listeners).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const EVENTS = ["exit", "SIGTERM", "SIGHUP"] as const;
const counts = () => EVENTS.map((e) => process.listenerCount(e));

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "krypton-proc-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh copy of the module, as a plugin reload evaluates main.js again. */
function freshModule(): typeof import("../../src/node/node-process") {
  let mod!: typeof import("../../src/node/node-process");
  jest.isolateModules(() => {
    mod = jest.requireActual("../../src/node/node-process");
  });
  return mod;
}

test("releasing the last lock removes the exit and signal listeners", () => {
  const before = counts();
  const port = freshModule().createNodeProcess(dir, "Obsidian");
  const cancelA = port.releaseOnExit("index/lock.json", "owner-a");
  const cancelB = port.releaseOnExit("index/other.json", "owner-b");
  expect(counts()).toEqual(before.map((n) => n + 1));
  cancelA();
  expect(counts()).toEqual(before.map((n) => n + 1)); // one file still held
  cancelB();
  expect(counts()).toEqual(before);
  // Taken again after a release: installed again.
  const cancelC = port.releaseOnExit("index/lock.json", "owner-c");
  expect(counts()).toEqual(before.map((n) => n + 1));
  cancelC();
  cancelC(); // twice is harmless
  expect(counts()).toEqual(before);
});

test("twelve plugin reloads (lock taken, then released on unload) leave no listener behind", () => {
  const before = counts();
  for (let i = 0; i < 12; i++) {
    const cancel = freshModule().createNodeProcess(dir, "Obsidian").releaseOnExit("index/lock.json", `owner-${i}`);
    cancel();
  }
  expect(counts()).toEqual(before);
});
