// Preloaded into the real CLI (NODE_OPTIONS="--require …/die-at-temp-swap.cjs"): the process kills itself
// with SIGKILL at the moment a note's temp file is complete and about to take the note's place (the rename
// of processNote, the link of createNote), as a crash or a power cut at that moment would. Nothing else of
// the process changes; its `finally` clean-up never runs, exactly as after a real kill.
const fs = require("node:fs");

for (const name of ["rename", "link"]) {
  const original = fs.promises[name];
  fs.promises[name] = function (from, ...rest) {
    if (/[\\/]\.krypton-(new|write)-[0-9a-f]{12}\.tmp$/.test(String(from))) process.kill(process.pid, "SIGKILL");
    return original.call(this, from, ...rest);
  };
}
