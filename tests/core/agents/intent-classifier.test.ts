import { parseClassifierAnswer } from "../../../src/core/agents/intent-classifier";
import { ANSWER_BUDGET } from "../../../src/core/model/answer-budget";
import { OLLAMA_REASONING_ROOM } from "../../../src/core/providers/answer-room";
import { makeAgentsWorld, routeMessage, type AgentsWorld } from "./agent-fixtures";

describe("parseClassifierAnswer", () => {
  it.each([
    ['{"intent":"create_note","argument":"machine learning"}', { intent: "create-note", argument: "machine learning" }],
    ['{"intent":"search_notes","argument":" AWS "}', { intent: "search-notes", argument: "AWS" }],
    ['{"intent":"summarize_topic","argument":"Rome"}', { intent: "summarize-topic", argument: "Rome" }],
    ['{"intent":"summarize_current_note","argument":"ignored"}', { intent: "summarize-note", argument: "" }],
    ['{"intent":"summarize_current_note"}', { intent: "summarize-note", argument: "" }],
    ['Sure! ```json\n{"intent": "search_notes", "argument": "docker"}\n```', { intent: "search-notes", argument: "docker" }],
    ['<think>{"intent":"chat"}</think>{"intent":"create_note","argument":"tides"}', { intent: "create-note", argument: "tides" }],
  ])("accepts %p", (raw, expected) => {
    expect(parseClassifierAnswer(raw)).toEqual({ kind: "intent", intent: { ...expected, source: "classifier" } });
  });

  it("accepts chat as a valid 'no agent' answer", () => {
    expect(parseClassifierAnswer('{"intent":"chat","argument":""}')).toEqual({ kind: "chat" });
  });

  it.each([
    ["", /no JSON object/],
    ["I think you want to create a note.", /no JSON object/],
    ['{"intent":"create_note","argument":"x"', /no JSON object/],
    ['{"intent": create_note}', /not parseable JSON/],
    ['{"intent":"delete_note","argument":"x"}', /^intent: /],
    ['{"intent":"CREATE_NOTE","argument":"x"}', /^intent: /],
    ['{"intent":["create_note"],"argument":"x"}', /^intent: /],
    ['{"intent":"create_note","argument":42}', /^argument: /],
    ['{"answer":"create_note"}', /^intent: /],
    ['["create_note","x"]', /expected object/],
    ['{"intent":"create_note","argument":"   "}', /^argument: create_note needs an argument/],
    ['{"intent":"search_notes"}', /^argument: search_notes needs an argument/],
    [`{"intent":"create_note","argument":"${"x".repeat(250)}"}`, /^argument: too long/],
  ])("rejects %p (%s)", (raw, reason) => {
    expect(parseClassifierAnswer(raw)).toEqual({ kind: "invalid", reason: expect.stringMatching(reason) });
  });
});

