/**
 * Ready-to-copy client set-ups, shown in settings (the token is the user's own copy). Two ways in:
 * through the bridge inside Obsidian (HTTP, needs the token) and standalone over stdio (`krypton mcp
 * <vault>`: the client starts Krypton's command line itself; Obsidian need not run).
 */

/** Pinned: 2.12.0 runs on Node 20 and has --header; a bare `npx @modelcontextprotocol/inspector` may resolve one without it. */
export const INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector@2.12.0";

/**
 * Claude Desktop starts local servers over stdio, so it reaches an HTTP bridge through the `mcp-remote`
 * adapter; the token travels in an environment variable (no spaces in args: Windows quoting breaks them).
 */
export function claudeDesktopConfig(url: string, token: string): string {
  const config = {
    mcpServers: {
      krypton: {
        command: "npx",
        args: ["-y", "mcp-remote", url, "--header", "Authorization:${KRYPTON_AUTH}"],
        env: { KRYPTON_AUTH: `Bearer ${token}` },
      },
    },
  };
  return JSON.stringify(config, null, 2);
}

/** Claude Desktop starting `krypton mcp <vault>` itself over stdio (needs the `krypton` command line installed). */
export function claudeDesktopStdioConfig(vaultRoot: string): string {
  return JSON.stringify({ mcpServers: { krypton: { command: "krypton", args: ["mcp", vaultRoot] } } }, null, 2);
}

/** The MCP Inspector's command-line mode against the bridge. */
export function inspectorCommand(url: string, token: string): string {
  return `npx ${INSPECTOR_PACKAGE} --cli ${url} --transport http --header "Authorization: Bearer ${token}" --method tools/list`;
}

/** The MCP Inspector's command-line mode starting `krypton mcp <vault>` over stdio. */
export function inspectorStdioCommand(vaultRoot: string): string {
  return `npx ${INSPECTOR_PACKAGE} --cli krypton mcp ${shellQuote(vaultRoot)} --method tools/list`;
}

export function bridgeUrl(port: number): string {
  return `http://127.0.0.1:${port}/mcp`;
}

/** Double quotes work in POSIX shells, PowerShell and cmd; inside them only " $ ` \ need escaping (POSIX). */
function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `"${value.replace(/(["$`\\])/g, "\\$1")}"`;
}
