import * as readline from "node:readline";
import type { RetrievalMode } from "../../core/settings";
import { flag, stringOption } from "../args";
import type { Command, CommandContext } from "../command";
import { checkMode, CONFIG_OPTIONS } from "../config";
import { EXIT_FAILURE, EXIT_OK } from "../errors";
import { connectMcpServers, openVaultSession, type VaultSession } from "../vault-session";
import { answerFailure, consumeAnswer } from "./answer-printer";
import { cliConfirm, printExchange, printSteps, printTools } from "./agent-cli";
import { CHAT_OPTIONS } from "./chat-options";
import { checkPositionals, IndexPreparation, notePathOption, withAbortOnInterrupt } from "./command-helpers";
import { WarnOnce } from "../warn-once";
import { resultText, stepLine as flowStepLine } from "../../core/workflows/flow-report";
import { parseRunCommand } from "../../core/workflows/run-command";
import type { ConfirmPort } from "../../core/agent-loop/agent-types";

const CHAT_HELP = [
  "Commands: /new (start a new conversation), /mode none|rag|web|hybrid, /agent on|off, /quit.",
  "Agent mode: /steps (tool calls of the last answer), /log (raw exchange with the model), /tools, /config.",
  'Workflows: /run <note or flow id> <input> (quote names with spaces: /run "Retry loop" tides).',
  "Ctrl+C stops an answer; Ctrl+C at the prompt (or twice quickly) quits.",
].join("\n");

export const chatCommand: Command = {
  name: "chat",
  summary: "Chat with your notes in the terminal (saved like the plugin's chats)",
  usage: "krypton chat <vault> [--mode none|rag|web|hybrid] [--agent [--yes]]",
  details: [
    CHAT_HELP,
    "Conversations are saved under <vault>/.krypton/chat/, the same store the plugin's chat view lists.",
    "Reads one message per line, so it also works with piped input:",
    '  printf "what is gradient descent?\\n/mode none\\nthanks\\n" | krypton chat ~/Notes',
  ].join("\n"),
  options: { ...CHAT_OPTIONS, ...CONFIG_OPTIONS },
  async run(args, ctx) {
    checkPositionals(args.positionals, 1);
    // The embedding server is checked once the index is opened (IndexPreparation), not before.
    const session = await openVaultSession(args.positionals[0], args, ctx, { probeEmbedder: false });
    try {
      return await chatLoop(session, ctx, stringOption(args, "conversation"), notePathOption(args, session), {
        agent: flag(args, "agent"),
        yes: flag(args, "yes"),
      });
    } finally {
      await session.close();
    }
  },
};

async function chatLoop(
  session: VaultSession,
  ctx: CommandContext,
  conversationId: string | undefined,
  activeNotePath: string | undefined,
  agentOptions: { agent: boolean; yes: boolean },
): Promise<number> {
  const { output } = ctx;
  const interactive = ctx.stdin.isTTY === true && ctx.stdout.isTTY === true;
  let mode: RetrievalMode = session.config.settings.defaultMode;
  let agent = agentOptions.agent;
  let failed = false;
  const once = new WarnOnce(output);
  const index = new IndexPreparation(session, once);

  const rl = readline.createInterface({
    input: ctx.stdin,
    output: interactive ? ctx.stdout : undefined,
    terminal: interactive,
    historySize: interactive ? 100 : 0,
  });
  // Take lines from now on: piped input may arrive (and end) while the index is still being prepared.
  const lines = rl[Symbol.asyncIterator]();
  // On a terminal readline owns Ctrl+C (raw mode): hand it to the same routing as the process signal.
  rl.on("SIGINT", () => ctx.interrupts.fire());
  // Ctrl+C with no answer running ends the chat.
  const releaseQuit = ctx.interrupts.push(() => rl.close());

  try {
    await withAbortOnInterrupt(ctx, (signal) => index.prepare(mode, agent, signal));
    // Through `once`: each /agent on calls it again, and a failing server's warning would repeat.
    if (agent) await connectMcpServers(session, once.output);
    const confirm = cliConfirm(ctx, { yes: agentOptions.yes, rl: interactive ? rl : undefined });

    if (interactive) {
      output.info(`Krypton chat on ${session.root} (mode ${mode}${agent ? ", agent" : ""}). ${CHAT_HELP}`);
      rl.setPrompt("you › ");
      rl.prompt();
    }
    for (;;) {
      const next = await lines.next();
      if (next.done) break;
      const line = next.value.trim();
      if (line.startsWith("/")) {
        const [name, ...rest] = line.slice(1).split(/\s+/);
        const command = name.toLowerCase();
        if (command === "quit" || command === "exit" || command === "q") break;
        if (command === "new") {
          if (conversationId) output.info(savedLine(conversationId));
          conversationId = undefined;
          output.info("New conversation.");
        } else if (command === "mode") {
          let chosen: RetrievalMode | null = null;
          try {
            chosen = checkMode(rest.join(" "), "/mode");
          } catch (err) {
            output.error((err as Error).message);
          }
          if (chosen) {
            mode = chosen;
            output.info(`Mode: ${mode}`);
            // Switching to a retrieval mode may need the index opened now (nothing when it already is).
            await withAbortOnInterrupt(ctx, (signal) => index.prepare(mode, agent, signal));
          }
        } else if (command === "agent") {
          const arg = rest.join(" ").toLowerCase();
          agent = arg === "" ? !agent : arg === "on";
          output.info(`Agent mode: ${agent ? "on" : "off"}`);
          if (agent) {
            await withAbortOnInterrupt(ctx, (signal) => index.prepare(mode, true, signal));
            await connectMcpServers(session, once.output);
          }
        } else if (command === "steps") {
          printSteps(output, session.core.agent.lastTurn(conversationId)?.steps ?? []);
        } else if (command === "log") {
          printExchange(output, session.core.agent.lastTurn(conversationId));
        } else if (command === "tools") {
          printTools(output, session.core.agent);
        } else if (command === "config") {
          output.line(session.core.agent.describeConfig());
          output.line(`Agent mode: ${agent ? "on" : "off"}; retrieval mode: ${mode}`);
        } else if (command === "run") {
          // A run that failed or stopped at a limit counts as a failed answer does (flow run exits 1 for both).
          if ((await runWorkflowInChat(session, line, activeNotePath, confirm, ctx, index, once)) === "failed") failed = true;
        } else if (command === "help") {
          output.info(CHAT_HELP);
        } else {
          output.error(`unknown command /${name}. ${CHAT_HELP}`);
        }
      } else if (line !== "") {
        const controller = new AbortController();
        const releaseStop = ctx.interrupts.push(() => controller.abort());
        try {
          const events = session.core.chat.send(line, {
            mode,
            conversationId,
            activeNotePath,
            signal: controller.signal,
            ...(agent ? { agent: true, confirm } : {}),
          });
          const answer = await consumeAnswer(events, mode, output, {
            stream: true,
            once,
            ...(agent ? { agentKeywordOnly: () => index.agentKeywordOnly() } : {}),
          });
          conversationId = answer.conversationId ?? conversationId;
          const failure = answerFailure(answer);
          if (failure) {
            failed = true;
            output.error(failure);
          }
        } finally {
          releaseStop();
        }
        if (interactive) output.line();
      }
      if (interactive) rl.prompt();
    }
  } finally {
    releaseQuit();
    rl.close();
  }
  // Also after Ctrl+C at the prompt: the user learns where the conversation went and how to go on with it.
  if (conversationId) output.info(savedLine(conversationId));
  // Scripts piping messages in learn from the exit code whether every answer worked.
  return failed && !interactive ? EXIT_FAILURE : EXIT_OK;
}

