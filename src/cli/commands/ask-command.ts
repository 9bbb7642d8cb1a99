import { flag, stringOption } from "../args";
import type { Command } from "../command";
import { CONFIG_OPTIONS } from "../config";
import { EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, UsageError } from "../errors";
import { connectMcpServers, openVaultSession } from "../vault-session";
import { answerFailure, answerJson, consumeAnswer } from "./answer-printer";
import { CHAT_OPTIONS } from "./chat-options";
import { cliConfirm } from "./agent-cli";
import { IndexPreparation, notePathOption } from "./command-helpers";
import { WarnOnce } from "../warn-once";

export const askCommand: Command = {
  name: "ask",
  summary: "Ask one question about your notes (or the web); the answer streams to stdout",
  usage: 'krypton ask <vault> "<question>" [--mode none|rag|web|hybrid] [--agent [--yes]] [--json]',
  details: [
    "Modes: none = the model only; rag = your notes; web = Tavily web search; hybrid = notes and web.",
    'Agents answer requests like "create a note on X", "find notes about X", "summarize my notes on X".',
    "The exchange is saved under <vault>/.krypton/chat/ like a chat in the plugin.",
    "--agent: the model calls tools (search_notes, read_note, list_notes, web_search, …) until it can answer;",
    "  writes (write_note, append_to_note) are asked on a terminal, allowed with --yes, refused otherwise.",
    "  An answer stopped at the step limit, the time limit or by the loop guard is printed and exits 1.",
    "",
    "Examples:",
    '  krypton ask ~/Notes "What did I decide about the database?"',
    '  krypton ask ~/Notes "create a note on gradient descent"',
    '  krypton ask ~/Notes "latest Ollama release?" --mode web --json',
    '  krypton ask ~/Notes "which of my project notes mention a deadline this month?" --agent',
  ].join("\n"),
  options: {
    ...CHAT_OPTIONS,
    json: { type: "boolean", description: "Print {answer, sources, mode} as JSON (agent result too)" },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    const [vault, ...words] = args.positionals;
    const question = words.join(" ").trim();
    if (vault === undefined) throw new UsageError("missing <vault> and <question>");
    if (question === "") throw new UsageError("missing <question>");
    const json = flag(args, "json");

    // The embedding server is checked only if the index is opened (IndexPreparation): agent mode whose tools
    // never search, or a plain answer without notes and intent agents, contacts no embedder.
    const session = await openVaultSession(vault, args, ctx, { probeEmbedder: false });
    try {
      const mode = session.config.settings.defaultMode;
      const controller = new AbortController();
      const release = ctx.interrupts.push(() => controller.abort());
      try {
        const agent = flag(args, "agent");
        const once = new WarnOnce(ctx.output);
        // Agent mode searches notes only through its tools: the index is opened when they may (the preset's).
        const index = new IndexPreparation(session, once);
        await index.prepare(mode, agent, controller.signal);
        // The user's MCP servers' tools join the agent's (a failing server is a warning, not a failure).
        if (agent) await connectMcpServers(session, once.output);
        const events = session.core.chat.send(question, {
          mode,
          conversationId: stringOption(args, "conversation"),
          activeNotePath: notePathOption(args, session),
          signal: controller.signal,
          ...(agent ? { agent: true, confirm: cliConfirm(ctx, { yes: flag(args, "yes") }) } : {}),
        });
        const answer = await consumeAnswer(events, mode, ctx.output, {
          stream: !json,
          once,
          ...(agent ? { agentKeywordOnly: () => index.agentKeywordOnly() } : {}),
        });
        if (json) ctx.output.json(answerJson(answer, { agent }));
        const failed = answerFailure(answer);
        if (failed) {
          ctx.output.error(failed);
          return EXIT_FAILURE;
        }
        return answer.stopped || controller.signal.aborted ? EXIT_INTERRUPTED : EXIT_OK;
      } finally {
        release();
      }
    } finally {
      await session.close();
    }
  },
};
