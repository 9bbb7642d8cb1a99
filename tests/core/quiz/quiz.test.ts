import { createQuizAgent } from "../../../src/core/quiz/quiz-agent";
import { QuizService } from "../../../src/core/quiz/quiz-service";
import { gradeLocally, hintFor, quizCardsFromDeck, readCommand, record, startQuiz, summaryText, type QuizCard } from "../../../src/core/quiz/quiz-state";
import { parseCards } from "../../../src/core/flashcards/card-parser";
import { makeAgentsWorld, type AgentsWorld } from "../agents/agent-fixtures";

const DECK = [
  "---",
  "krypton-deck: true",
  'deck: "AWS"',
  "---",
  "",
  "#flashcards/aws",
  "",
  "What does S3 stand for?::Simple Storage Service [[AWS/S3#Basics]]",
  "<!--SR:!2024-08-16,51,230-->",
  "",
  "The default VPC CIDR block is ==172.31.0.0/16== [[AWS/VPC]]",
  "",
  "Why use an Auto Scaling group?::To match capacity to demand automatically [[AWS/EC2]]",
  "",
].join("\n");

describe("quiz state machine", () => {
  const cards = quizCardsFromDeck(parseCards(DECK).cards, "Flashcards/AWS.md");

  it("turns deck cards into questions: links and SR comments gone, a cloze asks its deletion", () => {
    expect(cards.map((c) => [c.kind, c.prompt, c.answer])).toEqual([
      ["basic", "What does S3 stand for?", "Simple Storage Service"],
      ["cloze", "The default VPC CIDR block is [...]", "172.31.0.0/16"],
      ["basic", "Why use an Auto Scaling group?", "To match capacity to demand automatically"],
    ]);
  });

  it("grades exact and cloze answers without the model; free text is left to the model", () => {
    expect(gradeLocally(cards[0], "simple storage service!")).toMatchObject({ verdict: "correct", by: "local" });
    expect(gradeLocally(cards[1], "172.31.0.0/16")).toMatchObject({ verdict: "correct", by: "local" });
    expect(gradeLocally(cards[1], "10.0.0.0/8")).toMatchObject({ verdict: "wrong", by: "local" });
    expect(gradeLocally(cards[2], "it scales")).toBeNull();
  });

  it("reads hint / skip / stop, anything else is an answer", () => {
    expect(readCommand("Hint")).toEqual({ type: "hint" });
    expect(readCommand("skip.")).toEqual({ type: "skip" });
    expect(readCommand("stop the quiz")).toEqual({ type: "stop" });
    expect(readCommand("  Simple Storage  ")).toEqual({ type: "answer", text: "Simple Storage" });
  });

  it("hints reveal more with each ask; the summary lists missed cards and offers to make cards", () => {
    const card: QuizCard = { kind: "basic", prompt: "Q", answer: "Simple Storage Service", source: "x" };
    expect(hintFor(card, 0)).toBe("Si… … …");
    expect(hintFor(card, 1)).toBe("Si… Sto… …");
    let state = startQuiz("AWS", cards);
    state = record(state, "Simple Storage Service", { verdict: "correct", score: 1, feedback: "", by: "local" });
    state = record(state, "", { verdict: "skipped", score: 0, feedback: "", by: "local" });
    state = record(state, "it scales", { verdict: "partial", score: 0.5, feedback: "", by: "model" });
    expect(state.status).toBe("finished");
    const text = summaryText(state);
    expect(text).toContain("Score: 1.5 of 3");
    expect(text).toContain("The default VPC CIDR block is [...] → **172.31.0.0/16** (skipped)");
    expect(text).toContain("you said: it scales");
    expect(text).toContain("make flashcards about AWS");
  });
});

