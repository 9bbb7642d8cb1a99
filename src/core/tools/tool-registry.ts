// STUB: replaced by the MCP work (issue 6).
import type { ToolDefinition } from "./tool";

export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  register(tool: ToolDefinition): void {
    this.tools.set(tool.name, tool);
  }
  list(): ToolDefinition[] {
    return [...this.tools.values()];
  }
}
