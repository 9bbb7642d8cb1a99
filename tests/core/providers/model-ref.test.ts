import { formatModelRef, parseModelRef } from "../../../src/core/providers/model-ref";

describe("parseModelRef", () => {
  it("splits at the first slash only", () => {
    expect(parseModelRef("ollama/llama3.1:8b")).toEqual({ provider: "ollama", model: "llama3.1:8b" });
    expect(parseModelRef(" gemini/gemini-2.5-flash ")).toEqual({ provider: "gemini", model: "gemini-2.5-flash" });
    expect(parseModelRef("ollama/hf.co/user/model:Q4")).toEqual({ provider: "ollama", model: "hf.co/user/model:Q4" });
    expect(formatModelRef({ provider: "ollama", model: "a/b" })).toBe("ollama/a/b");
  });
  it("explains what is wrong", () => {
    expect(parseModelRef("llama3.1:8b")).toEqual({ error: expect.stringMatching(/write provider\/model/) });
    expect(parseModelRef("ollama/")).toEqual({ error: expect.stringMatching(/not a model reference/) });
    expect(parseModelRef("openai/gpt-4o")).toEqual({ error: expect.stringMatching(/Unknown provider "openai".*ollama or gemini/) });
  });
});
