/**
 * Cold start through the CLI (issue 11 part 3): a synthetic vault of 100,000 notes (~460k chunks; 5,000 at
 * `--scale small`) indexed once with the zero-latency embedder in its own process (peak RSS of that build),
 * then a fresh `krypton search` process timed end to end, as a user runs it after `krypton index`. The
 * search embeds its query at a loopback Ollama server (the test server: hash vectors, no latency).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { startOllamaServer } from "../tests/support/servers/ollama-server";
import { DIM, type Figures, type Measurement, now, round, stats, target } from "./bench-kit";
import { ensureVault, prepareIndex, preparedIndexInfo } from "./bench-vaults";

const NOTES = { full: 100_000, small: 5_000 } as const;
const SEARCHES = 5;

/** GNU time, when installed: the search process's own peak RSS. */
const GNU_TIME = "/usr/bin/time";

interface CliRun {
  ms: number;
  /** Peak RSS of the search process in MB (null without GNU time). */
  peakRssMb: number | null;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli.cjs …` and resolves when the process has exited (asynchronously: the loopback server lives here). */
function runCli(cli: string, args: string[], rssFile: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const timed = existsSync(GNU_TIME);
    rmSync(rssFile, { force: true });
    const command = timed ? [GNU_TIME, "-f", "%M", "-o", rssFile, process.execPath, cli, ...args] : [process.execPath, cli, ...args];
    const t0 = now();
    const child = spawn(command[0], command.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = now() - t0;
      const kb = timed && existsSync(rssFile) ? Number(readFileSync(rssFile, "utf8").trim().split("\n").pop()) : NaN;
      resolve({ ms, peakRssMb: Number.isFinite(kb) ? Math.round(kb / 1024) : null, code, stdout, stderr });
    });
  });
}

export const coldStart: Measurement = {
  name: "coldstart",
  describe: "CLI cold start: index a 100k-note vault once (peak RSS), then time fresh `krypton search` processes",
  async run(ctx) {
    const cli = join(dirname(ctx.script), "cli.cjs");
    if (!existsSync(cli)) throw new Error(`${cli} is missing: build it with \`node esbuild.config.mjs bench\``);
    const v = ensureVault(ctx, { notes: NOTES[ctx.scale] });
    prepareIndex(ctx, v);
    const built = preparedIndexInfo(v);

    const server = await startOllamaServer({ embeddingDim: DIM });
    const times: number[] = [];
    const searchRss: number[] = [];
    const failures: { what: string; error: string }[] = [];
    let hits = 0;
    try {
      for (let i = 0; i < SEARCHES; i++) {
        const query = v.queries[i % v.queries.length];
        const run = await runCli(cli, ["search", v.dir, query, "--json", "--limit", "10", "--ollama-url", server.url], join(ctx.workDir, "search-rss.txt"));
        if (run.code !== 0) {
          failures.push({ what: `krypton search "${query}"`, error: `exit ${run.code}: ${run.stderr.trim().slice(0, 500)}` });
          continue;
        }
        if (run.stderr.trim()) ctx.log(`krypton search stderr: ${run.stderr.trim().slice(0, 300)}`);
        const found = (JSON.parse(run.stdout) as unknown[]).length;
        // A search of an empty or broken index is fast and proves nothing.
        if (found === 0) failures.push({ what: `krypton search "${query}"`, error: "no results" });
        hits += found;
        times.push(run.ms);
        if (run.peakRssMb !== null) searchRss.push(run.peakRssMb);
      }
    } finally {
      await server.close();
    }
    const s = times.length > 0 ? stats(times) : null;
    const peak = built?.peakRssMb ?? null;
    const label = `${v.notes.toLocaleString("en")} notes (${(built?.chunks ?? v.chunks).toLocaleString("en")} chunks)`;
    const figures: Figures = {
      notes: v.notes,
      chunks: built?.chunks ?? v.chunks,
      embedded: built?.embedded ?? null,
      indexSeconds: built?.seconds ?? null,
      indexPeakRssMb: peak,
      searches: times.length,
      coldSearchP50Ms: s?.p50 ?? null,
      coldSearchMaxMs: s?.max ?? null,
      searchPeakRssMb: searchRss.length > 0 ? Math.max(...searchRss) : null,
      hitsPerSearch: times.length > 0 ? round(hits / times.length) : null,
    };
    return {
      figures,
      targets: [
        target("cold-search", `cold CLI \`krypton search\` at ${label} ≤ 2 s (fresh process, end to end, p50 of ${SEARCHES})`, s ? round(s.p50 / 1000) : null, "s", s && failures.length === 0 ? s.p50 <= 2000 : null),
        target("cold-index-rss", `peak RSS while indexing ${label} ≤ 1 GB`, peak, "MB", peak === null ? null : peak <= 1024,
          built?.seconds ? `index built in ${built.seconds} s (zero-latency embedder, in process)` : undefined),
      ],
      failures,
    };
  },
};
