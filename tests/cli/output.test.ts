import { createOutput, progressLine } from "../../src/cli/output";
import type { IndexStatus } from "../../src/core/indexing/index-status";

function stream(isTTY: boolean) {
  const chunks: string[] = [];
  return { chunks, text: () => chunks.join(""), write: (t: string) => chunks.push(t), isTTY, columns: 80 };
}

const indexing: IndexStatus = {
  state: "indexing",
  notes: 0,
  chunks: 0,
  embedded: 0,
  keywordOnly: false,
  embedder: null,
  failures: [],
  progress: { done: 1234, total: 10000, phase: "embedding" },
};

describe("CLI output", () => {
  it("draws a progress bar on a terminal's stderr and clears it before the next line", () => {
    const out = stream(false);
    const err = stream(true);
    const o = createOutput(out, err);
    o.progress(progressLine(indexing));
    expect(err.text()).toContain("Indexing [");
    expect(err.text()).toContain("1,234 / 10,000 chunks (embedding)");
    o.line("result");
    expect(out.text()).toBe("result\n");
    expect(err.chunks[err.chunks.length - 1]).toBe("\r\x1b[2K");
  });

  it("draws no progress when stderr is not a terminal (logs and pipes stay clean)", () => {
    const err = stream(false);
    const o = createOutput(stream(false), err);
    o.progress(progressLine(indexing));
    o.clearProgress();
    expect(err.text()).toBe("");
  });

  it("masks every known secret on stdout and stderr, except in the one-time token reveal", () => {
    const out = stream(false);
    const err = stream(false);
    const o = createOutput(out, err);
    o.addSecrets(["sk-secret-value", "abc"]);
    o.line("key is sk-secret-value");
    o.json({ key: "sk-secret-value" });
    o.error("failed with sk-secret-value");
    o.revealOnce("token: tok-shown-once");
    expect(out.text()).not.toContain("sk-secret-value");
    expect(out.text()).toContain("key is ***");
    expect(err.text()).toContain("krypton: failed with ***");
    expect(err.text()).toContain("token: tok-shown-once");
    // Values too short to be secrets are not masked (they would mangle ordinary words).
    o.line("abc");
    expect(out.text()).toContain("abc\n");
  });

  it("uses colour only on a terminal, and never with NO_COLOR", () => {
    expect(createOutput(stream(true), stream(true), {}).bold("x")).not.toBe("x");
    expect(createOutput(stream(true), stream(true), { NO_COLOR: "1" }).bold("x")).toBe("x");
    expect(createOutput(stream(false), stream(true), {}).bold("x")).toBe("x");
  });

  it("formats the progress line with a proportional bar", () => {
    const line = progressLine({ ...indexing, progress: { done: 5, total: 10, phase: "chunking" } }, 10);
    expect(line).toBe("Indexing [█████░░░░░] 5 / 10 notes (chunking)");
  });
});
