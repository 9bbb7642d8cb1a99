import { join } from "node:path";
import { tempDirForFile } from "../../support/temp-dirs";
import { build } from "esbuild";

/** Bundles a TypeScript entry for Node into a temp .cjs (no tsx, no stale dist/): returns its path. */
export async function bundleForNode(entry: string, name = "entry.cjs"): Promise<string> {
  const outfile = join(tempDirForFile("krypton-bundle-"), name);
  await build({ entryPoints: [entry], bundle: true, platform: "node", format: "cjs", target: "node20", outfile, logLevel: "error", sourcemap: false });
  return outfile;
}
