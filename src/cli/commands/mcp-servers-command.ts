import { formatToolsByServer } from "../../core/mcp-client/tools-listing";
import { flag } from "../args";
import type { Command } from "../command";
import { CONFIG_OPTIONS } from "../config";
import { EXIT_FAILURE, EXIT_OK } from "../errors";
import { connectMcpServers, openVaultSession } from "../vault-session";
import { checkPositionals } from "./command-helpers";

/** Lists the user's MCP servers (the ones agent mode uses) with their tools, after connecting them. */
export const mcpServersCommand: Command = {
  name: "mcp-servers",
  summary: "Connect the MCP servers from the settings and list their tools",
  usage: "krypton mcp-servers <vault> [--json]",
  details: [
    "Reads the servers from the vault's Krypton settings (data.json), connects the enabled ones and lists",
    "each server's tools as agent mode sees them (server:tool). A server that cannot start is shown with",
    "its error (HTTP status, or the last lines it wrote to stderr). Exit code 1 when any enabled server failed.",
    "Header and env values Obsidian keeps in its secret storage come from KRYPTON_MCP_<SERVER>_<NAME>.",
  ].join("\n"),
  options: {
    json: { type: "boolean", description: "Print the servers and their tools as JSON" },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    checkPositionals(args.positionals, 1);
    const session = await openVaultSession(args.positionals[0], args, ctx, { probeEmbedder: false });
    try {
      const statuses = await connectMcpServers(session, ctx.output);
      const groups = session.core.mcp.listTools();
      if (flag(args, "json")) ctx.output.json({ servers: statuses, tools: groups });
      else ctx.output.line(formatToolsByServer(groups));
      return statuses.some((s) => s.state === "failed" || s.state === "unsupported") ? EXIT_FAILURE : EXIT_OK;
    } finally {
      await session.close();
    }
  },
};
