/**
 * Cold start through the CLI (issue 11 part 3): a synthetic vault of 100,000 notes (~530k chunks; 5,000 at
 * `--scale small`) indexed once with the zero-latency embedder (its arithmetic in a worker thread, like a
 * real embedder's in its own process: OffThreadEmbedder) in its own process (peak RSS and longest
 * main-thread stall of that build), then:
 *   - fresh `krypton search` processes timed end to end, as a user runs them after `krypton index`;
 *   - plugin queries: in a fresh process, a VaultIndex opened on the index as the plugin does, then
 *     PLUGIN_QUERIES `searchNotes` calls timed (after one untimed first search);
 *   - MCP queries: a real `krypton mcp <vault>` (stdio) driven by the MCP SDK client; once its index answers,
 *     MCP_QUERIES `search_notes` calls timed round trip (the server's own re-scan before a search when its
 *     last scan is over 2 s old is part of what a client waits for, so it is in the figures).
 * Query vectors come from a loopback Ollama server (the test server: hash vectors, no latency) or, for the
 * plugin, from the zero-latency embedder in process.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { startOllamaServer } from "../tests/support/servers/ollama-server";
import { DIM, errorText, type FailureRecord, type Figures, type Measurement, now, RESULT_PREFIX, round, type Stats, stats, target } from "./bench-kit";
import { ensureVault, type PluginQueryReport, prepareIndex, preparedIndexInfo, type VaultOnDisk } from "./bench-vaults";

const NOTES = { full: 100_000, small: 5_000 } as const;
const SEARCHES = 5;
export const PLUGIN_QUERIES = 50;
const MCP_QUERIES = 50;
/** How long `krypton mcp` may take to load the index before its first search answers. */
const MCP_READY_TIMEOUT_MS = { full: 15 * 60_000, small: 2 * 60_000 } as const;

/** GNU time, when installed: the search process's own peak RSS and CPU time (user + system). */
const GNU_TIME = "/usr/bin/time";

interface CliRun {
  ms: number;
  /** Peak RSS of the search process in MB (null without GNU time). */
  peakRssMb: number | null;
  /** CPU seconds of the search process (null without GNU time): on a shared machine less noisy than wall time. */
  cpuS: number | null;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli.cjs …` and resolves when the process has exited (asynchronously: the loopback server lives here). */
function runCli(cli: string, args: string[], rssFile: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const timed = existsSync(GNU_TIME);
    rmSync(rssFile, { force: true });
    const command = timed ? [GNU_TIME, "-f", "%M %U %S", "-o", rssFile, process.execPath, cli, ...args] : [process.execPath, cli, ...args];
    const t0 = now();
    const child = spawn(command[0], command.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = now() - t0;
      // The last line is ours ("Command exited with non-zero status" may come first).
      const [kb, user, system] = (timed && existsSync(rssFile) ? (readFileSync(rssFile, "utf8").trim().split("\n").pop() ?? "") : "").split(" ").map(Number);
      const cpu = (user ?? NaN) + (system ?? NaN);
      resolve({ ms, peakRssMb: Number.isFinite(kb) ? Math.round(kb / 1024) : null, cpuS: Number.isFinite(cpu) ? round(cpu) : null, code, stdout, stderr });
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
    const searchCpu: number[] = [];
    const failures: { what: string; error: string }[] = [];
    let hits = 0;
    let mcp: McpQueryReport | null = null;
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
        if (run.cpuS !== null) searchCpu.push(run.cpuS);
      }
      mcp = await mcpQueries(cli, v, server.url, MCP_READY_TIMEOUT_MS[ctx.scale], failures);
    } finally {
      await server.close();
    }
    const plugin = pluginQueries(ctx.script, v, failures);
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
      coldSearchCpuP50S: searchCpu.length > 0 ? stats(searchCpu).p50 : null,
      hitsPerSearch: times.length > 0 ? round(hits / times.length) : null,
      indexMaxStallMs: built?.maxStallMs ?? null,
      indexP99GapMs: built?.p99GapMs ?? null,
      indexStallsOver100: built?.stallsOver100 ?? null,
      pluginOpenMs: plugin?.openMs ?? null,
      pluginQueries: plugin?.searches ?? null,
      pluginQueryP50Ms: plugin?.p50Ms ?? null,
      pluginQueryP95Ms: plugin?.p95Ms ?? null,
      pluginQueryMaxMs: plugin?.maxMs ?? null,
      pluginRssMb: plugin?.rssMb ?? null,
      mcpReadyMs: mcp?.readyMs ?? null,
      mcpQueries: mcp?.stats.n ?? null,
      mcpQueryP50Ms: mcp?.stats.p50 ?? null,
      mcpQueryP95Ms: mcp?.stats.p95 ?? null,
      mcpQueryMaxMs: mcp?.stats.max ?? null,
    };
    const stall = built?.maxStallMs ?? null;
    return {
      figures,
      targets: [
        target("cold-search", `cold CLI \`krypton search\` at ${label} ≤ 2 s (fresh process, end to end, p50 of ${SEARCHES})`, s ? round(s.p50 / 1000) : null, "s", s && failures.length === 0 ? s.p50 <= 2000 : null,
          s ? `max ${round(s.max / 1000, 1)} s${searchCpu.length > 0 ? `; CPU ${stats(searchCpu).p50} s p50` : ""}${searchRss.length > 0 ? `; search process peak RSS ${Math.max(...searchRss)} MB` : ""}` : undefined),
        target("cold-index-rss", `peak RSS while indexing ${label} ≤ 1 GB`, peak, "MB", peak === null ? null : peak <= 1024,
          built?.seconds ? `index built in ${built.seconds} s (zero-latency embedder, its arithmetic in a worker thread)` : undefined),
        target("cold-index-stall", `longest main-thread stall while indexing ${label} < 100 ms`, stall, "ms", stall === null ? null : stall < 100,
          stall === null
            ? "the index was built without the lag probe (an older .bench-index-ready)"
            : `1 ms lag probe in the building process${built?.maxStallDuring ? `; longest while ${built.maxStallDuring}` : ""}${built?.stallsOver100 !== undefined ? `; ${built.stallsOver100} stalls ≥ 100 ms` : ""}`),
        target("plugin-query", `plugin query p50 at ${label} ≤ 100 ms (VaultIndex.searchNotes, ${PLUGIN_QUERIES} queries)`, plugin?.p50Ms ?? null, "ms",
          plugin ? plugin.p50Ms <= 100 : null, plugin ? `p95 ${plugin.p95Ms} ms; index opened in ${round(plugin.openMs / 1000, 1)} s; RSS ${plugin.rssMb} MB` : undefined),
        target("mcp-query", `MCP query p50 at ${label} ≤ 100 ms (\`krypton mcp\` stdio, search_notes through the SDK client, ${MCP_QUERIES} calls)`,
          mcp?.stats.p50 ?? null, "ms", mcp ? mcp.stats.p50 <= 100 : null,
          mcp ? `p95 ${mcp.stats.p95} ms, max ${mcp.stats.max} ms; first answer ${round(mcp.readyMs / 1000, 1)} s after start` : undefined),
      ],
      failures,
    };
  },
};

