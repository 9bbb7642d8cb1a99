import type { Writable } from "node:stream";
import { runCli } from "./cli";
import { EXIT_INTERRUPTED } from "./errors";

// Entry point of dist/cli.cjs (bin/krypton.cjs loads it). All logic lives in cli.ts so tests can call runCli.

// `krypton search … | head -1` closes stdout early: that is not an error worth a stack trace.
process.stdout.on("error", (err: Error & { code?: string }) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});

const exit = async (code: number): Promise<never> => {
  // process.exit() can drop output still queued on a pipe (asynchronous on macOS): flush first.
  await Promise.all([flush(process.stdout), flush(process.stderr)]);
  process.exit(code);
};

function flush(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    stream.write("", () => resolve());
  });
}

void runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  onSignal: (handler) => process.on("SIGINT", handler),
  forceExit: () => void exit(EXIT_INTERRUPTED),
}).then((code) => exit(code));
