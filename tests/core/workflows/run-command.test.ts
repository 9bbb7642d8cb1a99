import { parseRunCommand } from "../../../src/core/workflows/run-command";

describe("parseRunCommand", () => {
  it("reads a quoted or bare flow name and the input", () => {
    expect(parseRunCommand('/run "Retry loop" tides and moons')).toEqual({ ref: "Retry loop", input: "tides and moons" });
    expect(parseRunCommand("/run 'Decision tree'")).toEqual({ ref: "Decision tree", input: "" });
    expect(parseRunCommand("/run retry-loop  multi\nline")).toEqual({ ref: "retry-loop", input: "multi\nline" });
    expect(parseRunCommand("/RUN x y")).toEqual({ ref: "x", input: "y" });
    expect(parseRunCommand("/run")).toEqual({ ref: "", input: "" });
  });
  it("ignores everything else", () => {
    expect(parseRunCommand("/runner x")).toBeNull();
    expect(parseRunCommand("run x")).toBeNull();
  });
});
