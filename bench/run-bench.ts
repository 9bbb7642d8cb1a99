/**
 * `npm run bench`: Krypton's index against naive Orama and a brute-force scan, on seeded synthetic vaults.
 *
 *   node --expose-gc dist/bench.cjs [--scale small|full] [--only query,reload] [--seed 42] [--keep] [--work-dir DIR]
 *
 * Each measurement runs in its own process (clean memory figures; a crash becomes a failure record).
 * Prints the JSON report, writes bench/report.json and bench/README-figures.md (a table for the README).
 */
import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, totalmem, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { BenchContext, MeasurementResult, Scale, TargetResult } from "./bench-kit";
import { errorText, now, RESULT_PREFIX, round } from "./bench-kit";
import { buildIndexHere, queryIndexHere } from "./bench-vaults";
import { PLUGIN_QUERIES } from "./measure-cold-start";
import { findMeasurement, MEASUREMENTS } from "./measurements";
import { MCP_DEMO_SERVER_FLAG, serveDemoMcpOverStdio } from "./mcp-client-bench";

const DEFAULT_SEED = 42;

interface Args {
  scale: Scale;
  only: string[] | null;
  seed: number;
  keep: boolean;
  child: string | null;
  prepareIndex: string | null;
  /** Child entry of the coldstart measurement: time plugin-style searches on this vault's index. */
  pluginQueries: string | null;
  workDir: string | null;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { scale: "full", only: null, seed: DEFAULT_SEED, keep: false, child: null, prepareIndex: null, pluginQueries: null, workDir: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--scale") {
      const s = value();
      if (s !== "small" && s !== "full") throw new Error(`--scale must be small or full, not ${s}`);
      args.scale = s;
    } else if (a === "--only") args.only = value().split(",").map((s) => s.trim()).filter(Boolean);
    else if (a === "--seed") args.seed = Number(value());
    else if (a === "--keep") args.keep = true;
    else if (a === "--child") args.child = value();
    else if (a === "--prepare-index") args.prepareIndex = value();
    else if (a === "--plugin-queries") args.pluginQueries = value();
    else if (a === "--work-dir") args.workDir = value();
    else if (a === "--help" || a === "-h") {
      process.stdout.write(`Usage: node --expose-gc dist/bench.cjs [--scale small|full] [--only ${MEASUREMENTS.map((m) => m.name).join(",")}] [--seed N] [--keep]\n`);
      process.exit(0);
    } else throw new Error(`Unknown argument: ${a}`);
  }
  return args;
}

function context(args: Args): BenchContext {
  // One folder per run: two runs at once (or a leftover index from another build of the code) cannot mix.
  const workDir = args.workDir ?? join(tmpdir(), "krypton-bench", `${args.scale}-seed${args.seed}-${process.pid}`);
  mkdirSync(workDir, { recursive: true });
  return {
    scale: args.scale,
    seed: args.seed,
    workDir,
    script: process.argv[1],
    log: (message) => process.stderr.write(`[bench] ${message}\n`),
  };
}

/** In a child: run one measurement and hand its result to the parent on stdout. */
async function runChild(name: string, ctx: BenchContext): Promise<void> {
  const m = findMeasurement(name);
  if (!m) throw new Error(`No measurement named ${name}`);
  const t0 = now();
  const out = await m.run(ctx);
  const result: MeasurementResult = { name, durationMs: round(now() - t0, 0), ...out };
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

function runInChild(name: string, args: Args, ctx: BenchContext): Promise<MeasurementResult> {
  return new Promise((resolvePromise) => {
    const t0 = now();
    const child = spawn(
      process.execPath,
      ["--expose-gc", ctx.script, "--child", name, "--scale", args.scale, "--seed", String(args.seed), "--work-dir", ctx.workDir],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderrTail = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      process.stderr.write(d);
      stderrTail = (stderrTail + d.toString()).slice(-2000);
    });
    child.on("close", (code, signal) => {
      const line = stdout.split("\n").find((l) => l.startsWith(RESULT_PREFIX));
      if (code === 0 && line) {
        resolvePromise(JSON.parse(line.slice(RESULT_PREFIX.length)) as MeasurementResult);
        return;
      }
      const why = signal ? `killed by ${signal}` : `exit code ${code}`;
      resolvePromise({
        name,
        durationMs: round(now() - t0, 0),
        figures: {},
        targets: [],
        failures: [{ what: `measurement ${name}`, error: `${why}: ${stderrTail.trim().split("\n").slice(-5).join(" | ")}` }],
      });
    });
  });
}

