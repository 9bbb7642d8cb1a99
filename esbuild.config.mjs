// Builds the Obsidian plugin (main.js), the Node CLI (dist/cli.cjs) and the benchmark (dist/bench.cjs).
//   node esbuild.config.mjs production | watch | bench
import esbuild from "esbuild";
import { builtinModules } from "node:module";

const mode = process.argv[2] ?? "production";
const prod = mode !== "watch";

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/** The plugin: CJS for Obsidian. Node builtins stay external and are only required on desktop, at run time. */
const plugin = {
  entryPoints: ["src/main.ts"],
  bundle: true,
  outfile: "main.js",
  format: "cjs",
  platform: "browser",
  target: "es2022",
  external: ["obsidian", "electron", "@codemirror/*", "@lezer/*", ...nodeBuiltins],
  logLevel: "info",
  sourcemap: prod ? false : "inline",
  treeShaking: true,
  minify: prod,
};

/** The CLI and the benchmark run on Node 20. */
const node = (entry, outfile) => ({
  entryPoints: [entry],
  bundle: true,
  outfile,
  format: "cjs",
  platform: "node",
  target: "node20",
  logLevel: "warning",
  // A map file beside the bundle, not inline: an inline map triples the file Node reads and compiles at
  // every start (11.9 MB instead of 3.9 MB: ~60 ms of CPU per `krypton` process). `node --enable-source-maps`
  // still finds it.
  sourcemap: "linked",
  banner: { js: "#!/usr/bin/env node" },
});

if (mode === "watch") {
  const ctx = await esbuild.context(plugin);
  const cli = await esbuild.context(node("src/cli/main.ts", "dist/cli.cjs"));
  await Promise.all([ctx.watch(), cli.watch()]);
} else if (mode === "bench") {
  // The real embedding model (dev dependency) loads its weights from node_modules at run time.
  // The coldstart measurement runs the real CLI (dist/cli.cjs) in fresh processes.
  await Promise.all([
    esbuild.build({ ...node("bench/run-bench.ts", "dist/bench.cjs"), external: ["@energetic-ai/*"] }),
    // The stand-in embedder's worker thread, on its own so that it does not load (and count) all of the bench.
    esbuild.build({ ...node("bench/embed-worker.ts", "dist/bench-embed-worker.cjs"), banner: undefined }),
    esbuild.build(node("src/cli/main.ts", "dist/cli.cjs")),
  ]);
} else if (mode === "cli") {
  await esbuild.build(node("src/cli/main.ts", "dist/cli.cjs"));
} else {
  await Promise.all([esbuild.build(plugin), esbuild.build(node("src/cli/main.ts", "dist/cli.cjs"))]);
}
