import { lstat, readFile, stat } from "node:fs/promises";
import * as path from "node:path";
import { validateFlow, type FlowValidation } from "../../core/workflows/flow-validate";
import { flowToMermaid } from "../../core/workflows/flow-graph";
import { flowJsonSchema } from "../../core/workflows/flow-schema";
import { resultText, runReport, stepLine, traceMarkdown } from "../../core/workflows/flow-report";
import { parseFlowSource, usesTools } from "../../core/workflows/workflow-service";
import { flag, stringOption, type ParsedArgs } from "../args";
import type { Command, CommandContext } from "../command";
import { CONFIG_OPTIONS, configDirFrom } from "../config";
import { CliError, describeError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, fsReason, UsageError } from "../errors";
import type { Output } from "../output";
import { FsVault } from "../../node/fs-vault";
import { openVaultSession, type VaultSession } from "../vault-session";
import { WarnOnce } from "../warn-once";
import { cliConfirm } from "./agent-cli";
import { actionOf, checkPositionals, IndexPreparation, withAbortOnInterrupt } from "./command-helpers";
import { countOf } from "../../core/util/text";

const ACTIONS = ["validate", "graph", "run", "schema"] as const;

export const flowCommand: Command = {
  name: "flow",
  summary: "Validate, draw or run a workflow (a note with a krypton-flow block, or a .json file)",
  usage: 'krypton flow validate|graph|run <file> [--input "..."] [--vault DIR] [--yes] [--json] | krypton flow schema',
  details: [
    "validate  checks the flow (structure, models installed, tools known); exit 2 when it has errors",
    "graph     prints the flow as a Mermaid flowchart",
    "schema    prints the JSON Schema of a flow (editors can validate with it)",
    "run       runs it on --input (or --input-file, or standard input); progress goes to stderr,",
    "          the result to stdout (a failed run has none: stderr says which agent failed and why).",
    "          Exit 0 finished, 1 failed or stopped at a limit (step limit, time limit, loop guard), 2 invalid, 130 Ctrl+C.",
    "",
    "The vault (for settings, tools and models) is --vault, else the vault the file is in (the nearest folder",
    "above it with .obsidian or .krypton), else the file's folder for settings only: a run whose tasks use",
    "tools needs a vault.",
    "",
    "Examples:",
    '  krypton flow validate "Workflows/Retry loop.md"',
    '  krypton flow run examples/demo-vault/Workflows/Retry\\ loop.md --input "tides" --trace trace.md',
    "  krypton flow graph flow.json > flow.mmd",
  ].join("\n"),
  options: {
    input: { type: "string", value: "TEXT", short: "i", description: "The text the flow starts from" },
    "input-file": { type: "string", value: "FILE", description: "Read the input from a file" },
    vault: { type: "string", value: "DIR", description: "The vault whose settings and tools to use" },
    trace: { type: "string", value: "FILE", description: "Also write the trace (path, inputs, outputs, timings) as markdown, to a new file (never over one)" },
    json: { type: "boolean", description: "validate/run: print JSON instead of text" },
    yes: { type: "boolean", short: "y", description: "run: allow write tools without asking (otherwise asked on a terminal, refused elsewhere)" },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    const [word, file] = args.positionals;
    const action = actionOf(word, ACTIONS);
    if (action === "schema") {
      checkPositionals(args.positionals, 1);
      ctx.output.json(flowJsonSchema());
      return EXIT_OK;
    }
    if (file === undefined) throw new UsageError("missing <file>: a note with a ```krypton-flow block, or a .json file");
    checkPositionals(args.positionals, 2, " (quote the file name if it has spaces)");
    const filePath = path.resolve(ctx.cwd, file);
    let source: string;
    try {
      source = await readFile(filePath, "utf8");
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new CliError(code === "ENOENT" ? `no such file: ${file}` : `cannot read ${file}: ${fsReason(err) ?? code ?? String(err)}`);
    }

    const parsed = parseFlowSource(source, path.basename(filePath));
    if (parsed.error) {
      ctx.output.error(parsed.error);
      return EXIT_USAGE;
    }
    // A run whose tasks use tools works on a vault's notes. Only one whose tools need the index opens it
    // and checks the embedding server first (prepareFlow); other runs, graph and validate contact no embedder.
    const structure = action === "run" ? validateFlow(parsed.json).flow : null;
    const withTools = structure !== null && usesTools(structure);
    const vault = await vaultFor(filePath, args, ctx);
    // Its tools would read and write, and the index be built, in whatever folder the file is in (Downloads).
    if (withTools && !vault.found) {
      throw new UsageError(`${file} is in no vault (no ${configDirFrom(ctx.env, args)} or .krypton folder above it) and its tasks use tools, which work on a vault's notes: give --vault DIR`);
    }
    const session = await openVaultSession(vault.root, args, ctx, { probeEmbedder: false });
    try {
      const validation = await withAbortOnInterrupt(ctx, (signal) => (action === "graph" ? Promise.resolve(session.core.workflows.validateStructure(parsed.json)) : session.core.workflows.validate(parsed.json, signal)));
      if (action === "validate") return printValidation(ctx.output, validation, flag(args, "json"));
      reportIssues(ctx.output, validation);
      if (!validation.flow || validation.errors.length > 0) return EXIT_USAGE;
      if (action === "graph") {
        ctx.output.out(flowToMermaid(validation.flow) + "\n");
        return EXIT_OK;
      }
      return await runFlowCommand(session, validation.flow, await inputOf(args, ctx), args, ctx);
    } finally {
      await session.close();
    }
  },
};