function machine() {
  const cpu = cpus();
  return { cpus: cpu.length, cpuModel: cpu[0]?.model ?? "unknown", totalMemoryGb: round(totalmem() / 1024 ** 3, 1), node: process.version, platform: process.platform };
}

function figuresMarkdown(report: { generatedAt: string; command: string; machine: ReturnType<typeof machine>; targets: (TargetResult & { measurement: string })[] }): string {
  const mark = (p: boolean | null) => (p === true ? "✅ pass" : p === false ? "❌ miss" : "— n/a");
  const rows = report.targets.map(
    (t) => `| ${t.target} | ${t.measured === null ? "—" : `${t.measured.toLocaleString("en")} ${t.unit}`.trim()} | ${mark(t.pass)} | ${(t.note ?? "").replace(/\|/g, "\\|")} |`,
  );
  const m = report.machine;
  return [
    `Measured ${report.generatedAt.slice(0, 10)} on ${m.cpus} × ${m.cpuModel}, ${m.totalMemoryGb} GB RAM, Node ${m.node}, with:`,
    "",
    "```",
    report.command,
    "```",
    "",
    "Rows marked — n/a are comparisons for information (no target).",
    "",
    "| Target | Measured | Result | Details |",
    "|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

async function main(): Promise<void> {
  if (process.argv.includes(MCP_DEMO_SERVER_FLAG)) return serveDemoMcpOverStdio();
  const args = parseArgs(process.argv.slice(2));
  if (args.prepareIndex) {
    await buildIndexHere(resolve(args.prepareIndex));
    return;
  }
  if (args.pluginQueries) {
    const report = await queryIndexHere(resolve(args.pluginQueries), PLUGIN_QUERIES);
    process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(report)}\n`);
    return;
  }
  const ctx = context(args);
  if (args.child) {
    await runChild(args.child, ctx);
    return;
  }

  const selected = args.only ? args.only.map((n) => findMeasurement(n) ?? unknown(n)) : MEASUREMENTS;

  const started = new Date();
  const results: MeasurementResult[] = [];
  for (const m of selected) {
    ctx.log(`${m.name}: ${m.describe}`);
    const result = await runInChild(m.name, args, ctx);
    results.push(result);
    ctx.log(`${m.name}: done in ${round(result.durationMs / 1000, 1)} s`);
  }

  const targets = results.flatMap((r) => r.targets.map((t) => ({ measurement: r.name, ...t })));
  // The exact command that reproduces this run (the seed only when it is not the default).
  const extra = [
    args.scale === "small" ? "--scale small" : "",
    args.only ? `--only ${args.only.join(",")}` : "",
    args.seed !== DEFAULT_SEED ? `--seed ${args.seed}` : "",
  ]
    .filter(Boolean)
    .join(" ");
  const command = extra ? `npm run bench -- ${extra}` : "npm run bench";
  const report = {
    generatedAt: started.toISOString(),
    command,
    scale: args.scale,
    seed: args.seed,
    machine: machine(),
    summary: {
      passed: targets.filter((t) => t.pass === true).length,
      missed: targets.filter((t) => t.pass === false).length,
      undecided: targets.filter((t) => t.pass === null).length,
      failures: results.reduce((n, r) => n + r.failures.length, 0),
    },
    targets,
    measurements: results,
  };
  if (!args.keep && !args.workDir) rmSync(ctx.workDir, { recursive: true, force: true });
  else ctx.log(`kept the vaults and indexes in ${ctx.workDir}`);
  const json = JSON.stringify(report, null, 2);
  process.stdout.write(json + "\n");
  const benchDir = resolve(__dirname, "..", "bench");
  // A run of some measurements must not replace the figures of a complete run.
  const suffix = args.only ? "-partial" : "";
  try {
    writeFileSync(join(benchDir, `report${suffix}.json`), json + "\n");
    writeFileSync(join(benchDir, `README-figures${suffix}.md`), figuresMarkdown(report));
    ctx.log(`wrote ${join(benchDir, `report${suffix}.json`)} and README-figures${suffix}.md`);
  } catch (err) {
    ctx.log(`could not write the report files: ${errorText(err)}`);
  }
}

function unknown(name: string): never {
  throw new Error(`Unknown measurement "${name}". Known: ${MEASUREMENTS.map((m) => m.name).join(", ")}`);
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
