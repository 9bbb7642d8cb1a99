/** The MCP client: the user's own MCP servers as tools of the agent (see mcp-client-manager.ts). */
export { McpClientManager, MCP_CALL_TIMEOUT_MS, MCP_CONNECT_TIMEOUT_MS, MCP_INSTRUCTIONS_MAX_CHARS } from "./mcp-client-manager";
export type { McpClientManagerOptions, McpServerStatus, McpServerState, McpServerTools, McpTestResult, RemoteToolSummary } from "./mcp-client-manager";
export { McpConfigError, EMPTY_SERVER, normalizeServers, parseMcpServersJson, serverConfigProblem, serverSecrets, toMcpServersJson } from "./server-config";
export type { McpServerConfig } from "./server-config";
export { qualifiedToolName, wireNameFor, assignWireNames, WIRE_NAME_MAX } from "./tool-names";
export { resultText } from "./tool-result";
export type { OpenedTransport, StdioTransportFactory } from "./transports";
export { formatToolsByServer } from "./tools-listing";