describe("quiz in chat (agent + service, real vault and loopback Ollama)", () => {
  let world: AgentsWorld;
  const newQuiz = () => new QuizService({ host: world.host, settings: () => world.settings, chatModel: () => world.model });
  beforeEach(async () => {
    world = await makeAgentsWorld({ files: { "Flashcards/AWS.md": DECK } });
  });
  afterEach(() => world.close());

  function answerFor(question: string, right: boolean): string {
    if (question.includes("S3")) return right ? "Simple Storage Service" : "Super Server";
    if (question.includes("CIDR")) return right ? "172.31.0.0/16" : "10.0.0.0/8";
    return right ? "so capacity follows demand" : "for fun";
  }

  it("runs a whole quiz: local and model grading, hint, state saved per conversation, survives a restart and a conversation switch", async () => {
    let agent = createQuizAgent({ quiz: newQuiz(), logger: world.host.logger });
    expect(await agent.tryHandle("what is S3?", [], { conversationId: "c1" })).toBeNull();

    let reply = (await agent.tryHandle("quiz me on AWS", [], { conversationId: "c1" }))!.text;
    expect(reply).toMatch(/Quiz on \*\*AWS\*\*: 3 cards/);
    const question = () => /\*\*(?:Question|Fill in the blank) \d of 3:\*\* (.+)/.exec(reply)![1];
    const firstQuestion = question();

    // Another conversation has no quiz; the first keeps its own.
    expect(await agent.tryHandle("Simple Storage Service", [], { conversationId: "c2" })).toBeNull();

    // Restart: a new service and agent over the same .krypton folder.
    agent = createQuizAgent({ quiz: newQuiz(), logger: world.host.logger });
    const hint = (await agent.tryHandle("hint", [], { conversationId: "c1" }))!.text;
    expect(hint).toMatch(/^Hint: /);
    expect(JSON.parse((await world.host.data.readText("quiz/c1.json"))!)).toMatchObject({ index: 0, hints: 1 });

    world.ollama.setDefault({ route: "chat", reply: '{"verdict":"partial","score":0.6,"feedback":"Close: it is about matching demand."}' });
    const asked = [firstQuestion];
    reply = (await agent.tryHandle(answerFor(firstQuestion, true), [], { conversationId: "c1" }))!.text;
    for (let i = 1; i < 3; i++) {
      const q = question();
      asked.push(q);
      reply = (await agent.tryHandle(answerFor(q, i !== 1), [], { conversationId: "c1" }))!.text;
    }
    expect(new Set(asked).size).toBe(3);
    expect(reply).toMatch(/Quiz finished: AWS\.\*\* Score: /);
    expect(reply).toContain("Missed:");
    // Exact and cloze answers never reach the model; free text does, with the grading schema as structured output.
    const calls = world.ollama.requestsTo("chat");
    expect(calls.length).toBeGreaterThanOrEqual(1);
    for (const call of calls) {
      expect((call.body as { format?: { type?: string } }).format?.type).toBe("object");
      expect(call.userText).not.toContain("CIDR");
      expect(call.userText).not.toContain("Student's answer: Simple Storage Service");
    }
    expect(calls.some((c) => c.userText.includes("Expected answer: To match capacity to demand automatically"))).toBe(true);
    // Finished: the next message is normal chat again.
    expect(await agent.tryHandle("thanks", [], { conversationId: "c1" })).toBeNull();
  });

  it("a quiz started in a new conversation (no id yet) continues once the conversation has its id", async () => {
    const agent = createQuizAgent({ quiz: newQuiz(), logger: world.host.logger });
    expect((await agent.tryHandle("Test me on aws", [], {}))!.text).toMatch(/Quiz on/);
    expect((await agent.tryHandle("stop", [], { conversationId: "new-1" }))!.text).toMatch(/Score: 0 of 0 \(stopped after 0 of 3\)/);
  });

  it("explains a missing deck; a grading failure (invalid JSON twice) leaves the quiz where it was", async () => {
    const agent = createQuizAgent({ quiz: newQuiz(), logger: world.host.logger });
    expect((await agent.tryHandle("quiz me on Kubernetes", [], { conversationId: "c" }))!.text).toMatch(/No deck named "Kubernetes"/);
    await agent.tryHandle("quiz me on AWS", [], { conversationId: "c" });
    world.ollama.setDefault({ route: "chat", reply: "I think it is fine" });
    // Skip to the free-text card.
    for (let i = 0; i < 3; i++) {
      const state = JSON.parse((await world.host.data.readText("quiz/c.json"))!) as { cards: QuizCard[]; index: number };
      if (state.cards[state.index].prompt.startsWith("Why")) break;
      await agent.tryHandle("skip", [], { conversationId: "c" });
    }
    const before = await world.host.data.readText("quiz/c.json");
    const reply = (await agent.tryHandle("something vague", [], { conversationId: "c" }))!.text;
    expect(reply).toMatch(/Could not grade the answer/);
    expect(await world.host.data.readText("quiz/c.json")).toBe(before);
  });
});
