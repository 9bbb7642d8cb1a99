import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { tempDirForFile } from "../../support/temp-dirs";

/**
 * bundleForNode (bundle.ts) through esbuild's command line in a child process: for jsdom test files,
 * where esbuild's JavaScript API refuses to load (jsdom's TextEncoder is not Node's).
 */
export function bundleForNodeViaCli(entry: string, name = "entry.cjs"): string {
  const outfile = join(tempDirForFile("krypton-bundle-"), name);
  const cli = join(__dirname, "..", "..", "..", "node_modules", "esbuild", "bin", "esbuild");
  execFileSync(cli, [entry, "--bundle", "--platform=node", "--format=cjs", "--target=node20", `--outfile=${outfile}`, "--log-level=error"]);
  return outfile;
}
