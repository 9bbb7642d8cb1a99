import type { McpServerTools } from "./mcp-client-manager";
import { countOf } from "../util/text";

/**
 * The MCP servers' tools as text, grouped by server, for `/tools` in the chat view and `krypton chat`,
 * and `krypton mcp-servers`. Failed servers show why; disabled ones say so.
 */
export function formatToolsByServer(groups: readonly McpServerTools[], options: { descriptions?: boolean } = {}): string {
  if (groups.length === 0) return "No MCP servers configured.";
  const lines: string[] = [];
  for (const group of groups) {
    switch (group.state) {
      case "ready":
        lines.push(`${group.server}: ${countOf(group.tools.length, "tool")}`);
        for (const tool of group.tools) {
          const description = options.descriptions !== false && tool.description ? ` - ${tool.description.split("\n")[0].trim()}` : "";
          lines.push(`  ${tool.name}${tool.wireName !== tool.name.replace(":", "__") ? ` (as ${tool.wireName})` : ""}${description}`);
        }
        break;
      case "disabled":
        lines.push(`${group.server}: disabled`);
        break;
      case "connecting":
        lines.push(`${group.server}: connecting…`);
        break;
      default:
        lines.push(`${group.server}: ${group.state === "unsupported" ? "not available here" : "failed"}: ${group.error ?? "unknown error"}`);
    }
  }
  return lines.join("\n");
}