async function runFlowCommand(session: VaultSession, flow: NonNullable<FlowValidation["flow"]>, input: string, args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const once = new WarnOnce(ctx.output);
  const tracePath = stringOption(args, "trace");
  // The trace never takes the place of a file (a note of the user's): said before the run, not after it.
  if (tracePath && (await lstat(path.resolve(ctx.cwd, tracePath)).then(() => true, () => false))) {
    throw new UsageError(`--trace ${tracePath}: that file already exists, and Krypton never overwrites a file: give a new name`);
  }
  await withAbortOnInterrupt(ctx, (signal) => new IndexPreparation(session, once).prepareFlow(flow, signal));
  const result = await withAbortOnInterrupt(ctx, (signal) =>
    session.core.workflows.run(flow, input, {
      signal,
      confirm: cliConfirm(ctx, { yes: flag(args, "yes") }),
      onStep: (step, phase) => {
        if (phase === "start") ctx.output.info(`→ ${step.agent} (${step.type})…`);
        else ctx.output.info(`  ${stepLine(step, 0).replace(/^1\. /, "")}`);
      },
    }),
  );
  if (tracePath) {
    const full = path.resolve(ctx.cwd, tracePath);
    // Created as a note is (complete or not at all, never over a file that appeared during the run).
    await new FsVault(path.dirname(full)).createNote(path.basename(full), traceMarkdown(flow, input, result, new Date().toISOString()));
    ctx.output.info(`trace written to ${tracePath}`);
  }
  if (result.status === "stopped") throw new CliError("interrupted", 130);
  const pathTaken = result.steps.map((s) => s.agent);
  // Why a step's search matched by keywords only: in the JSON (`keywordOnly`, as flashcards --json and
  // run_workflow have it) and then not on stderr, as ask --json; else once on stderr after the result.
  if (flag(args, "json")) {
    ctx.output.json(runReport(result));
  } else {
    const text = resultText(result);
    if (text) ctx.output.out(text.replace(/\n?$/, "\n"));
    for (const remark of result.keywordOnlyRemarks ?? []) once.warn(remark);
  }
  if (result.status === "finished") {
    ctx.output.info(`finished: ${pathTaken.join(" → ")}`);
    return EXIT_OK;
  }
  ctx.output.error(`${result.status}: ${result.message}`);
  return EXIT_FAILURE;
}

function printValidation(output: Output, validation: FlowValidation, json: boolean): number {
  const ok = validation.flow !== null && validation.errors.length === 0;
  if (json) output.json({ valid: ok, errors: validation.errors, warnings: validation.warnings });
  else {
    reportIssues(output, validation);
    if (ok) output.line(`valid: ${validation.flow!.id} (${countOf(validation.flow!.agents.length, "agent")}, ${countOf(validation.flow!.transitions.length, "transition")})${validation.warnings.length ? `, ${countOf(validation.warnings.length, "warning")}` : ""}`);
  }
  return ok ? EXIT_OK : EXIT_USAGE;
}

function reportIssues(output: Output, validation: FlowValidation): void {
  for (const e of validation.errors) output.error(`${e.pointer}: ${e.message}`);
  for (const w of validation.warnings) output.warn(`${w.pointer}: ${w.message}`);
}

async function inputOf(args: ParsedArgs, ctx: CommandContext): Promise<string> {
  const text = stringOption(args, "input");
  const file = stringOption(args, "input-file");
  if (text !== undefined && file !== undefined) throw new UsageError("give --input or --input-file, not both");
  if (text !== undefined) return text;
  if (file !== undefined) {
    try {
      return await readFile(path.resolve(ctx.cwd, file), "utf8");
    } catch (err) {
      throw new CliError(`cannot read the input file ${file}: ${fsReason(err) ?? describeError(err)}`);
    }
  }
  if (ctx.stdin.isTTY) throw new UsageError("missing --input: the text the flow starts from");
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  const input = Buffer.concat(chunks).toString("utf8");
  if (input.trim() === "") throw new UsageError("missing --input: the text the flow starts from");
  return input;
}

/**
 * --vault, else the nearest folder above the file that has the Obsidian config folder or .krypton, else the
 * file's folder (`found` false: for settings only, with nothing of Krypton's in it).
 */
async function vaultFor(filePath: string, args: ParsedArgs, ctx: CommandContext): Promise<{ root: string; found: boolean }> {
  const explicit = stringOption(args, "vault");
  if (explicit) return { root: explicit, found: true };
  const configDir = configDirFrom(ctx.env, args);
  for (let dir = path.dirname(filePath); ; dir = path.dirname(dir)) {
    for (const marker of [configDir, ".krypton"]) {
      const found = await stat(path.join(dir, marker)).then((s) => s.isDirectory(), () => false);
      if (found) return { root: dir, found: true };
    }
    if (path.dirname(dir) === dir) return { root: path.dirname(filePath), found: false };
  }
}
