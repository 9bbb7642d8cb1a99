import { parseClassifierAnswer } from "../../../src/core/agents/intent-classifier";
import { FlashcardService } from "../../../src/core/flashcards/flashcard-service";
import { createFlashcardAgent } from "../../../src/core/flashcards/flashcard-agent";
import { createGoalAgent } from "../../../src/core/goals/goal-agent";
import { GoalService } from "../../../src/core/goals/goal-service";
import { createQuizAgent } from "../../../src/core/quiz/quiz-agent";
import { QuizService } from "../../../src/core/quiz/quiz-service";
import { makeAgentsWorld, routeMessage, type AgentsWorld } from "./agent-fixtures";

/** The flashcard, quiz and study-goal intents of the optional LLM classifier. */
describe("parseClassifierAnswer: study intents", () => {
  it.each([
    ['{"intent":"make_flashcards","argument":"","count":5}', { intent: "flashcards", request: { topic: null, max: 5 } }],
    ['{"intent":"make_flashcards","argument":"las mareas","count":null}', { intent: "flashcards", request: { topic: "las mareas" } }],
    ['{"intent":"quiz","argument":" приливах "}', { intent: "quiz", topic: "приливах" }],
    ['{"intent":"set_study_goal","argument":"aprobar el DELE","target_date":"15 de diciembre"}', { intent: "study-goal", request: { type: "create", goal: "aprobar el DELE", target: "15 de diciembre" } }],
    ['{"intent":"set_study_goal","argument":"Rust","target_date":null}', { intent: "study-goal", request: { type: "create", goal: "Rust" } }],
    ['{"intent":"log_study_time","argument":"DELE","duration":"45 minutos"}', { intent: "study-goal", request: { type: "log", goal: "DELE", amount: "45 minutos" } }],
    ['{"intent":"list_study_goals","argument":null}', { intent: "study-goal", request: { type: "list" } }],
    ['{"intent":"study_goal_progress","argument":"AWS"}', { intent: "study-goal", request: { type: "progress", goal: "AWS" } }],
    ['{"intent":"plan_study_week","argument":"AWS"}', { intent: "study-goal", request: { type: "plan", goal: "AWS" } }],
  ])("accepts %p", (raw, expected) => {
    expect(parseClassifierAnswer(raw)).toEqual({ kind: "intent", intent: { ...expected, source: "classifier" } });
  });

  it.each([
    ['{"intent":"quiz","argument":""}', /^argument: quiz needs an argument \(the topic\)/],
    ['{"intent":"study_goal_progress"}', /^argument: study_goal_progress needs an argument \(the goal\)/],
    ['{"intent":"log_study_time","argument":"DELE"}', /^duration: log_study_time needs a duration with a number/],
    ['{"intent":"log_study_time","argument":"DELE","duration":"a while"}', /^duration: /],
    ['{"intent":"make_flashcards","argument":"","count":0}', /^count: /],
    ['{"intent":"make_flashcards","argument":"","count":2.5}', /^count: /],
    ['{"intent":"make_flashcards","argument":"","count":"5"}', /^count: /],
    ['{"intent":"make_quiz","argument":"AWS"}', /^intent: /],
  ])("rejects %p (%s)", (raw, reason) => {
    expect(parseClassifierAnswer(raw)).toEqual({ kind: "invalid", reason: expect.stringMatching(reason) });
  });
});

const TIDES = "# Приливы\n\nПриливы вызывает притяжение Луны. Приливы бывают дважды в сутки.\n";
const DECK = '---\nkrypton-deck: true\ndeck: "приливы"\n---\n\n#flashcards/приливы\n\nЧто вызывает приливы?::Притяжение Луны [[Океан/Приливы]]\n\nСколько раз в сутки бывают приливы?::Дважды [[Океан/Приливы]]\n\n';

