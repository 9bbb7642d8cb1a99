// The chat view's agent commands (/steps, /log, /tools, /config, /help): plain text from the AgentService,
// rendered as a local message. The same information `krypton chat` prints (src/cli/commands/agent-cli.ts).
import type { AgentService } from "../../core/agent-loop/agent-service";
import { exchangeLogLines, NO_EXCHANGE_YET } from "../../core/agent-loop/exchange-log";

const COMMANDS = ["steps", "log", "tools", "config"] as const;

export function isAgentCommand(text: string): boolean {
  const name = /^\/(\w+)\s*$/.exec(text.trim())?.[1]?.toLowerCase();
  return name !== undefined && (COMMANDS as readonly string[]).includes(name);
}

/** Markdown for a command's output. */
export function agentCommandOutput(text: string, agent: AgentService, conversationId: string | undefined, agentMode: boolean): string {
  const name = text.trim().slice(1).toLowerCase();
  const turn = agent.lastTurn(conversationId);
  switch (name) {
    case "steps": {
      if (!turn || turn.steps.length === 0) return "No tool calls in the last agent answer of this conversation.";
      return turn.steps
        .map((s) => {
          const head = `**Step ${s.step}: \`${s.tool.name}\`** (${s.outcome}, ${s.durationMs} ms)`;
          const thought = s.thought ? `\n> ${s.thought.replace(/\n/g, "\n> ")}` : "";
          return `${head}${thought}\n${fence(JSON.stringify(s.tool.arguments, null, 2), "json")}\n${fence(s.result)}`;
        })
        .join("\n\n");
    }
    case "log": {
      if (!turn || turn.exchange.length === 0) return NO_EXCHANGE_YET;
      return `Raw exchange of the last agent answer (keys redacted):\n${fence(exchangeLogLines(turn.exchange, turn.limit).join("\n"))}`;
    }
    case "tools": {
      const lines: string[] = [];
      let group = "";
      for (const t of agent.describeTools()) {
        if (t.group !== group) {
          group = t.group;
          lines.push("", group === "built-in" ? "**Built-in**" : `**MCP server ${group}**`);
        }
        lines.push(`- \`${t.name}\`${t.write ? " (asks first)" : ""}: ${t.description}`);
      }
      return lines.join("\n").trim() || "No tools available.";
    }
    default:
      return fence(`${agent.describeConfig()}\nAgent mode: ${agentMode ? "on" : "off"}`);
  }
}

function fence(text: string, lang = ""): string {
  const ticks = /```/.test(text) ? "~~~~" : "```";
  return `${ticks}${lang}\n${text}\n${ticks}`;
}
