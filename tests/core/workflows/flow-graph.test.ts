import { flowToMermaid, describeCondition } from "../../../src/core/workflows/flow-graph";
import { validateFlow } from "../../../src/core/workflows/flow-validate";

export const AWKWARD_FLOW = {
  id: "awkward",
  defaultModel: "ollama/llama3.1:8b",
  agents: [
    { name: "end", type: "task", params: { task: "t" } },
    { name: 'say "hi" [now] {x} (y)', type: "verify", params: { task: "v" } },
    { name: "a|b #1 <b>", type: "transform", params: {} },
    { name: "graph", type: "task", params: { task: "t" } },
  ],
  transitions: [
    { from: "end", to: 'say "hi" [now] {x} (y)' },
    { from: 'say "hi" [now] {x} (y)', to: "a|b #1 <b>", condition: { variable: "input.feedback", operation: "equals", value: 'he said "no" | [x]' } },
    { from: 'say "hi" [now] {x} (y)', to: "graph" },
    { from: "a|b #1 <b>", to: "__finish__" },
  ],
};

describe("flowToMermaid", () => {
  it("uses generated ids and HTML-entity labels, so no name can break the syntax", () => {
    const flow = validateFlow(AWKWARD_FLOW).flow!;
    const text = flowToMermaid(flow);
    expect(text.split("\n")).toEqual([
      "flowchart TD",
      '  start(("Start")) --> a0',
      '  a0["end"]',
      '  a1{"say &quot;hi&quot; [now] {x} (y) (verify)"}',
      '  a2[/"a|b #1 &lt;b&gt; (transform)"/]',
      '  a3["graph"]',
      "  a0 --> a1",
      '  a1 -->|"feedback = &quot;he said \\&quot;no\\&quot; | [x]&quot;"| a2',
      "  a1 --> a3",
      "  a2 --> finish",
      "  a3 --> finish",
      '  finish(("Finish"))',
    ]);
  });

  it("describes nested conditions", () => {
    expect(describeCondition({ operation: "and", conditions: [{ variable: "input.data", operation: "more_or_equal", value: 50 }, { operation: "not", condition: { variable: "input.success", operation: "equals", value: true } }] })).toBe(
      "output ≥ 50 and not (success = true)",
    );
  });
});