describe("the LLM intent classifier for flashcards, quizzes and study goals (loopback Ollama as a small model)", () => {
  let world: AgentsWorld;
  let goals: GoalService;
  beforeEach(async () => {
    world = await makeAgentsWorld({ files: { "Океан/Приливы.md": TIDES, "Flashcards/приливы.md": DECK }, settings: { intentClassifier: true } });
    // The clock: 2026-11-24 10:30 UTC.
    world.host = { ...world.host, clock: { ...world.host.clock, now: () => Date.UTC(2026, 10, 24, 10, 30) } };
    const { host, router } = world;
    const flashcards = new FlashcardService({ host, settings: () => world.settings, index: world.index, chatModel: () => world.model });
    const quiz = new QuizService({ host, settings: () => world.settings, chatModel: () => world.model, flashcards });
    goals = new GoalService({ host, settings: () => world.settings, index: world.index, timeZone: "UTC" });
    // In createKrypton's order, sharing the note agents' router.
    world.agents = [
      createQuizAgent({ quiz, router, logger: host.logger }),
      createFlashcardAgent({ flashcards, router, logger: host.logger }),
      createGoalAgent({ goals, router, logger: host.logger }),
      ...world.agents,
    ];
  });
  afterEach(() => world.close());

  // The classifier asks through askJson: its requests carry its answer's schema, with "intent", as `format`.
  const classifierRequests = () => world.ollama.requestsTo("chat").filter((r) => JSON.stringify((r.body as { format?: unknown }).format ?? "").includes('"intent"'));
  const cards = (req: { userText: string }) => {
    const n = /\[(\d+)\][^[]*дважды/.exec(req.userText)?.[1];
    return JSON.stringify({ cards: [{ type: "basic", front: "Когда бывают приливы?", back: "Дважды в сутки", passage: Number(n) }] });
  };

  it("valid JSON: a free-form request for cards from the open note reaches the flashcard agent, with one classifier call for all agents", async () => {
    world.ollama.script([
      { route: "chat", reply: '{"intent":"make_flashcards","argument":"","count":3}' },
      { route: "chat", reply: cards },
    ]);
    const { result, agent, calls } = await routeMessage(world, "помоги мне повторить эту тему с карточками", { activeNotePath: "Океан/Приливы.md" });
    expect(agent).toBe("flashcards");
    expect(calls).toEqual(["quiz", "flashcards"]);
    // The note's title names the deck: "приливы", case aside.
    expect(result?.text).toMatch(/^Added 1 flashcard to \[\[Flashcards\/приливы\]\]\./);
    expect(classifierRequests()).toHaveLength(1);
    const prompt = world.chatPrompts()[0];
    for (const name of ["make_flashcards", "quiz", "set_study_goal", "log_study_time", "list_study_goals", "study_goal_progress", "plan_study_week"]) expect(prompt).toContain(name);
  });

  it("JSON in prose: a goal with its date in the request's language", async () => {
    world.ollama.script({
      route: "chat",
      reply: 'Sure! Here is the JSON:\n```json\n{"intent": "set_study_goal", "argument": "aprobar el DELE", "target_date": "15 de diciembre"}\n```\nLet me know if you need more.',
    });
    const { result, agent } = await routeMessage(world, "quiero aprobar el DELE antes del 15 de diciembre, apúntamelo como meta");
    expect(agent).toBe("study-goals");
    expect(result?.text).toMatch(/^Study goal set: \*\*aprobar el DELE\*\*, target 2026-12-15\./);
    expect(classifierRequests()).toHaveLength(1);
  });

  it("invalid JSON, then repaired: the repair request names what was missing, and the repaired answer acts", async () => {
    await goals.create("aprobar el DELE");
    world.ollama.script([
      { route: "chat", reply: '{"intent":"log_study_time","argument":"DELE"}' },
      { route: "chat", reply: '{"intent":"log_study_time","argument":"DELE","duration":"45 minutos"}' },
    ]);
    const { result, agent } = await routeMessage(world, "hoy le dediqué 45 minutos al DELE");
    expect(agent).toBe("study-goals");
    expect(result?.text).toBe("Logged 45 min on **aprobar el DELE** — 45 min in total.");
    expect(classifierRequests()).toHaveLength(2);
    expect((classifierRequests()[1].body as { messages: { content: string }[] }).messages.at(-1)?.content).toMatch(/not valid: duration: log_study_time needs a duration/);
  });

  it("a quiz: the topic finds its deck in another case; the answers then go to the quiz, not to the classifier", async () => {
    world.ollama.script({ route: "chat", reply: '{"intent":"quiz","argument":"приливах"}' });
    const started = await routeMessage(world, "давай проверим, что я помню о приливах");
    expect(started.agent).toBe("quiz");
    expect(started.result?.text).toMatch(/^Quiz on \*\*приливы\*\*: 2 cards/);
    const answered = await routeMessage(world, "Дважды");
    expect(answered.agent).toBe("quiz");
    expect(classifierRequests()).toHaveLength(1);
  });

  it("a valid 'chat' answer keeps the study agents out too; an unusable one leaves them their patterns", async () => {
    world.ollama.script({ route: "chat", reply: '{"intent":"chat","argument":""}' });
    const chat = await routeMessage(world, "сделай карточки", { activeNotePath: "Океан/Приливы.md" });
    expect(chat.result).toBeNull();
    expect(world.ollama.requestsTo("chat")).toHaveLength(1);

    world.ollama.script([
      { route: "chat", reply: "Конечно! Я сделаю карточки.", times: 2 },
      { route: "chat", reply: cards },
    ]);
    const fallback = await routeMessage(world, "создай карточки", { activeNotePath: "Океан/Приливы.md" });
    expect(fallback.agent).toBe("flashcards");
    expect(fallback.result?.text).toMatch(/^Added 1 flashcard to \[\[Flashcards\/приливы\]\]/);
    expect(world.logs.some((l) => l.message.includes("classifier answer unusable"))).toBe(true);
  });
});
