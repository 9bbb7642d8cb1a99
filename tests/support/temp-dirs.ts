import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

// Evaluated once per test file (jest gives each file its own modules): the file's folders go when it ends.
// Left behind, the CLI bundle copies and MCP bundles alone came to ~8 MB a test file and ~7 GB in the temp
// dir of a machine that had run the suite a few hundred times.
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new folder in the temp dir, removed (with everything in it) after the test file that asked for it. */
export function tempDirForFile(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