describe("the LLM intent classifier through the router", () => {
  let world: AgentsWorld;
  afterEach(async () => {
    await world?.close();
  });

  // The classifier asks through askJson: its requests carry the answer's JSON schema as `format`.
  const classifierRequests = () => world.ollama.requestsTo("chat").filter((r) => typeof (r.body as { format?: unknown }).format === "object");

  it("is not asked when the setting is off", async () => {
    world = await makeAgentsWorld({ openIndex: false });
    const { result } = await routeMessage(world, "what is the capital of France?");
    expect(result).toBeNull();
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("decides once per message (shared by all agents) and recognises requests the patterns miss", async () => {
    world = await makeAgentsWorld({ openIndex: false, settings: { intentClassifier: true } });
    world.ollama.script([
      { route: "chat", reply: '{"intent":"create_note","argument":"sourdough starters"}' },
      { route: "chat", reply: "# Sourdough starters\n\nFlour and water." },
    ]);

    const { result, agent } = await routeMessage(world, "jot something down for me on sourdough starters");

    expect(agent).toBe("create-note");
    expect(result).toMatchObject({ kind: "note-created", path: "Krypton/sourdough-starters.md" });
    expect(classifierRequests()).toHaveLength(1);
    expect(world.ollama.requestsTo("chat")).toHaveLength(2);
  });

  it("is computed once even when no agent takes the message", async () => {
    world = await makeAgentsWorld({ openIndex: false, settings: { intentClassifier: true } });
    world.ollama.script({ route: "chat", reply: '{"intent":"chat","argument":""}' });
    const { result, calls } = await routeMessage(world, "tell me a joke");
    expect(result).toBeNull();
    expect(calls).toEqual(["create-note", "search-notes", "summarize"]);
    expect(classifierRequests()).toHaveLength(1);
  });

  it("gets the message plus the last 4 messages of the conversation", async () => {
    world = await makeAgentsWorld({ openIndex: false, settings: { intentClassifier: true } });
    world.ollama.script({ route: "chat", reply: '{"intent":"chat","argument":""}' });
    const history = [1, 2, 3, 4, 5, 6].map((n) => ({ role: n % 2 ? ("user" as const) : ("assistant" as const), content: `turn-${n}` }));

    await routeMessage(world, "make a note of that", { history });

    const prompt = world.chatPrompts()[0];
    expect(prompt).toContain('Last message: "make a note of that"');
    for (const n of [3, 4, 5, 6]) expect(prompt).toContain(`turn-${n}`);
    for (const n of [1, 2]) expect(prompt).not.toContain(`turn-${n}`);
    for (const name of ["create_note", "search_notes", "summarize_current_note", "summarize_topic", "chat"]) expect(prompt).toContain(name);
  });

  it("is language-neutral: a message in another language reaches the model verbatim, and its argument stays in that language", async () => {
    world = await makeAgentsWorld({ openIndex: false, settings: { intentClassifier: true } });
    world.ollama.script([
      { route: "chat", reply: '{"intent":"create_note","argument":"潮の満ち引き"}' },
      { route: "chat", reply: "# 潮の満ち引き\n\n月の引力。" },
    ]);
    const { agent } = await routeMessage(world, "潮の満ち引きについてメモを書いて");
    expect(agent).toBe("create-note");
    const prompt = world.chatPrompts()[0];
    expect(prompt).toContain('Last message: "潮の満ち引きについてメモを書いて"');
    expect(prompt).toMatch(/any language/);
    expect(prompt).toMatch(/own words and language/);
  });

  it("a model that thinks in its content without Ollama listing \"thinking\": cut inside <think> at the label budget, it gets the room to think, and keeps it for the note", async () => {
    world = await makeAgentsWorld({ openIndex: false, settings: { intentClassifier: true } });
    // 400 tokens of thought are more than the 256-token budget (the server counts them against num_predict).
    const thinking = ["<think>", ...Array<string>(400).fill("hmm "), "</think>"];
    world.ollama.script([
      { route: "chat", tokens: [...thinking, '{"intent":"create_note","argument":"sourdough starters"}'], times: 2 },
      { route: "chat", tokens: [...thinking, "# Sourdough starters\n\nFlour and water."] },
    ]);

    const { result, agent } = await routeMessage(world, "jot something down for me on sourdough starters");

    expect(agent).toBe("create-note");
    expect(result).toMatchObject({ kind: "note-created", path: "Krypton/sourdough-starters.md" });
    const caps = world.ollama.requestsTo("chat").map((r) => (r.body as { options: { num_predict: number } }).options.num_predict);
    expect(caps).toEqual([ANSWER_BUDGET.label, ANSWER_BUDGET.label + OLLAMA_REASONING_ROOM, ANSWER_BUDGET.note + OLLAMA_REASONING_ROOM]);
    expect(await world.vault.read("Krypton/sourdough-starters.md")).not.toContain("hmm");
  });

  it("a valid 'chat' answer wins over the patterns", async () => {
    world = await makeAgentsWorld({ openIndex: false, settings: { intentClassifier: true } });
    world.ollama.script({ route: "chat", reply: '{"intent":"chat","argument":""}' });
    const { result } = await routeMessage(world, "create a note on tides");
    expect(result).toBeNull();
    expect(world.ollama.requestsTo("chat")).toHaveLength(1);
  });

  it.each([
    ["garbage", "Sure, I can help with that!"],
    ["an unknown intent", '{"intent":"delete_note","argument":"tides"}'],
    ["a missing argument", '{"intent":"create_note","argument":""}'],
    ["broken JSON", '{"intent": "create_note", "argument": '],
  ])("falls back to the patterns on %s, after one repair request", async (_what, reply) => {
    world = await makeAgentsWorld({ openIndex: false, settings: { intentClassifier: true } });
    world.ollama.script([
      { route: "chat", reply, times: 2 },
      { route: "chat", reply: "# Tides\n\nThe moon pulls the sea." },
    ]);

    const created = await routeMessage(world, "create a note on tides");
    expect(created.result).toMatchObject({ kind: "note-created", path: "Krypton/tides.md" });
    expect(classifierRequests()).toHaveLength(2);
    expect((classifierRequests()[1].body as { messages: { content: string }[] }).messages.at(-1)?.content).toMatch(/not valid/);

    world.ollama.script({ route: "chat", reply, times: 2 });
    const chat = await routeMessage(world, "how do I create a note in Obsidian?");
    expect(chat.result).toBeNull();
    expect(world.logs.some((l) => l.message.includes("classifier answer unusable"))).toBe(true);
  });

  it("falls back to the patterns when the classifier call fails", async () => {
    world = await makeAgentsWorld({ openIndex: false, settings: { intentClassifier: true } });
    world.ollama.script([
      { route: "chat", status: 400, error: "invalid format" },
      { route: "chat", reply: "# Tides" },
    ]);
    const { result } = await routeMessage(world, "create a note on tides");
    expect(result).toMatchObject({ kind: "note-created" });
    expect(world.logs.some((l) => l.level === "warn" && l.message.includes("classifier failed"))).toBe(true);
  });

  it("uses the patterns when no chat model is configured", async () => {
    world = await makeAgentsWorld({ openIndex: false, settings: { intentClassifier: true } });
    world.model = null;
    const { result, agent } = await routeMessage(world, "create a note on tides");
    expect(agent).toBe("create-note");
    expect(result).toMatchObject({ kind: "message" });
    expect(result?.text).toMatch(/No chat model is configured/);
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });
});
