import { builtinModules } from "node:module";
import { join } from "node:path";
import { tempDirForFile } from "../../support/temp-dirs";
import { build } from "esbuild";

/** Bundles a TypeScript entry for Node into a temp .cjs (no tsx, no stale dist/): returns its path. */
export async function bundleForNode(entry: string, name = "entry.cjs"): Promise<string> {
  const outfile = join(tempDirForFile("krypton-bundle-"), name);
  await build({ entryPoints: [entry], bundle: true, platform: "node", format: "cjs", target: "node20", outfile, logLevel: "error", sourcemap: false });
  return outfile;
}

/**
 * Bundles a TypeScript entry for the browser, as for Obsidian mobile (no Node): Node builtins are left out
 * of the bundle, so every one the entry reaches is in `nodeImports`. `inputs` are the bundled files' paths.
 */
export async function bundleForBrowser(entry: string): Promise<{ nodeImports: string[]; inputs: string[]; code: string }> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    platform: "browser",
    format: "cjs",
    metafile: true,
    external: [...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
    logLevel: "silent",
  });
  return {
    nodeImports: Object.values(result.metafile.inputs).flatMap((input) => input.imports.filter((i) => i.external).map((i) => i.path)),
    inputs: Object.keys(result.metafile.inputs),
    code: result.outputFiles[0].text,
  };
}
