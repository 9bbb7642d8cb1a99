#!/usr/bin/env node
// Entry for `npx krypton`: runs the bundled CLI, building it first if this clone has not been built yet.
const path = require("node:path");
const fs = require("node:fs");
const bundle = path.join(__dirname, "..", "dist", "cli.cjs");
if (!fs.existsSync(bundle)) {
  require("node:child_process").execFileSync(process.execPath, [path.join(__dirname, "..", "esbuild.config.mjs"), "cli"], {
    cwd: path.join(__dirname, ".."),
    stdio: ["ignore", "ignore", "inherit"],
  });
}
require(bundle);
