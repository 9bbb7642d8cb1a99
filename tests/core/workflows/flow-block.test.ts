/**
 * Reading a flow from a note: a JSON mistake is pointed at by its line and column in the note, on every
 * engine (V8 gives no position for "Unexpected token", JavaScriptCore words its errors its own way).
 */
import { jsonErrorOffset } from "../../../src/core/workflows/flow-block";
import { parseFlowSource } from "../../../src/core/workflows/workflow-service";

const note = (json: string) => `---\ntags: [workflow]\n---\n# My flow\n\n\`\`\`krypton-flow\n${json}\n\`\`\`\n`;

describe("a flow note with broken JSON", () => {
  it.each([
    ["a trailing comma in a list", '{\n  "id": "x",\n  "agents": [{ "name": "a" },],\n  "transitions": []\n}', 9, 30],
    ["a missing comma between fields", '{\n  "id": "x"\n  "agents": []\n}', 9, 3],
    ["a bare word", '{\n  "id": "x",\n  "agents": tru\n}', 9, 13],
    ["the block ends too early", '{\n  "id": "x",', 8, 13],
  ])("%s: the message names the line and column in the note", (_what, json, line, column) => {
    const parsed = parseFlowSource(note(json), "Flow.md");
    expect(parsed.json).toBeNull();
    expect(parsed.error).toMatch(new RegExp(`^Flow\\.md: the flow is not valid JSON at line ${line}, column ${column}: `));
  });

  it("a .json file counts from its first line", () => {
    expect(parseFlowSource('{\n"id": "x",\n}', "flow.json").error).toMatch(/^flow\.json: the flow is not valid JSON at line 3, column 1: /);
  });

  it("finds no mistake in valid JSON, and survives nesting deeper than the call stack", () => {
    expect(jsonErrorOffset('{"a":"\\u00e9\\n","b":[1,-2.5e3,true,false,null,{},[]]}')).toBeNull();
    expect(jsonErrorOffset("[".repeat(200_000))).toBe(200_000);
  });
});
