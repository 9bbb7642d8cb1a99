// The "use login-shell PATH" option: PATH comes from `$SHELL -lc` (a real shell process), merged into the
// SDK's default environment, and a stdio server really starts with it.
import { chmodSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { tempDirForFile } from "../support/temp-dirs";
import { McpClientManager } from "../../src/core/mcp-client/mcp-client-manager";
import { EMPTY_SERVER } from "../../src/core/mcp-client/server-config";
import { ToolRegistry } from "../../src/core/tools/tool-registry";
import { loginShellPath, mergePaths } from "../../src/node/login-shell-path";
import { createStdioTransportFactory, environmentFor } from "../../src/node/mcp-stdio-transport";
import { bundleForNode } from "../mcp/support/bundle";

const posix = process.platform !== "win32";
const dir = tempDirForFile("krypton-shell-");

/** A fake login shell: profile noise on stdout, its own PATH, then runs the command it was given (-lc CMD). */
function fakeShell(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

(posix ? describe : describe.skip)("loginShellPath", () => {
  it("reads PATH from the login shell, ignoring what profile scripts print", async () => {
    const shell = fakeShell("zsh", 'echo "Welcome back!"\nPATH=/opt/homebrew/bin:/usr/bin\nexport PATH\nexec /bin/sh -c "$2"');
    expect(await loginShellPath({ shell })).toBe("/opt/homebrew/bin:/usr/bin");
  });

  it("gives null when the shell fails or hangs (never blocks a server's start for long)", async () => {
    expect(await loginShellPath({ shell: fakeShell("broken", "exit 3") })).toBeNull();
    expect(await loginShellPath({ shell: fakeShell("slow", "sleep 5"), timeoutMs: 200 })).toBeNull();
    expect(await loginShellPath({ shell: join(dir, "no-such-shell") })).toBeNull();
  });
});

it("merges PATHs: the login shell's entries first, no duplicates", () => {
  expect(mergePaths("/opt/bin:/usr/bin", "/usr/bin:/bin")).toBe("/opt/bin:/usr/bin:/bin");
  expect(mergePaths(null, "/bin")).toBe("/bin");
});

it("builds the environment from the SDK defaults, the login PATH and the server's env only", async () => {
  process.env.KRYPTON_TEST_PARENT_SECRET = "parent-only";
  try {
    const env = await environmentFor({ ...EMPTY_SERVER, name: "a", command: "x", env: { API_KEY: "k" }, useLoginShellPath: true }, async () => "/opt/login/bin");
    expect(env.PATH.split(delimiter)[0]).toBe("/opt/login/bin");
    expect(env.API_KEY).toBe("k");
    expect(env.KRYPTON_TEST_PARENT_SECRET).toBeUndefined();
    const without = await environmentFor({ ...EMPTY_SERVER, name: "a", command: "x", useLoginShellPath: false }, async () => "/opt/login/bin");
    expect(without.PATH ?? "").not.toContain("/opt/login/bin");
  } finally {
    delete process.env.KRYPTON_TEST_PARENT_SECRET;
  }
});

it("starts a stdio server with the login-shell PATH", async () => {
  const entry = await bundleForNode(join(__dirname, "..", "mcp", "fixtures", "remote-stdio-server.ts"), "remote-stdio-server.cjs");
  const registry = new ToolRegistry();
  const manager = new McpClientManager({ registry, fetch, stdio: createStdioTransportFactory({ loginPath: async () => "/opt/login/bin" }) });
  try {
    const [status] = await manager.apply([{ ...EMPTY_SERVER, name: "demo", command: process.execPath, args: [entry], useLoginShellPath: true }]);
    expect(status.state).toBe("ready");
    const { text } = await registry.call("demo:show_env", { name: "PATH" });
    expect(text.split(delimiter)[0]).toBe("/opt/login/bin");
  } finally {
    await manager.close();
  }
});