/** Where a conversation went and how to go on with it: said when the chat ends and when /new leaves one. */
function savedLine(conversationId: string): string {
  return `Saved conversation ${conversationId} in .krypton/chat/ (continue with --conversation ${conversationId})`;
}

/**
 * `/run <flow> <input>`: progress on stderr, the result on stdout; not part of the conversation. Why a
 * step's search matched by keywords only goes through the chat's WarnOnce: said once per chat, like an answer's.
 * "failed" when the run failed or stopped at a limit; a usage slip or an unknown flow only says so, as /mode does.
 */
async function runWorkflowInChat(
  session: VaultSession,
  line: string,
  activeNotePath: string | undefined,
  confirm: ConfirmPort | undefined,
  ctx: CommandContext,
  index: IndexPreparation,
  once: WarnOnce,
): Promise<"failed" | undefined> {
  const { output } = ctx;
  const run = parseRunCommand(line);
  const workflows = session.core.workflows;
  let input = run?.input ?? "";
  if (!input && activeNotePath) input = (await session.core.host.vault.readNote(activeNotePath).catch(() => undefined)) ?? "";
  if (!run || !run.ref || !input.trim()) {
    output.error('usage: /run <workflow note or id> <input>, e.g. /run "Retry loop" tides');
    return undefined;
  }
  const found = await workflows.flowNamed(run.ref);
  if ("error" in found) {
    output.error(found.error);
    for (const e of found.issues) output.error(`${e.pointer}: ${e.message}`);
    return undefined;
  }
  const flow = found.flow;
  await withAbortOnInterrupt(ctx, (signal) => index.prepareFlow(flow, signal));
  const controller = new AbortController();
  const release = ctx.interrupts.push(() => controller.abort());
  try {
    const result = await workflows.run(flow, input, {
      signal: controller.signal,
      confirm,
      onStep: (step, phase) => {
        if (phase === "end") output.info(`  ${flowStepLine(step, 0).replace(/^1\. /, "")}`);
      },
    });
    const text = resultText(result);
    if (text) output.out(text.replace(/\n?$/, "\n"));
    for (const remark of result.keywordOnlyRemarks ?? []) once.warn(remark);
    const summary = `${flow.id}: ${result.status} (${result.steps.map((s) => s.agent).join(" → ")})`;
    if (result.status === "finished") output.info(summary);
    else output.error(`${summary}: ${result.message}`);
    // Stopped with Ctrl+C is the user's choice, as a stopped answer is; the chat goes on.
    return result.status === "finished" || result.status === "stopped" ? undefined : "failed";
  } finally {
    release();
  }
}
