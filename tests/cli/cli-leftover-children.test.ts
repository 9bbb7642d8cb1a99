/**
 * A CLI test that fails partway leaves its long-running child (`krypton mcp --http`, a chat, an index run)
 * behind, and jest then reports a worker that "failed to exit gracefully". The CLI test bed stops every
 * child the harness started that is still running after each test.
 */
import { useCliTestBed } from "../support/cli-test-bed";
import { runCli } from "./cli-harness";

describe("children left running by a test", () => {
  const bed = useCliTestBed({ notes: { "Note.md": "# Note\n" } });
  let pid = 0;

  it("a test ends with its server still running, as one that fails partway does", async () => {
    let listening!: () => void;
    const ready = new Promise<void>((resolve) => (listening = resolve));
    void runCli(["mcp", bed.vault.root, "--http", "--port", "0"], {
      env: { ...bed.env, KRYPTON_MCP_TOKEN: "a-user-chosen-token-0123456789" },
      onSpawn: (child) => {
        pid = child.pid ?? 0;
        child.stderr.on("data", (d: Buffer) => {
          if (/on http:\/\/127\.0\.0\.1:\d+\/mcp/.test(d.toString())) listening();
        });
      },
    });
    await ready;
    expect(pid).toBeGreaterThan(0);
  });

  it("the next test finds it stopped", () => {
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });
});
