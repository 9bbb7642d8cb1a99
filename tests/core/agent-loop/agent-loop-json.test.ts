import { call, final, makeLoopWorld, type LoopWorld } from "./agent-loop-fixtures";
import { snapshotFiles } from "../../support/temp-vault";

const NOTES = {
  "Projects/Plan.md": "# Plan\n\nShip the agent mode.\n",
  "Projects/Ideas.md": "---\ntags: [idea]\n---\n# Ideas\n\nA #research idea.\n",
  "Daily/2026-11-24.md": "# Today\n\nNothing yet.",
};

describe("agent loop, JSON action protocol (loopback Ollama, model without native tools)", () => {
  let world: LoopWorld;
  afterEach(async () => {
    await world?.close();
  });

  it("the exchange log (/log) records the messages as sent after fitting the window, and says what was cut", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script({ route: "chat", reply: final("Noted.") });
    // Ten long earlier turns (~23k tokens) do not fit the default 16,384-token window: the oldest go.
    const history = Array.from({ length: 10 }, (_, i) => ({ role: i % 2 ? ("assistant" as const) : ("user" as const), content: `turn ${i} ${"talk ".repeat(1600)}` }));
    const { result } = await world.run("What is my plan?", { history });

    const sentMessages = world.bodies()[0].messages;
    const [entry] = result.exchange;
    expect(entry.request.map((m) => m.content)).toEqual(sentMessages.map((m) => m.content));
    expect(entry.request.length).toBeLessThan(history.length + 3);
    const left = history.length + 3 - entry.request.length;
    expect(entry.fitted).toBe(`To fit llama3.1:8b's context window (16,384 tokens), this request left out the ${left} earliest messages of the conversation.`);
  });

  it("calls a tool, feeds the result back and streams the final answer", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script([
      { route: "chat", reply: call("read_note", { path: "Projects/Plan.md" }, "I should read the plan") },
      { route: "chat", reply: final("The plan is to ship the agent mode [[Projects/Plan]].") },
    ]);

    const { result, tokens, events } = await world.run("What is my plan?");

    expect(result.protocol).toBe("json");
    expect(result.endReason).toBe("answer");
    expect(result).not.toHaveProperty("limit");
    expect(result.answer).toBe("The plan is to ship the agent mode [[Projects/Plan]].");
    // Streamed in several pieces out of the still-arriving JSON, not in one block at the end.
    expect(events.filter((e) => e.type === "token").length).toBeGreaterThan(3);
    expect(tokens).toBe(result.answer);
    expect(result.steps).toHaveLength(1);
    expect(result.steps[0]).toMatchObject({ step: 1, tool: { name: "read_note", arguments: { path: "Projects/Plan.md" }, callId: "json-1" }, isError: false, outcome: "ok", thought: "I should read the plan" });
    expect(result.steps[0].result).toContain("Ship the agent mode.");

    const [first, second] = world.bodies();
    // Structured output: the action schema goes to Ollama as `format`.
    expect(first.format).toMatchObject({ type: "object", properties: { action: { enum: ["call_tool", "final"] } } });
    expect(first.messages[0].content).toContain("- read_note:");
    expect(first.messages[0].content).not.toContain("vault_path");
    expect(first.messages[0].content).not.toMatch(/delete|rename|move_note/);
    expect(second.messages.some((m) => m.role === "user" && m.content.startsWith("Result of read_note:\n# Plan"))).toBe(true);
    expect(second.messages.at(-1)!.role).toBe("system");
    expect(second.messages.at(-1)!.content).toMatch(/^Write your answer in English/);
    expect(result.exchange).toHaveLength(2);
  });

  it("sends a correction for invalid JSON, at most twice per step, then fails clearly", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script([
      { route: "chat", reply: '{"action": "call_tool", "tool": ' },
      { route: "chat", reply: final("Fixed.") },
    ]);
    const ok = await world.run("Hi there, what is in my notes?");
    expect(ok.result.answer).toBe("Fixed.");
    const corrected = world.bodies()[1].messages;
    expect(corrected.at(-2)).toMatchObject({ role: "user" });
    expect(corrected.at(-2)!.content).toMatch(/^Your last reply was not a valid action: it contained no JSON object\. Reply with exactly one JSON object/);

    world.ollama.reset();
    world.ollama.script({ route: "chat", reply: '{"action":"call_tool"}', times: 3 });
    await expect(world.run("What is in my notes?")).rejects.toThrow(/did not return a valid action \(action "call_tool" needs "tool".*even after 2 corrections/);
    expect(world.ollama.requestsTo("chat")).toHaveLength(3);
  });

  it("answers an unknown tool and bad arguments with the registry's actionable message", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script([
      { route: "chat", reply: call("delete_note", { path: "Projects/Plan.md" }) },
      { route: "chat", reply: call("read_note", {}) },
      { route: "chat", reply: call("read_note", { path: "../etc/passwd" }) },
      { route: "chat", reply: final("Sorry.") },
    ]);
    const before = await snapshotFiles(world.vault.root);
    const { result } = await world.run("Delete my plan");

    expect(result.steps.map((s) => s.outcome)).toEqual(["error", "error", "error"]);
    expect(result.steps[0].result).toMatch(/^Unknown tool: delete_note\. Available tools: .*read_note/);
    expect(result.steps[1].result).toMatch(/^Missing required parameter: path\. Call read_note again with corrected arguments\./);
    expect(result.steps[2].result).toMatch(/\.\./);
    const bodies = world.bodies();
    expect(bodies[1].messages.at(-2)!.content).toMatch(/^Tool delete_note failed: Unknown tool/);
    expect(await snapshotFiles(world.vault.root)).toEqual(before);
  });

  it("reminds at 2 steps left and, at the step limit, writes the answer in one tool-less call, marked", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script([
      { route: "chat", reply: call("list_notes", {}) },
      { route: "chat", reply: call("list_notes", { folder: "Projects" }) },
      { route: "chat", reply: call("list_notes", { tag: "idea" }) },
      { route: "chat", reply: "You have a plan and ideas." },
    ]);
    const { result, tokens } = await world.run("Give me an overview of my notes", { maxSteps: 3 });

    expect(result.endReason).toBe("step-limit");
    expect(result.limit).toBe("stopped at the step limit (3 steps)");
    expect(result.steps).toHaveLength(3);
    expect(result.steps[2].result).toBe("- Projects/Ideas.md (2026-11-24)".replace("2026-11-24", result.steps[2].result.slice(-11, -1)));
    expect(result.steps[2].result).not.toContain("Plan.md");
    expect(result.answer).toBe("You have a plan and ideas.\n\n*(Stopped at the step limit: 3 steps.)*");
    expect(tokens).toBe(result.answer);
    const bodies = world.bodies();
    expect(bodies).toHaveLength(4);
    expect(bodies[1].messages.some((m) => /Only 2 steps are left/.test(m.content))).toBe(true);
    expect(bodies[0].messages.some((m) => /steps are left/.test(m.content))).toBe(false);
    // The synthesis call has no JSON schema and says so.
    expect(bodies[3].format).toBeUndefined();
    expect(bodies[3].messages.at(-2)!.content).toMatch(/You have used all 3 steps\. Do not call any tool/);
    expect(bodies[3].messages.at(-1)!.content).toMatch(/^Write your answer in/);
  });

  it("blocks the same call repeated 3 times, and ends the turn after 3 blocks", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script({ route: "chat", reply: call("read_note", { path: "Projects/Plan.md" }), times: 5 });
    const { result, tokens } = await world.run("Read my plan again and again");

    expect(result.endReason).toBe("loop-guard");
    expect(result.limit).toBe("stopped by the loop guard (3 repeated tool calls blocked)");
    expect(result.steps.map((s) => s.outcome)).toEqual(["ok", "ok", "blocked", "blocked", "blocked"]);
    expect(result.steps[2].result).toMatch(/^Blocked: you already called read_note with exactly these arguments 2 times/);
    expect(result.answer).toMatch(/^I stopped because I kept repeating the same tool calls/);
    expect(tokens).toBe(result.answer);
    expect(world.ollama.requestsTo("chat")).toHaveLength(5);
  });

  it("treats arguments in another key order as the same call", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script([
      { route: "chat", reply: call("list_notes", { folder: "Projects", limit: 5 }) },
      { route: "chat", reply: JSON.stringify({ action: "call_tool", tool: "list_notes", arguments: { limit: 5, folder: "Projects" } }) },
      { route: "chat", reply: call("list_notes", { folder: "Projects", limit: 5 }) },
      { route: "chat", reply: final("Done.") },
    ]);
    const { result } = await world.run("list");
    expect(result.steps.map((s) => s.outcome)).toEqual(["ok", "ok", "blocked"]);
  });

  it("reads a number a small model quoted ({\"limit\": \"1\"}) as meant instead of refusing the call", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script([
      { route: "chat", reply: call("list_notes", { folder: "Projects", limit: "1" }) },
      { route: "chat", reply: final("One note.") },
    ]);
    const { result } = await world.run("list one project note");
    expect(result.steps.map((s) => s.outcome)).toEqual(["ok"]);
    expect(result.steps[0].result.split("\n").filter((line) => line.startsWith("- "))).toHaveLength(1);
  });

  it.each([
    ["de", "Was steht in meinen Notizen über den Plan? Bitte kurz.", "German", "Der Plan ist, den Agentenmodus auszuliefern."],
    ["es", "¿Qué dicen mis notas sobre el plan?", "Spanish", "El plan es lanzar el modo agente."],
    ["fr", "Que disent mes notes sur le plan ? Réponds avec une phrase.", "French", "Le plan est de livrer le mode agent."],
  ])("answers in the user's language (%s): the instruction names it and goes last, after tool results", async (_code, question, language, reply) => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script([
      { route: "chat", reply: call("read_note", { path: "Projects/Plan.md" }) },
      { route: "chat", reply: final(reply) },
    ]);
    const { result } = await world.run(question);
    expect(result.answer).toBe(reply);
    for (const body of world.bodies()) {
      const last = body.messages.at(-1)!;
      expect(last.role).toBe("system");
      expect(last.content).toContain(`Write your answer in ${language}`);
      expect(last.content).toContain(question);
    }
    // After the tool result, still last.
    const second = world.bodies()[1].messages;
    expect(second.findIndex((m) => m.content.startsWith("Result of read_note"))).toBeLessThan(second.length - 1);
  });

  it("takes back a streamed final answer whose JSON then breaks, and streams the corrected one once", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script([
      { route: "chat", reply: '{"action":"final","response":"Half an ans' },
      { route: "chat", reply: final("The whole answer.") },
    ]);
    const { result, tokens, events } = await world.run("What is my plan?");
    expect(events.some((e) => e.type === "retract" && e.text === "Half an ans")).toBe(true);
    expect(tokens).toBe("The whole answer.");
    expect(result.answer).toBe("The whole answer.");
  });

  it("a reply cut at the length limit gets a correction that says so; cut prose is never taken as the answer", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script([
      { route: "chat", reply: '{"action":"final","response":"Your plan is', extra: { doneReason: "length" } },
      { route: "chat", reply: final("Ship it.") },
    ]);
    const ok = await world.run("What is my plan?");
    expect(ok.result.answer).toBe("Ship it.");
    const correction = world.bodies()[1].messages.at(-2)!.content;
    expect(correction).toMatch(/^Your last reply was cut off at the length limit before its JSON was complete, probably because it repeated itself\. .*much shorter/);
    // As askJson's repair: the cut reply is not sent back.
    expect(world.bodies()[1].messages.some((m) => m.content.includes("Your plan is"))).toBe(false);

    world.ollama.reset();
    world.ollama.script({ route: "chat", reply: "Your plan is to", extra: { doneReason: "length" }, times: 3 });
    await expect(world.run("What is my plan?")).rejects.toThrow(
      "did not return a valid action (it was cut off at the model's length limit, often a sign of a model repeating itself), even after 2 corrections. Try again or use a larger model.",
    );
  });

  it("a reply cut while the model was still thinking: the correction asks for the action at once, with thinking off; not blamed on a loop", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.modelInfo["llama3.1:8b"] = { capabilities: ["completion", "thinking"] };
    // A thinking model whose thoughts outrun the cap (a workflow task's config.maxTokens caps every turn);
    // asked with think: false, the loopback Ollama drops its thinking, as Ollama does.
    world.ollama.script({ route: "chat", reply: final("Ship it."), extra: { thinking: "hmm ".repeat(3000) }, times: 2 });
    const { result } = await world.run("What is my plan?", { sampling: { maxTokens: 64 } });
    expect(result.answer).toBe("Ship it.");
    const [first, second] = world.ollama.requestsTo("chat").map((r) => r.body as { think?: boolean; options: { num_predict: number }; messages: { content: string }[] });
    expect(first.think).toBeUndefined();
    expect(first.options.num_predict).toBeGreaterThan(64); // the room to think on top of the cap
    expect(second.think).toBe(false);
    const correction = second.messages.at(-2)!.content;
    expect(correction).toMatch(/^Your last reply ran out of room while you were still thinking, before your JSON was complete\. Do not think it through this time/);
    expect(correction).not.toMatch(/repeated|much shorter/);
  });

  it("accepts prose after two corrections as the answer (small models), with a notice", async () => {
    world = await makeLoopWorld({ files: NOTES });
    world.ollama.script({ route: "chat", reply: "Your plan is to ship agent mode.", times: 3 });
    const { result, events } = await world.run("What is my plan?");
    expect(result.answer).toBe("Your plan is to ship agent mode.");
    expect(events.some((e) => e.type === "notice" && e.code === "agent-invalid-json")).toBe(true);
  });
});
