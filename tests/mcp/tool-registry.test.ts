// The registry every host calls tools through: lookup, argument checks, and errors a person can act on.
import { z } from "zod";
import { AgentError } from "../../src/core/notes/agent-error";
import { describeTools } from "../../src/core/mcp/mcp-server";
import { generateMcpToken, mcpTokenProblem } from "../../src/core/mcp/mcp-token";
import { NoteExistsError, NoteNotFoundError } from "../../src/core/ports/vault";
import { ProviderError } from "../../src/core/providers/provider-error";
import { ToolError } from "../../src/core/tools/tool";
import { defineTool, ToolRegistry } from "../../src/core/tools/tool-registry";

function registryThrowing(error: unknown): ToolRegistry {
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: "t",
      title: "T",
      description: "test",
      inputSchema: {
        n: z.number().int().min(1).max(5).optional(),
        s: z.string().optional(),
        b: z.boolean().default(false),
        x: z.number().nullable().optional(),
      },
      outputSchema: { ok: z.boolean() },
      run: (input) => (error === undefined ? Promise.resolve({ structured: { ok: true, input }, text: "ok" }) : Promise.reject(error)),
    }),
  );
  return registry;
}

describe("ToolRegistry", () => {
  it("registers, lists and gets tools; refuses a duplicate name", () => {
    const registry = registryThrowing(undefined);
    expect(registry.list().map((t) => t.name)).toEqual(["t"]);
    expect(registry.get("t")?.title).toBe("T");
    expect(registry.get("nope")).toBeUndefined();
    expect(() => registry.register(registry.get("t")!)).toThrow("already registered");
  });

  it("passes validated input (unknown keys dropped) and returns the tool's output", async () => {
    const out = await registryThrowing(undefined).call("t", { n: 2, extra: "dropped" });
    expect(out).toEqual({ structured: { ok: true, input: { n: 2, b: false } }, text: "ok" });
  });

  // Small models quote scalars; what they meant is unambiguous, so it is read as such.
  it.each([
    [{ n: "5", b: "true" }, { n: 5, b: true }],
    [{ n: "1", b: "false", x: "-0.25" }, { n: 1, b: false, x: -0.25 }],
    [{ x: "1e3", s: "7" }, { x: 1000, s: "7", b: false }],
  ])("reads quoted numbers and booleans %j as meant", async (args, input) => {
    const out = await registryThrowing(undefined).call("t", args);
    expect(out.structured).toEqual({ ok: true, input });
  });

  it("still shows number and boolean fields as such in the schema MCP clients get", () => {
    const [tool] = describeTools(registryThrowing(undefined));
    expect(tool?.inputSchema.properties).toMatchObject({ n: { type: "integer" }, b: { type: "boolean", default: false }, s: { type: "string" } });
  });

  it.each([
    [[1], "Arguments for t must be a JSON object"],
    ["n=1", "Arguments for t must be a JSON object"],
    [{ n: "five" }, 'Invalid parameter n: expected a number, got "five"'],
    [{ n: " 1" }, 'Invalid parameter n: expected a number, got " 1"'],
    [{ n: "9" }, "Invalid parameter n: must be at most 5"],
    [{ n: "1.5" }, "Invalid parameter n: expected a whole number, got 1.5"],
    [{ b: "yes" }, 'Invalid parameter b: expected a boolean, got "yes"'],
    [{ b: "True" }, 'Invalid parameter b: expected a boolean, got "True"'],
    [{ n: 9 }, "Invalid parameter n: must be at most 5"],
    [{ s: { a: 1 } }, "Invalid parameter s: expected a string, got a object"],
  ])("refuses arguments %j: %s", async (args, message) => {
    await expect(registryThrowing(undefined).call("t", args)).rejects.toEqual(new ToolError(message, "invalid-input"));
  });

  it.each([
    [new NoteNotFoundError("a.md"), "Note not found: a.md", "not-found"],
    [new NoteExistsError("a.md"), "A file already exists at a.md; Krypton never overwrites a note", "refused"],
    [new AgentError("No notes match 'x'", "not-found"), "No notes match 'x'", "not-found"],
    [new AgentError("No chat model is configured.", "no-model"), "No chat model is configured.", "failed"],
    [new ProviderError("unreachable", "Ollama is not reachable at http://localhost:11434"), "Ollama is not reachable at http://localhost:11434", "failed"],
    [Object.assign(new Error("aborted"), { name: "AbortError" }), "t was cancelled", "failed"],
    [new RangeError("bad thing\n    at x (/secret/path.ts:1:1)"), "t failed: bad thing", "failed"],
    ["a string", "t failed: a string", "failed"],
  ])("turns %p into a ToolError", async (thrown, message, code) => {
    const err = await registryThrowing(thrown).call("t", {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ message, code });
  });

  it("names the available tools for an unknown one", async () => {
    await expect(registryThrowing(undefined).call("rm_rf", {})).rejects.toMatchObject({ message: "Unknown tool: rm_rf. Available tools: t", code: "unknown-tool" });
  });
});

describe("MCP token", () => {
  it("is at least 128 random bits in base64url", () => {
    const a = generateMcpToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 bytes
    expect(generateMcpToken()).not.toBe(a);
    expect(mcpTokenProblem(a)).toBeNull();
  });

  it.each([[""], ["   "], [undefined], ["short"], ["has spaces in the token text"]])("refuses %p", (token) => {
    expect(mcpTokenProblem(token)).not.toBeNull();
  });
});
