/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
import type { AgentStep, ConfirmDecision } from "../../../src/core/agent-loop/agent-types";
import { type Fixture, Gate, mountChatView, typeAndEnter } from "./chat-view-fixture";
import { OllamaChatModel } from "../../../src/core/providers/ollama/ollama-chat-model";
import { nodeClock } from "../../../src/node/node-clock";
import { FAST_RETRY, nodeFetch } from "../../core/providers/provider-fixtures";
import { startOllamaServer } from "../../support/servers/ollama-server";

let f: Fixture;
afterEach(async () => {
  await f?.close();
});

const lastAnswer = () => {
  const answers = f.$$(".krypton-message-assistant");
  return answers[answers.length - 1];
};

const step = (n: number, tool: string, outcome: AgentStep["outcome"] = "ok"): AgentStep => ({
  step: n,
  tool: { name: tool, arguments: { path: "Projects/Plan.md" } },
  result: outcome === "ok" ? "# Plan\n\nShip it." : "Note not found: Projects/Plan.md",
  isError: outcome !== "ok",
  outcome,
  durationMs: 12,
  thought: n === 1 ? "I should read the plan." : undefined,
});

describe("chat view: agent mode", () => {
  it("the Agent toggle is saved in settings and sends agent requests with a confirmation callback", async () => {
    f = await mountChatView();
    const toggle = f.$(".krypton-agent-toggle input") as HTMLInputElement;
    expect(toggle.checked).toBe(false);
    typeAndEnter(f, "plain question");
    await f.settle();
    expect(f.chat.calls[0].options.agent).toBeUndefined();

    toggle.checked = true;
    toggle.dispatchEvent(new Event("change"));
    await f.settle();
    expect(f.settings.agentMode).toBe(true);
    typeAndEnter(f, "agent question");
    await f.settle();
    expect(f.chat.calls[1].options).toMatchObject({ agent: true, confirm: expect.any(Function) });
  });

  it("shows the steps collapsed under the answer, with token usage, and takes back thinking-aloud text", async () => {
    f = await mountChatView({ settings: { agentMode: true } });
    f.chat.script(
      { type: "token", text: "Let me look." },
      { type: "retract", text: "Let me look." },
      { type: "step", step: step(1, "read_note") },
      { type: "step", step: step(2, "read_note", "blocked") },
      { type: "token", text: "The plan is to ship it." },
      { type: "usage", usage: { promptTokens: 1200, completionTokens: 34 } },
    );
    typeAndEnter(f, "What is my plan?");
    await f.settle();

    const answer = lastAnswer();
    expect(answer.querySelector(".krypton-message-body")!.textContent).toBe("The plan is to ship it.");
    const details = answer.querySelector("details.krypton-steps") as HTMLDetailsElement;
    expect(details.open).toBe(false);
    expect(details.querySelector("summary")!.textContent).toBe("Steps (2) · 1,234 tokens");
    const items = [...details.querySelectorAll(".krypton-step")];
    expect(items.map((i) => i.querySelector(".krypton-step-tool")!.textContent)).toEqual(["read_note", "read_note"]);
    expect(items[0].querySelector(".krypton-step-thought")!.textContent).toBe("I should read the plan.");
    expect(items[0].querySelector(".krypton-step-args")!.textContent).toContain('"path": "Projects/Plan.md"');
    expect(items[1].querySelector(".krypton-step-meta")!.textContent).toBe("blocked (repeated) · 12 ms");
  });

  it("asks before a write: preview, three buttons; the choice goes back to the loop", async () => {
    f = await mountChatView({ settings: { agentMode: true } });
    const decided: ConfirmDecision[] = [];
    const preview = ["--- Projects/Plan.md", "+++ Projects/Plan.md", "@@ -1,1 +1,2 @@", " # Plan", "+- [ ] README"].join("\n");
    f.chat.script({ confirm: { tool: "append_to_note", arguments: {}, title: "Append 1 line to Projects/Plan.md", preview }, decided }, { type: "token", text: "Nothing changed." });
    typeAndEnter(f, "Add README to my plan");
    await f.settle();

    const box = lastAnswer().querySelector(".krypton-confirm") as HTMLElement;
    expect(box.querySelector(".krypton-confirm-title")!.textContent).toBe("Append 1 line to Projects/Plan.md");
    expect(box.querySelector(".is-added")!.textContent).toBe("+- [ ] README\n");
    const buttons = [...box.querySelectorAll("button")].map((b) => b.textContent);
    expect(buttons).toEqual(["Allow once", "Allow for this conversation", "Deny"]);
    expect(decided).toEqual([]);

    ([...box.querySelectorAll("button")].find((b) => b.textContent === "Deny") as HTMLButtonElement).click();
    await f.settle();
    expect(decided).toEqual(["deny"]);
    expect(lastAnswer().querySelector(".krypton-confirm-decision")!.textContent).toBe("Declined: nothing was changed.");
    expect(lastAnswer().querySelectorAll(".krypton-confirm button")).toHaveLength(0);
  });

  it("Stop while a confirmation waits counts as deny", async () => {
    f = await mountChatView({ settings: { agentMode: true } });
    const decided: ConfirmDecision[] = [];
    f.chat.script({ confirm: { tool: "write_note", arguments: {}, title: "Create a new note Krypton/x.md", preview: "# X" }, decided }, { gate: new Gate() });
    typeAndEnter(f, "Save x");
    await f.settle();
    f.view.stop();
    await f.settle();
    expect(decided).toEqual(["deny"]);
  });

  it("/tools and /config answer locally, are never sent to the model nor saved", async () => {
    f = await mountChatView({ settings: { agentMode: true, tavilyApiKey: "" } });
    typeAndEnter(f, "/tools");
    await f.settle();
    const tools = lastAnswer().textContent ?? "";
    expect(tools).toContain("list_notes");
    expect(tools).toContain("append_to_note (asks first)");
    expect(tools).not.toContain("web_search");
    typeAndEnter(f, "/config");
    await f.settle();
    expect(lastAnswer().textContent).toMatch(/Model: ollama:llama3\.1:8b[\s\S]*Limits: 8 steps, 180 s per turn[\s\S]*Agent mode: on/);
    typeAndEnter(f, "/steps");
    await f.settle();
    expect(lastAnswer().textContent).toContain("No tool calls in the last agent answer");
    expect(f.chat.calls).toHaveLength(0);
    expect(await f.store.list()).toHaveLength(0);
    expect(lastAnswer().querySelectorAll(".krypton-action")).toHaveLength(0);
  });

  it("/log shows each request as sent, with the line saying what fitting the window cut, and the replies", async () => {
    const ollama = await startOllamaServer();
    try {
      // A model without native tools (JSON actions) and a 4,096-token window: four long earlier turns do not fit.
      ollama.modelInfo["llama3.1:8b"] = { capabilities: ["completion"] };
      const model = new OllamaChatModel({ baseUrl: ollama.url, model: "llama3.1:8b", fetch: nodeFetch, clock: nodeClock, timeoutMs: 5_000, retry: FAST_RETRY, maxContext: 4096 });
      f = await mountChatView({ settings: { agentMode: true }, agentModel: model });
      typeAndEnter(f, "/log");
      await f.settle();
      expect(lastAnswer().textContent).toBe("No agent exchange yet in this conversation.");

      const listCall = JSON.stringify({ action: "call_tool", tool: "list_notes", arguments: {} });
      const answer = JSON.stringify({ action: "final", response: "One plan." });
      f.vault.files.set("Projects/Plan.md", "# Plan\n");
      ollama.script([
        { route: "chat", reply: listCall },
        { route: "chat", reply: answer },
      ]);
      const history = Array.from({ length: 4 }, (_, i) => ({ role: i % 2 ? ("assistant" as const) : ("user" as const), content: `turn ${i} ${"talk ".repeat(1600)}` }));
      for await (const event of f.context.core.agent.answer("What notes do I have?", history)) void event;

      typeAndEnter(f, "/log");
      await f.settle();
      const text = lastAnswer().textContent ?? "";
      expect(text).toMatch(/^Raw exchange of the last agent answer \(keys redacted\):/);
      const blocks = text.slice(text.indexOf("── request 1 ──")).split(/^(?=── )/m);
      expect(blocks.map((b) => b.split("\n")[0])).toEqual(["── request 1 ──", "── reply 1 ──", "── request 2 ──", "── reply 2 ──"]);
      const fitLine = "(To fit llama3.1:8b's context window (4,096 tokens), this request left out the 4 earliest messages of the conversation.)";
      for (const request of [blocks[0], blocks[2]]) {
        expect(request.startsWith(`${request.split("\n")[0]}\n${fitLine}\n[system] You are Krypton`)).toBe(true);
        expect(request).not.toContain("turn 0 talk");
      }
      expect(blocks[0]).toMatch(/\n\[user\] What notes do I have\?\n/);
      expect(blocks[1]).toBe(`── reply 1 ──\n${listCall}\n`);
      expect(blocks[2]).toContain(`\n[assistant] ${listCall}\n[user] Result of list_notes:\n- Projects/Plan.md`);
      expect(blocks[3]).toBe(`── reply 2 ──\n${answer}`);
    } finally {
      await ollama.close();
    }
  });
});
