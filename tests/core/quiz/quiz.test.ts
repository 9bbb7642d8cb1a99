import { FlashcardService } from "../../../src/core/flashcards/flashcard-service";
import { createQuizAgent } from "../../../src/core/quiz/quiz-agent";
import { QuizService } from "../../../src/core/quiz/quiz-service";
import { apartFromSiblings, gradeLocally, hintFor, quizCardsFromDeck, readCommand, record, startQuiz, summaryText, type QuizCard } from "../../../src/core/quiz/quiz-state";
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

  // SR keeps a card's list and quote markers in its text and renders it as Markdown, where they are a bullet or a
  // quote, not characters: the quiz asks and answers without them ("-5" is a sign, no marker).
  it("shows a card's sides without their line-start markers (list, quote, numbers kept)", () => {
    const deck = parseCards(
      [
        "#flashcards/bio",
        "",
        "- What is ATP?::- the cell's energy currency",
        "> Where is chlorophyll?::In the thylakoids",
        "> - Calvin cycle:::fixes CO2 into sugar",
        "* -5 + 3 equals?::-2",
        "- The powerhouse of the cell is the ==mitochondrion==",
        "",
        "> Stroma",
        "?",
        "> + the fluid around the thylakoids",
        "> + inside the chloroplast",
        "",
      ].join("\n"),
    ).cards;
    expect(quizCardsFromDeck(deck, "Flashcards/Bio.md").map((c) => [c.prompt, c.answer])).toEqual([
      ["What is ATP?", "the cell's energy currency"],
      ["Where is chlorophyll?", "In the thylakoids"],
      ["Calvin cycle", "fixes CO2 into sugar"],
      ["fixes CO2 into sugar", "Calvin cycle"],
      ["-5 + 3 equals?", "-2"],
      ["The powerhouse of the cell is the [...]", "mitochondrion"],
      ["Stroma", "the fluid around the thylakoids\ninside the chloroplast"],
    ]);
  });

  // SR's question-type.ts (QuestionTypeSingleLineReversed / QuestionTypeMultiLineReversed) expands a reversed
  // card into two review cards, side1→side2 and side2→side1: the quiz asks both, as it asks each cloze sibling.
  it("asks a reversed card both ways, single-line and multi-line: one question per SR review card", () => {
    const deck = parseCards(
      [
        "#flashcards/bio",
        "",
        "Calvin cycle:::fixes CO2 into sugar [[Bio/Photosynthesis#Calvin cycle]]",
        "<!--SR:!2024-08-16,51,230!2024-08-20,3,250-->",
        "",
        "Stroma",
        "??",
        "the fluid around the thylakoids <!--SR:!2024-08-16,51,230-->",
        "",
        "Where is chlorophyll?::In the thylakoids",
        "",
      ].join("\n"),
    ).cards;
    const quiz = quizCardsFromDeck(deck, "Flashcards/Bio.md");
    expect(quiz.map((c) => [c.kind, c.prompt, c.answer, c.of])).toEqual([
      ["reversed", "Calvin cycle", "fixes CO2 into sugar", 0],
      ["reversed", "fixes CO2 into sugar", "Calvin cycle", 0],
      ["multiline", "Stroma", "the fluid around the thylakoids", 1],
      ["multiline", "the fluid around the thylakoids", "Stroma", 1],
      ["basic", "Where is chlorophyll?", "In the thylakoids", 2],
    ]);
    // As many questions as SR has review cards: the parser's count, which a goal's plan counts due cards by.
    expect(quiz).toHaveLength(deck.reduce((n, c) => n + c.reviewCards, 0));
  });

  it("keeps a card's review cards apart where another question can go between, the rest in the order given", () => {
    const q = (prompt: string, of?: number): QuizCard => ({ kind: "basic", prompt, answer: "", source: "x", of });
    const order = (cards: QuizCard[]) => apartFromSiblings(cards).map((c) => c.prompt);
    expect(order([q("A→", 0), q("A←", 0), q("B", 1), q("C", 2)])).toEqual(["A→", "B", "A←", "C"]);
    expect(order([q("B", 1), q("A→", 0), q("A←", 0)])).toEqual(["A→", "B", "A←"]);
    expect(order([q("X1", 0), q("X2", 0), q("X3", 0), q("Y", 1), q("Z", 2)])).toEqual(["X1", "Y", "X2", "Z", "X3"]);
    // Too few others to go between; and questions of a quiz saved before `of` existed stay as they were.
    expect(order([q("X1", 0), q("X2", 0), q("X3", 0), q("Y", 1)])).toEqual(["X1", "Y", "X2", "X3"]);
    expect(order([q("P"), q("Q"), q("R", 0)])).toEqual(["P", "Q", "R"]);
  });

  it("grades exact and cloze answers without the model; free text is left to the model", () => {
    expect(gradeLocally(cards[0], "simple storage service!")).toMatchObject({ verdict: "correct", by: "local" });
    expect(gradeLocally(cards[1], "172.31.0.0/16")).toMatchObject({ verdict: "correct", by: "local" });
    expect(gradeLocally(cards[1], "10.0.0.0/8")).toMatchObject({ verdict: "wrong", by: "local" });
    expect(gradeLocally(cards[2], "it scales")).toBeNull();
    // Equal but for a sign is not the answer: "5" once passed for "-5", "C" for "C++".
    const cloze = (answer: string): QuizCard => ({ kind: "cloze", prompt: "[...]", answer, source: "x" });
    expect(gradeLocally(cloze("-5"), "5")).toMatchObject({ verdict: "wrong" });
    expect(gradeLocally(cloze("\u22125"), "-5")).toMatchObject({ verdict: "correct" });
    expect(gradeLocally(cloze("C++"), "C")).toMatchObject({ verdict: "wrong" });
    expect(gradeLocally({ kind: "basic", prompt: "Q", answer: "C#", source: "x" }, "C")).toBeNull();
    expect(gradeLocally(cloze("X-ray"), "x ray")).toMatchObject({ verdict: "correct" });
    // A minus between digits is a sign, written either way; only a hyphen inside a word is none.
    expect(gradeLocally(cloze("5\u22123"), "5 - 3")).toMatchObject({ verdict: "correct" });
    expect(gradeLocally(cloze("5\u22123"), "5 3")).toMatchObject({ verdict: "wrong" });
  });

  it("reads hint / skip / stop, anything else is an answer", () => {
    expect(readCommand("Hint")).toEqual({ type: "hint" });
    expect(readCommand("skip.")).toEqual({ type: "skip" });
    expect(readCommand("stop the quiz")).toEqual({ type: "stop" });
    expect(readCommand("  Simple Storage  ")).toEqual({ type: "answer", text: "Simple Storage" });
  });

  it("hints reveal more with each ask; the summary lists missed cards and says they stay in their deck", () => {
    const card: QuizCard = { kind: "basic", prompt: "Q", answer: "Simple Storage Service", source: "x" };
    expect(hintFor(card, 0)).toBe("Si… … …");
    expect(hintFor(card, 1)).toBe("Si… Sto… …");
    expect(hintFor(card, 2)).toBe("Si… Sto… Ser…");
    // Every word started: a letter more of each, never a whole word. A one-word answer's second hint once was its first.
    expect(hintFor(card, 3)).toBe("Sim… Stor… Serv…");
    const oneWord: QuizCard = { kind: "basic", prompt: "Q", answer: "Beta", source: "x" };
    expect([0, 1, 2, 3].map((n) => hintFor(oneWord, n))).toEqual(["Be…", "Bet…", "Bet…", "Bet…"]);
    let state = startQuiz("AWS", cards);
    state = record(state, "Simple Storage Service", { verdict: "correct", score: 1, feedback: "", by: "local" });
    state = record(state, "", { verdict: "skipped", score: 0, feedback: "", by: "local" });
    state = record(state, "it scales", { verdict: "partial", score: 0.5, feedback: "", by: "model" });
    expect(state.status).toBe("finished");
    const text = summaryText(state);
    expect(text).toContain("Score: 1.5 of 3");
    expect(text).toContain("The default VPC CIDR block is [...] → **172.31.0.0/16** (skipped)");
    expect(text).toContain("you said: it scales");
    expect(text).toContain("These cards stay in [[Flashcards/AWS]]");
    expect(text).not.toContain("make flashcards");
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

  it("never asks a reversed card's second direction right after the first, whatever the shuffle", async () => {
    await world.vault.write("Flashcards/Bio.md", "#flashcards/bio\n\nCalvin cycle:::fixes CO2 into sugar\n\nStroma::the fluid around the thylakoids\n");
    // The shuffle follows the start time: over these, some orders put the two directions side by side.
    for (let start = 1; start <= 12; start++) {
      const quiz = new QuizService({ host: { ...world.host, clock: { ...world.host.clock, now: () => start } }, settings: () => world.settings, chatModel: () => world.model });
      expect(await quiz.start(`b${start}`, "Bio")).toMatch(/Quiz on \*\*Bio\*\*: 3 cards/);
      const { cards } = JSON.parse((await world.host.data.readText(`quiz/b${start}.json`))!) as { cards: QuizCard[] };
      expect(cards[1].prompt).toBe("Stroma");
    }
  });

  it("a deck with more cards than a quiz asks: 20 questions from anywhere in it, a card's questions all in or all out", async () => {
    const basics = Array.from({ length: 50 }, (_, i) => `Term ${i + 1}::meaning ${i + 1}`);
    await world.vault.write("Flashcards/Big.md", `#flashcards/big\n\n${basics.join("\n\n")}\n\nCalvin cycle:::fixes CO2 into sugar\n`);
    const asked = new Set<string>();
    for (let start = 1; start <= 8; start++) {
      const quiz = new QuizService({ host: { ...world.host, clock: { ...world.host.clock, now: () => start * 7919 } }, settings: () => world.settings, chatModel: () => world.model });
      expect(await quiz.start(`big${start}`, "Big")).toMatch(/Quiz on \*\*Big\*\*: 20 cards/);
      const { cards } = JSON.parse((await world.host.data.readText(`quiz/big${start}.json`))!) as { cards: QuizCard[] };
      for (const card of cards) asked.add(card.prompt);
      // The reversed card's two directions come together or not at all.
      expect([0, 2]).toContain(cards.filter((c) => c.prompt === "Calvin cycle" || c.prompt === "fixes CO2 into sugar").length);
    }
    // Cards from past the first twenty of the deck are asked too.
    expect([...asked].some((p) => /^Term (2[1-9]|[34]\d|50)$/.test(p))).toBe(true);
  });

  it("a cloze with more siblings than a quiz asks is still quizzed, on 20 of them", async () => {
    const planets = Array.from({ length: 24 }, (_, i) => `==p${i + 1}==`).join(", ");
    await world.vault.write("Flashcards/Planets.md", `#flashcards/planets\n\nThe bodies in order: ${planets}\n`);
    expect(await newQuiz().start("pl", "Planets")).toMatch(/Quiz on \*\*Planets\*\*: 20 cards/);
    const { cards } = JSON.parse((await world.host.data.readText("quiz/pl.json"))!) as { cards: QuizCard[] };
    expect(new Set(cards.map((c) => c.answer)).size).toBe(20);
  });

  // Its missed cards are already in the deck: no offer to make cards of them ("make flashcards about Biology"
  // would add a second copy), but where they are and that SR, not the quiz, schedules them.
  it("a quiz on an existing deck ends without offering to make cards: the missed cards stay in the deck for SR", async () => {
    const deck = "#flashcards/biology\n\nWhere is chlorophyll?::In the thylakoids\n\nWhat does the Calvin cycle make?::Sugar\n";
    await world.vault.write("Flashcards/Biology.md", deck);
    await world.vault.write("Biology/Photosynthesis.md", "# Photosynthesis\n\nChlorophyll sits in the thylakoids.\n");
    const flashcards = new FlashcardService({ host: world.host, settings: () => world.settings, index: world.index, chatModel: () => world.model });
    const agent = createQuizAgent({ quiz: new QuizService({ host: world.host, settings: () => world.settings, chatModel: () => world.model, flashcards }), logger: world.host.logger });
    let reply = (await agent.tryHandle("quiz me on Biology", [], { conversationId: "bio" }))!.text;
    expect(reply).toMatch(/Quiz on \*\*Biology\*\*: 2 cards/);
    reply = (await agent.tryHandle("skip", [], { conversationId: "bio" }))!.text;
    reply = (await agent.tryHandle("skip", [], { conversationId: "bio" }))!.text;
    expect(reply).toMatch(/Quiz finished: Biology\.\*\* Score: 0 of 2\./);
    expect(reply).toContain("- Where is chlorophyll? → **In the thylakoids** (skipped)");
    expect(reply).toContain("- What does the Calvin cycle make? → **Sugar** (skipped)");
    expect(reply.endsWith("These cards stay in [[Flashcards/Biology]]: Spaced Repetition schedules their reviews (a quiz does not change them).")).toBe(true);
    expect(reply).not.toMatch(/make flashcards|Say "yes"/);
    // Nothing was offered: "yes" is normal chat, and the deck is as it was.
    expect(await agent.tryHandle("yes", [], { conversationId: "bio" })).toBeNull();
    expect(await world.vault.read("Flashcards/Biology.md")).toBe(deck);
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("a quiz started in a new conversation (no id yet) continues once the conversation has its id", async () => {
    const agent = createQuizAgent({ quiz: newQuiz(), logger: world.host.logger });
    expect((await agent.tryHandle("Test me on aws", [], {}))!.text).toMatch(/Quiz on/);
    expect((await agent.tryHandle("stop", [], { conversationId: "new-1" }))!.text).toMatch(/Score: 0 of 0 \(stopped after 0 of 3\)/);
  });

  it("finds a deck named in another grammatical case through the search stemmer (\"по приливам\" is the deck \"приливы\")", async () => {
    await world.vault.write("Flashcards/приливы.md", DECK.replace('deck: "AWS"', 'deck: "приливы"'));
    const agent = createQuizAgent({ quiz: newQuiz(), logger: world.host.logger });
    expect((await agent.tryHandle("проверь меня по приливам", [], { conversationId: "ru" }))!.text).toMatch(/^Quiz on \*\*приливы\*\*: 3 cards/);
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
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

// With SR's data.json unreadable its defaults stand in: a deck in the user's ";;" reads as no cards at all.
describe("quiz when the Spaced Repetition plugin's settings cannot be read", () => {
  let world: AgentsWorld;
  const READ_DEFAULTS =
    /Read in the Spaced Repetition plugin's default card format \(question::answer, #flashcards\): \.obsidian\/plugins\/obsidian-spaced-repetition\/data\.json is not valid JSON \(.+\)\. Fix it and Krypton reads your own separators, tags and cloze patterns\./;
  beforeEach(async () => {
    world = await makeAgentsWorld({
      files: {
        ".obsidian/plugins/obsidian-spaced-repetition/data.json": '{"settings": {"singleLineCardSeparator": ";;",}}',
        "Flashcards/Mine.md": "#flashcards/mine\n\nWhat does S3 stand for?;;Simple Storage Service\n",
        "Flashcards/AWS.md": DECK,
      },
    });
  });
  afterEach(() => world.close());
  const agent = () => createQuizAgent({ quiz: new QuizService({ host: world.host, settings: () => world.settings, chatModel: () => world.model }), logger: world.host.logger });

  it("a deck with no cards in the default format says why it has none", async () => {
    const text = (await agent().tryHandle("quiz me on Mine", [], { conversationId: "c" }))!.text;
    expect(text).toMatch(/^Flashcards\/Mine\.md has no flashcards to quiz you on\.\n\n/);
    expect(text).toMatch(READ_DEFAULTS);
  });

  it("a quiz on the cards the default format finds says so after its head", async () => {
    const paragraphs = (await agent().tryHandle("quiz me on AWS", [], { conversationId: "c" }))!.text.split("\n\n");
    expect(paragraphs[0]).toBe("Quiz on **AWS**: 3 cards.");
    expect(paragraphs[1]).toMatch(READ_DEFAULTS);
  });
});

// SR's "Tags to ignore" (flashcardTagsToIgnore): a note with one of them or a sub-tag, in frontmatter or text, has no cards for SR.
describe("quiz on a deck with one of the Spaced Repetition plugin's tags to ignore", () => {
  let world: AgentsWorld;
  beforeEach(async () => {
    world = await makeAgentsWorld({
      files: {
        ".obsidian/plugins/obsidian-spaced-repetition/data.json": JSON.stringify({ settings: { flashcardTagsToIgnore: ["#archived"] } }),
        "Flashcards/Old.md": "---\nkrypton-deck: true\ntags: [archived/2025]\n---\n#flashcards/old\n\nWhat does S3 stand for?::Simple Storage Service\n",
        "Flashcards/Later.md": "#flashcards/later\n\nWhat does S3 stand for?::Simple Storage Service\n\nParked for now #archived\n",
        // "#archivedX" is another tag, not a sub-tag: SR reviews these.
        "Flashcards/Kept.md": "#flashcards/kept #archivedX\n\nWhat does S3 stand for?::Simple Storage Service\n",
      },
    });
  });
  afterEach(() => world.close());
  const agent = () => createQuizAgent({ quiz: new QuizService({ host: world.host, settings: () => world.settings, chatModel: () => world.model }), logger: world.host.logger });

  it("asks none of its cards and says why, whether the tag is in the frontmatter (a sub-tag) or the text", async () => {
    expect((await agent().tryHandle("quiz me on Old", [], { conversationId: "c" }))!.text).toBe(
      'Flashcards/Old.md has no flashcards to quiz you on: its tag #archived/2025 is one of the Spaced Repetition plugin\'s "Tags to ignore".',
    );
    expect((await agent().tryHandle("quiz me on Later", [], { conversationId: "c" }))!.text).toBe(
      'Flashcards/Later.md has no flashcards to quiz you on: its tag #archived is one of the Spaced Repetition plugin\'s "Tags to ignore".',
    );
    expect((await agent().tryHandle("quiz me on Kept", [], { conversationId: "c" }))!.text).toMatch(/^Quiz on \*\*Kept\*\*: 1 card\./);
  });
});

// SR's "Folders to ignore" (noteFoldersToIgnore): SR loads no note whose path starts with an entry or matches it as a glob.
describe("quiz on a deck in one of the Spaced Repetition plugin's folders to ignore", () => {
  let world: AgentsWorld;
  const TAGGED = "#flashcards/physics\n\nWhat is F?::ma\n";
  beforeEach(async () => {
    world = await makeAgentsWorld({
      files: {
        ".obsidian/plugins/obsidian-spaced-repetition/data.json": JSON.stringify({ settings: { noteFoldersToIgnore: ["Archive", "**/*.draft.md"] } }),
        "Archive/2025/Physics.md": TAGGED,
        "School/Kinematics.draft.md": TAGGED,
        "School/Dynamics.md": TAGGED,
      },
    });
  });
  afterEach(() => world.close());
  const agent = () => createQuizAgent({ quiz: new QuizService({ host: world.host, settings: () => world.settings, chatModel: () => world.model }), logger: world.host.logger });

  it("asks none of its cards and says why, naming the folder or the pattern its path matches", async () => {
    expect((await agent().tryHandle("quiz me on Physics", [], { conversationId: "c" }))!.text).toBe(
      'Archive/2025/Physics.md has no flashcards to quiz you on: it is in Archive, one of the Spaced Repetition plugin\'s "Folders to ignore".',
    );
    expect((await agent().tryHandle("quiz me on Kinematics.draft", [], { conversationId: "c" }))!.text).toBe(
      'School/Kinematics.draft.md has no flashcards to quiz you on: its path matches **/*.draft.md, one of the Spaced Repetition plugin\'s "Folders to ignore".',
    );
    expect((await agent().tryHandle("quiz me on Dynamics", [], { conversationId: "c" }))!.text).toMatch(/^Quiz on \*\*Dynamics\*\*: 1 card\./);
  });
});

// SR reads a note's cards only when it has a flashcard tag, or with convertFoldersToDecks when it is in a folder.
describe("quiz on a note with cards but no flashcard tag", () => {
  let world: AgentsWorld;
  const UNTAGGED = "What does S3 stand for?::Simple Storage Service\n\nThe default VPC CIDR block is ==172.31.0.0/16==\n";
  beforeEach(async () => {
    world = await makeAgentsWorld({ files: { "Flashcards/Untagged.md": UNTAGGED, "Notes/Loose.md": UNTAGGED, "Loose at root.md": UNTAGGED } });
  });
  afterEach(() => world.close());
  const agent = () => {
    const flashcards = new FlashcardService({ host: world.host, settings: () => world.settings, index: world.index, chatModel: () => world.model });
    return createQuizAgent({ quiz: new QuizService({ host: world.host, settings: () => world.settings, chatModel: () => world.model, flashcards }), logger: world.host.logger });
  };
  const NO_TAG = "has no flashcards to quiz you on: it has no flashcard tag, and the Spaced Repetition plugin reviews cards only in notes with one. Add #flashcards to it.";

  it("asks none of them and names the tag to add, in the flashcards folder or not (no quiz from other notes instead)", async () => {
    expect((await agent().tryHandle("quiz me on Untagged", [], { conversationId: "c" }))!.text).toBe(`Flashcards/Untagged.md ${NO_TAG}`);
    expect((await agent().tryHandle("quiz me on Loose", [], { conversationId: "c" }))!.text).toBe(`Notes/Loose.md ${NO_TAG}`);
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("with folders as decks (convertFoldersToDecks) quizzes a note in a folder, and says why not one at the vault root", async () => {
    await world.vault.write(".obsidian/plugins/obsidian-spaced-repetition/data.json", JSON.stringify({ settings: { convertFoldersToDecks: true } }));
    expect((await agent().tryHandle("quiz me on Untagged", [], { conversationId: "c" }))!.text).toMatch(/^Quiz on \*\*Untagged\*\*: 2 cards\./);
    expect((await agent().tryHandle("stop", [], { conversationId: "c" }))!.text).toMatch(/Quiz finished/);
    expect((await agent().tryHandle("quiz me on Loose at root", [], { conversationId: "d" }))!.text).toBe(
      'Loose at root.md has no flashcards to quiz you on: the Spaced Repetition plugin takes folders as decks ("Convert folders to decks and subdecks"), and a note at the vault root is in none. Move it into a folder.',
    );
  });
});

describe("quiz on a topic without a deck: cards from the vault's notes, in memory", () => {
  let world: AgentsWorld;
  const MARS = "# Mars\n\nMars has two moons, Phobos and Deimos.\n\nThe largest volcano on Mars is Olympus Mons.\n";
  beforeEach(async () => {
    world = await makeAgentsWorld({ files: { "Space/Mars.md": MARS, "Flashcards/AWS.md": DECK } });
  });
  afterEach(() => world.close());
  const agentWith = () => {
    const flashcards = new FlashcardService({ host: world.host, settings: () => world.settings, index: world.index, chatModel: () => world.model });
    return createQuizAgent({ quiz: new QuizService({ host: world.host, settings: () => world.settings, chatModel: () => world.model, flashcards }), logger: world.host.logger });
  };
  const scriptCards = () =>
    world.ollama.script({
      route: "chat",
      reply: (req) => {
        const n = Number(/\[(\d+)\][^[]*Phobos/.exec(req.userText)![1]);
        return JSON.stringify({
          cards: [
            { type: "basic", front: "How many moons does Mars have?", back: "two", passage: n },
            { type: "cloze", front: "The largest volcano on Mars is ==Olympus Mons==", back: "", passage: n },
            { type: "basic", front: "Invented?", back: "x", passage: 99 },
          ],
        });
      },
    });
  const answer = (reply: string, right: boolean) => {
    const q = /\*\*(?:Question|Fill in the blank) \d of 2:\*\* (.+)/.exec(reply)![1];
    if (q.includes("moons")) return right ? "two" : "skip";
    return right ? "Olympus Mons" : "skip";
  };

  it("quizzes from the topic's notes without writing a deck; 'yes' writes only the missed cards to a new deck, then that deck is quizzed", async () => {
    scriptCards();
    const agent = agentWith();
    const before = await world.vault.read("Space/Mars.md");
    let reply = (await agent.tryHandle("quiz me on Mars", [], { conversationId: "m" }))!.text;
    expect(reply).toMatch(/No deck named "Mars": quiz from your notes \(\[\[Space\/Mars\]\]\), 2 cards, not saved to a deck/);
    expect(await world.vault.exists("Flashcards/Mars.md")).toBe(false);
    // The generator's prompt held the note's passages (grounded, askJson structured output).
    const gen = world.ollama.requestsTo("chat")[0];
    expect(gen.userText).toContain("Phobos and Deimos");
    expect((gen.body as { format?: { type?: string } }).format?.type).toBe("object");
    // One right (graded locally), one skipped.
    const firstIsMoons = reply.includes("moons");
    reply = (await agent.tryHandle(answer(reply, true), [], { conversationId: "m" }))!.text;
    reply = (await agent.tryHandle(answer(reply, false), [], { conversationId: "m" }))!.text;
    expect(reply).toMatch(/Quiz finished: Mars/);
    expect(reply).toContain('Say "yes" to add the 1 missed card to the deck "Mars"');
    expect(await world.vault.exists("Flashcards/Mars.md")).toBe(false);
    reply = (await agent.tryHandle("yes please", [], { conversationId: "m" }))!.text;
    expect(reply).toMatch(/Added 1 flashcard to \[\[Flashcards\/Mars\]\] \(new deck\)/);
    const deck = await world.vault.read("Flashcards/Mars.md");
    const missed = firstIsMoons ? "The largest volcano on Mars is ==Olympus Mons==" : "How many moons does Mars have?::two";
    const kept = firstIsMoons ? "How many moons" : "Olympus";
    expect(deck).toContain(`${missed} [[Space/Mars#Mars]]`);
    expect(deck).not.toContain(kept);
    expect(deck).toMatch(/^---\nkrypton-deck: true\n/);
    expect(await world.vault.read("Space/Mars.md")).toBe(before);
    // The offer is answered: "yes" again is normal chat.
    expect(await agent.tryHandle("yes", [], { conversationId: "m" })).toBeNull();

    // A second quiz from notes, all missed: "yes" appends to the deck, the card already there is not repeated.
    scriptCards();
    reply = (await agent.tryHandle("quiz me on Mars", [], { conversationId: "m2" }))!.text;
    // The deck "Mars" exists now: that is a quiz on the deck, not from notes.
    expect(reply).toMatch(/Quiz on \*\*Mars\*\*: 1 card/);
  });

  // The same questions as the deck these cards would make: SR's siblings of a cloze (clozecraft's getCardFront,
  // one per unnumbered deletion) and both directions of a reversed card (question-type.ts).
  it("asks generated cards as SR will review them: each deletion of a cloze, both ways of a reversed card; 'yes' writes a card once", async () => {
    world.ollama.script({
      route: "chat",
      reply: (req) => {
        const n = Number(/\[(\d+)\][^[]*Phobos/.exec(req.userText)![1]);
        return JSON.stringify({
          cards: [
            { type: "cloze", front: "Mars has two moons, ==Phobos== and ==Deimos==", back: "", passage: n },
            { type: "reversed", front: "Olympus Mons", back: "the largest volcano on Mars", passage: n },
          ],
        });
      },
    });
    const agent = agentWith();
    let reply = (await agent.tryHandle("quiz me on Mars", [], { conversationId: "s" }))!.text;
    expect(reply).toMatch(/quiz from your notes \(\[\[Space\/Mars\]\]\), 4 cards, not saved to a deck/);
    const state = JSON.parse((await world.host.data.readText("quiz/s.json"))!) as { cards: QuizCard[] };
    expect(state.cards.map((c) => [c.prompt, c.answer, c.of]).sort()).toEqual(
      [
        ["Mars has two moons, [...] and Deimos", "Phobos", 0],
        ["Mars has two moons, Phobos and [...]", "Deimos", 0],
        ["Olympus Mons", "the largest volcano on Mars", 1],
        ["the largest volcano on Mars", "Olympus Mons", 1],
      ].sort(),
    );
    // Both ways of the reversed card missed, the cloze right: "yes" writes the reversed card, once.
    for (const card of state.cards) reply = (await agent.tryHandle(card.kind === "cloze" ? card.answer : "skip", [], { conversationId: "s" }))!.text;
    expect(reply).toMatch(/Score: 2 of 4/);
    expect(reply).toContain('Say "yes" to add the 1 missed card to the deck "Mars"');
    reply = (await agent.tryHandle("yes", [], { conversationId: "s" }))!.text;
    expect(reply).toMatch(/Added 1 flashcard to \[\[Flashcards\/Mars\]\] \(new deck\)/);
    const deck = await world.vault.read("Flashcards/Mars.md");
    expect(deck.match(/Olympus Mons:::the largest volcano on Mars/g)).toHaveLength(1);
    expect(deck).not.toContain("Phobos");
  });

  it("lists the vault once: the deck lookup and the cards drafted from the notes share the listing", async () => {
    const agent = agentWith();
    const listNotes = jest.spyOn(world.host.vault, "listNotes");
    // No note of that name at all, then a note of that name with no cards in it (Space/Mars.md).
    for (const topic of ["Phobos", "Mars"]) {
      scriptCards();
      listNotes.mockClear();
      expect((await agent.tryHandle(`quiz me on ${topic}`, [], { conversationId: topic }))!.text).toMatch(new RegExp(`No deck named "${topic}": quiz from your notes`));
      expect(listNotes).toHaveBeenCalledTimes(1);
    }
  });

  it("declining the offer writes nothing and goes back to normal chat; a quiz with nothing missed makes no offer", async () => {
    scriptCards();
    const agent = agentWith();
    let reply = (await agent.tryHandle("quiz me on Mars", [], { conversationId: "d" }))!.text;
    reply = (await agent.tryHandle("skip", [], { conversationId: "d" }))!.text;
    reply = (await agent.tryHandle("stop", [], { conversationId: "d" }))!.text;
    expect(reply).toMatch(/stopped after 1 of 2/);
    expect(reply).toContain('Say "yes" to add the 1 missed card');
    expect(await agent.tryHandle("no thanks, what is Phobos?", [], { conversationId: "d" })).toBeNull();
    expect(await agent.tryHandle("yes", [], { conversationId: "d" })).toBeNull();
    expect(await world.vault.exists("Flashcards/Mars.md")).toBe(false);

    scriptCards();
    await agent.tryHandle("quiz me on Mars", [], { conversationId: "e" });
    reply = (await agent.tryHandle("stop", [], { conversationId: "e" }))!.text;
    expect(reply).not.toContain("missed");
    expect(await agent.tryHandle("yes", [], { conversationId: "e" })).toBeNull();
    expect(await world.vault.exists("Flashcards/Mars.md")).toBe(false);
  });

  // On a disk that ignores case (macOS, Windows) the setting's "flashcards" is the folder "Flashcards", where new
  // decks are made (folderAsSpelled): the quiz takes it as the deck folder too.
  it("the flashcards folder as the vault spells it, whatever the setting's case", async () => {
    world.settings.flashcardsFolder = "flashcards";
    // A note of the deck's name elsewhere, listed first: the deck in the flashcards folder is the one quizzed.
    await world.vault.write("Archive/AWS.md", "Old question::old answer\n");
    const agent = agentWith();
    expect((await agent.tryHandle("quiz me on AWS", [], { conversationId: "a" }))!.text).toMatch(/Quiz on \*\*AWS\*\*: 3 cards/);
    // An empty deck in the flashcards folder is explained, not quizzed from notes as an unrelated note would be.
    await world.vault.write("Flashcards/Mars.md", "---\nkrypton-deck: true\n---\n#flashcards/mars\n");
    expect((await agent.tryHandle("quiz me on Mars", [], { conversationId: "m" }))!.text).toBe("Flashcards/Mars.md has no flashcards to quiz you on.");
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });

  // isInFolder(path, "") is false for every path: the note listed first was quizzed, here the source note,
  // which has no cards, so the quiz was made from the notes (the deck among them) instead of the deck.
  it("with the vault root as the flashcards folder, the deck there is quizzed, not a note of its name in a folder", async () => {
    world.settings.flashcardsFolder = "";
    // Listed before the deck ("Astro/" < "Mars.md"), with no cards.
    await world.vault.write("Astro/Mars.md", MARS);
    await world.vault.write("Mars.md", "---\nkrypton-deck: true\n---\n#flashcards/mars\n\nHow many moons does Mars have?::two\n");
    const agent = agentWith();
    expect((await agent.tryHandle("quiz me on Mars", [], { conversationId: "m" }))!.text).toMatch(/^Quiz on \*\*Mars\*\*: 1 card\./);
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("no notes on the topic: a clear message, nothing written", async () => {
    const agent = agentWith();
    expect((await agent.tryHandle("quiz me on Kubernetes", [], { conversationId: "k" }))!.text).toMatch(/No notes match 'Kubernetes'/);
    expect(await world.host.data.readText("quiz/k.json")).toBeNull();
  });
});
