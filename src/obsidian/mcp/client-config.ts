/** Ready-to-copy client set-ups for the bridge, shown in settings (the token is the user's own copy). */

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

/** The MCP Inspector's command-line mode (2.12.0 runs on Node 20 and has --header). */
export function inspectorCommand(url: string, token: string): string {
  return `npx @modelcontextprotocol/inspector@2.12.0 --cli ${url} --transport http --header "Authorization: Bearer ${token}" --method tools/list`;
}

export function bridgeUrl(port: number): string {
  return `http://127.0.0.1:${port}/mcp`;
}
