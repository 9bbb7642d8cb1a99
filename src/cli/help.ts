import type { OptionSpecs } from "./args";
import type { Command } from "./command";

export function mainHelp(commands: readonly Command[], version: string): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `krypton ${version}: a brain on top of your Obsidian vault, from the terminal`,
    "",
    "Usage: krypton <command> <vault> [arguments] [options]",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Run `krypton <command> --help` for a command's options.",
    "",
    "Settings: the vault's .obsidian/plugins/krypton/data.json (the plugin's own settings), then",
    "environment variables, then flags. Environment:",
    "  KRYPTON_OLLAMA_URL, KRYPTON_CHAT_PROVIDER, KRYPTON_CHAT_MODEL, KRYPTON_EMBEDDING_PROVIDER,",
    "  KRYPTON_EMBEDDING_MODEL, KRYPTON_GEMINI_BASE_URL, KRYPTON_TAVILY_BASE_URL, KRYPTON_MODE,",
    "  KRYPTON_REQUEST_TIMEOUT_MS, KRYPTON_CONNECT_TIMEOUT_MS, KRYPTON_OLLAMA_MAX_CONTEXT (tokens),",
    "  KRYPTON_NEW_NOTE_FOLDER, KRYPTON_CONFIG_DIR,",
    "  GEMINI_API_KEY, TAVILY_API_KEY, MCP_PORT, KRYPTON_MCP_TOKEN, KRYPTON_DEBUG=1 (stack traces).",
    "",
    "Output: results on stdout (pipe --json output to other tools), progress and warnings on stderr.",
    "Exit codes: 0 done, 1 could not do the job, 2 wrong arguments, 130 interrupted.",
    "",
  ].join("\n");
}

export function commandHelp(command: Command, options: OptionSpecs): string {
  const lines = [`Usage: ${command.usage}`, "", command.summary, ""];
  if (command.details) lines.push(command.details.trimEnd(), "");
  lines.push("Options:");
  const labels = Object.entries(options).map(([name, spec]) => {
    const short = spec.short ? `-${spec.short}, ` : "    ";
    return [`${short}--${name}${spec.value ? ` ${spec.value}` : ""}`, spec.description] as const;
  });
  const width = Math.max(...labels.map(([label]) => label.length));
  for (const [label, description] of labels) lines.push(`  ${label.padEnd(width)}  ${description}`);
  lines.push("");
  return lines.join("\n");
}