/** The plugin query child (`--plugin-queries <vault>`): its report, or null after recording why it failed. */
function pluginQueries(script: string, v: VaultOnDisk, failures: FailureRecord[]): PluginQueryReport | null {
  const child = spawnSync(process.execPath, ["--expose-gc", script, "--plugin-queries", v.dir], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  const line = (child.stdout ?? "").split("\n").find((l) => l.startsWith(RESULT_PREFIX));
  if (child.status !== 0 || !line) {
    failures.push({ what: "plugin queries", error: `exit ${child.status ?? child.signal}: ${(child.stderr ?? "").trim().slice(-500)}` });
    return null;
  }
  const report = JSON.parse(line.slice(RESULT_PREFIX.length)) as PluginQueryReport;
  if (report.empty > 0) failures.push({ what: "plugin queries", error: `${report.empty} of ${report.searches} searches found nothing` });
  return report;
}

interface McpQueryReport {
  /** From starting `krypton mcp` to its first search_notes answer with results. */
  readyMs: number;
  stats: Stats;
}

/** `krypton mcp <vault>` over stdio, driven by the MCP SDK client as Claude Desktop would. */
async function mcpQueries(cli: string, v: VaultOnDisk, ollamaUrl: string, readyTimeoutMs: number, failures: FailureRecord[]): Promise<McpQueryReport | null> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, "mcp", v.dir, "--ollama-url", ollamaUrl],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const client = new Client({ name: "krypton-bench", version: "1.0.0" });
  const t0 = now();
  try {
    await client.connect(transport);
    const search = async (query: string) => {
      const result = await client.callTool({ name: "search_notes", arguments: { query, limit: 10 } }, undefined, { timeout: readyTimeoutMs });
      const found = (result.structuredContent as { results?: unknown[] } | undefined)?.results ?? [];
      return { error: result.isError === true, found: found.length, text: JSON.stringify(result.content).slice(0, 300) };
    };
    // The server answers at once and loads the index in the background: wait for the first real answer.
    let ready = await search(v.queries[0]);
    while (ready.error || ready.found === 0) {
      if (now() - t0 > readyTimeoutMs) throw new Error(`no search results within ${readyTimeoutMs / 1000} s: ${ready.text}`);
      await new Promise((r) => setTimeout(r, 200));
      ready = await search(v.queries[0]);
    }
    const readyMs = now() - t0;
    const times: number[] = [];
    for (let i = 0; i < MCP_QUERIES; i++) {
      const query = v.queries[1 + (i % (v.queries.length - 1))];
      const s0 = now();
      const r = await search(query);
      times.push(now() - s0);
      if (r.error) failures.push({ what: `MCP search_notes "${query}"`, error: r.text });
    }
    return { readyMs: round(readyMs, 0), stats: stats(times) };
  } catch (err) {
    failures.push({ what: "krypton mcp (stdio)", error: `${errorText(err)}${stderr.trim() ? ` | stderr: ${stderr.trim().slice(-300)}` : ""}` });
    return null;
  } finally {
    await client.close().catch(() => undefined);
  }
}
