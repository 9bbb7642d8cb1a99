import { promises as fs, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { FlashcardService } from "../../../src/core/flashcards/flashcard-service";
import { createFlashcardAgent } from "../../../src/core/flashcards/flashcard-agent";
import { parseCards } from "../../../src/core/flashcards/card-parser";
import { DEFAULT_SR_FORMAT, srFormatFromData } from "../../../src/core/flashcards/sr-format";
import { cardKey, deckTag } from "../../../src/core/flashcards/card-writer";
import { makeAgentsWorld, type AgentsWorld } from "../agents/agent-fixtures";

const SOURCE = [
  "# Photosynthesis",
  "",
  "Photosynthesis turns light into chemical energy. It happens in the chloroplasts.",
  "",
  "## Light reactions",
  "",
  "The light reactions split water and release oxygen. They make ATP and NADPH.",
  "",
  "## Calvin cycle",
  "",
  "The Calvin cycle fixes carbon dioxide into sugar using ATP.",
  "",
].join("\n");

type ModelCard = { type: string; front: string; back?: string; passage: number };
const reply = (cards: ModelCard[]) => JSON.stringify({ cards });

let world: AgentsWorld;
let service: FlashcardService;

beforeEach(async () => {
  world = await makeAgentsWorld({ files: { "Bio/Photosynthesis.md": SOURCE, "Bio/Other.md": "# Other\n\nNothing here." } });
  service = new FlashcardService({ host: world.host, settings: () => world.settings, index: world.index, chatModel: () => world.model });
});
afterEach(() => world.close());

/** The passage numbers the prompt offered, by a word in them. */
function passageNumber(prompt: string, word: string): number {
  const m = new RegExp(`\\[(\\d+)\\][^\\[]*${word}`).exec(prompt);
  if (!m) throw new Error(`no passage with ${word} in ${prompt}`);
  return Number(m[1]);
}

describe("FlashcardService", () => {
  it("writes grounded cards to a new deck note in SR format, linking each card's source heading; the source is untouched", async () => {
    world.ollama.script({
      route: "chat",
      reply: (req) =>
        reply([
          { type: "basic", front: "Where does photosynthesis happen?", back: "In the chloroplasts", passage: passageNumber(req.userText, "chloroplasts") },
          { type: "cloze", front: "The light reactions release ==oxygen==", back: "", passage: passageNumber(req.userText, "oxygen") },
          { type: "reversed", front: "Calvin cycle", back: "fixes CO2 into sugar", passage: passageNumber(req.userText, "Calvin") },
          { type: "basic", front: "Invented fact?", back: "From nowhere", passage: 99 },
        ]),
    });
    const run = await service.generate({ notePath: "Bio/Photosynthesis.md" });
    expect(run).toMatchObject({ deckPath: "Flashcards/Photosynthesis.md", createdDeck: true, counts: { ungrounded: 1, duplicates: 0, unusable: 0 } });
    const deck = await world.vault.read("Flashcards/Photosynthesis.md");
    expect(deck).toBe(
      [
        "---",
        "krypton-deck: true",
        'deck: "Photosynthesis"',
        `created: ${deck.match(/created: (\S+)/)?.[1]}`,
        "---",
        "",
        "#flashcards/photosynthesis",
        "",
        "Where does photosynthesis happen?::In the chloroplasts [[Bio/Photosynthesis#Photosynthesis]]",
        "",
        "The light reactions release ==oxygen== [[Bio/Photosynthesis#Light reactions]]",
        "",
        "Calvin cycle:::fixes CO2 into sugar [[Bio/Photosynthesis#Calvin cycle]]",
        "",
        "",
      ].join("\n"),
    );
    const cards = parseCards(deck).cards;
    expect(cards.map((c) => [c.kind, c.decks])).toEqual([
      ["basic", ["flashcards/photosynthesis"]],
      ["cloze", ["flashcards/photosynthesis"]],
      ["reversed", ["flashcards/photosynthesis"]],
    ]);
    expect(await world.vault.read("Bio/Photosynthesis.md")).toBe(SOURCE);
    expect(run.text).toContain("1 dropped for citing no passage");
    // Structured output: the schema went to Ollama as `format`.
    expect((world.ollama.requestsTo("chat")[0].body as { format: { type: string } }).format.type).toBe("object");
  });

  it("a second run on the unchanged source adds nothing; a changed source adds only the new card; SR comments stay", async () => {
    const first = (req: { userText: string }) =>
      reply([{ type: "basic", front: "Where does photosynthesis happen?", back: "In the chloroplasts", passage: passageNumber(req.userText, "chloroplasts") }]);
    world.ollama.script({ route: "chat", reply: first });
    await service.generate({ notePath: "Bio/Photosynthesis.md" });
    // The user reviews the card in SR, which writes its scheduling comment.
    const reviewed = (await world.vault.read("Flashcards/Photosynthesis.md")).replace(/(\]\]\n)/, "$1<!--SR:!2024-08-16,51,230-->\n");
    expect(parseCards(reviewed).cards[0].schedules).toEqual([{ due: "2024-08-16", algorithm: "sm2" }]);
    await world.vault.write("Flashcards/Photosynthesis.md", reviewed);

    world.ollama.script({
      route: "chat",
      reply: (req) =>
        reply([{ type: "basic", front: "where does Photosynthesis happen", back: "Chloroplasts!", passage: passageNumber(req.userText, "chloroplasts") }]),
    });
    const again = await service.generate({ notePath: "Bio/Photosynthesis.md" });
    expect(again.added).toHaveLength(0);
    expect(again.counts.duplicates).toBe(1);
    expect(await world.vault.read("Flashcards/Photosynthesis.md")).toBe(reviewed);

    await world.vault.write("Bio/Photosynthesis.md", `${SOURCE}\n## Pigments\n\nChlorophyll absorbs red and blue light.\n`);
    world.ollama.script({
      route: "chat",
      reply: (req) =>
        reply([
          { type: "basic", front: "Where does photosynthesis happen?", back: "In the chloroplasts", passage: passageNumber(req.userText, "chloroplasts") },
          { type: "basic", front: "Which light does chlorophyll absorb?", back: "Red and blue", passage: passageNumber(req.userText, "Chlorophyll") },
        ]),
    });
    const changed = await service.generate({ notePath: "Bio/Photosynthesis.md" });
    expect(changed.added.map((c) => c.front)).toEqual(["Which light does chlorophyll absorb?"]);
    const after = await world.vault.read("Flashcards/Photosynthesis.md");
    expect(after.startsWith(reviewed)).toBe(true);
    expect(after.slice(reviewed.length)).toBe("Which light does chlorophyll absorb?::Red and blue [[Bio/Photosynthesis#Pigments]]\n\n");
  });

  it("malformed model output (still invalid after the one repair) writes nothing and says why", async () => {
    world.ollama.script([
      { route: "chat", reply: "Sure! Here are your cards: front::back" },
      { route: "chat", reply: '{"cards": [{"front": 3}]}' },
    ]);
    await expect(service.generate({ notePath: "Bio/Photosynthesis.md" })).rejects.toThrow(/Could not generate flashcards: the model did not return valid JSON/);
    expect(await world.vault.exists("Flashcards/Photosynthesis.md")).toBe(false);
    expect(world.ollama.requestsTo("chat")).toHaveLength(2);
  });

  // Both once said "No new flashcards: Flashcards/Photosynthesis.md already has cards for everything the model
  // suggested", of a deck that did not exist; a cloze of markup alone was counted as already in it.
  it("a model suggesting no card, or none usable, is told as such, not as cards already in the deck", async () => {
    world.ollama.script({ route: "chat", reply: reply([]) });
    const none = await service.generate({ notePath: "Bio/Photosynthesis.md" });
    expect(none.text).toBe("No flashcards: the model suggested none for this text.");
    world.ollama.script({ route: "chat", reply: (req) => reply([{ type: "cloze", front: "==  ==", back: "", passage: passageNumber(req.userText, "oxygen") }]) });
    const unusable = await service.generate({ notePath: "Bio/Photosynthesis.md" });
    expect(unusable.counts).toEqual({ ungrounded: 0, duplicates: 0, unusable: 1 });
    expect(unusable.text).toBe("No new flashcards: none of the cards the model suggested could be added.\n\nSkipped: 1 dropped as not a valid card.");
    expect(await world.vault.exists("Flashcards/Photosynthesis.md")).toBe(false);
  });

  it("a failing later part of a long note writes nothing from the earlier parts", async () => {
    const long = ["# Long", ...Array.from({ length: 40 }, (_, i) => `\n## Part ${i}\n\n${`Fact number ${i} is about topic ${i}. `.repeat(12)}`)].join("\n");
    await world.vault.write("Long.md", long);
    world.ollama.script([
      { route: "chat", reply: (req) => reply([{ type: "basic", front: "What is fact 0?", back: "About topic 0", passage: passageNumber(req.userText, "Fact number 0 ") }]) },
      { route: "chat", reply: "not json", times: 2 },
    ]);
    await expect(service.generate({ notePath: "Long.md", max: 20 })).rejects.toThrow(/valid JSON/);
    expect(await world.vault.exists("Flashcards/Long.md")).toBe(false);
  });

  it("long notes go in parts; cards citing a passage of another part are dropped; the cap holds", async () => {
    const long = ["# Long", ...Array.from({ length: 40 }, (_, i) => `\n## Part ${i}\n\n${`Fact number ${i} is about topic ${i}. `.repeat(12)}`)].join("\n");
    await world.vault.write("Long.md", long);
    world.ollama.setDefault({
      route: "chat",
      reply: (req) => {
        const numbers = [...req.userText.matchAll(/\[(\d+)\] Fact number (\d+)/g)].map((m) => ({ n: Number(m[1]), fact: m[2] }));
        return reply([
          ...numbers.slice(0, 3).map((x) => ({ type: "basic", front: `What is fact ${x.fact} about?`, back: `topic ${x.fact}`, passage: x.n })),
          { type: "basic", front: "Out of part", back: "x", passage: numbers[0].n + 1000 },
        ]);
      },
    });
    const run = await service.generate({ notePath: "Long.md", max: 7 });
    expect(world.ollama.requestsTo("chat").length).toBeGreaterThan(1);
    expect(run.added).toHaveLength(7);
    expect(run.counts.ungrounded).toBeGreaterThan(0);
    expect(parseCards(await world.vault.read("Flashcards/Long.md")).cards).toHaveLength(7);
  });

  it("uses the separators from the Spaced Repetition plugin's data.json and drops cards containing them", async () => {
    await world.vault.write(
      ".obsidian/plugins/obsidian-spaced-repetition/data.json",
      JSON.stringify({ settings: { singleLineCardSeparator: ";;", singleLineReversedCardSeparator: ";;;", flashcardTags: ["#study"] } }),
    );
    world.ollama.script({
      route: "chat",
      reply: (req) =>
        reply([
          { type: "basic", front: "Where?", back: "Chloroplasts", passage: passageNumber(req.userText, "chloroplasts") },
          { type: "basic", front: "Bad;;card", back: "x", passage: passageNumber(req.userText, "chloroplasts") },
          { type: "cloze", front: "no deletion here", back: "", passage: passageNumber(req.userText, "oxygen") },
        ]),
    });
    const run = await service.generate({ notePath: "Bio/Photosynthesis.md", deck: "Bio deck" });
    expect(run.counts.unusable).toBe(2);
    const deck = await world.vault.read("Flashcards/Bio deck.md");
    expect(deck).toContain("#study/bio-deck\n\nWhere?;;Chloroplasts [[Bio/Photosynthesis#Photosynthesis]]\n\n");
    const format = srFormatFromData(await world.vault.read(".obsidian/plugins/obsidian-spaced-repetition/data.json"));
    expect(parseCards(deck, format).cards.map((c) => [c.front, c.decks])).toEqual([["Where?", ["study/bio-deck"]]]);
  });

  it.each([
    [["{{[c1::]answer[::hint]}}"], "The light reactions release {{oxygen}} [[Bio/Photosynthesis#Light reactions]]", "cloze", ""],
    [[], "The light reactions release …::oxygen [[Bio/Photosynthesis#Light reactions]]", "basic", `1 cloze card written as question and answer: the Spaced Repetition plugin's "Cloze Patterns" setting has no pattern Krypton can write a cloze in`],
  ])("writes clozes in the user's own cloze pattern %j, or says why it cannot", async (clozePatterns, line, kind, note) => {
    await world.vault.write(".obsidian/plugins/obsidian-spaced-repetition/data.json", JSON.stringify({ settings: { clozePatterns } }));
    world.ollama.script({
      route: "chat",
      reply: (req) => reply([{ type: "cloze", front: "The light reactions release ==oxygen==", back: "", passage: passageNumber(req.userText, "oxygen") }]),
    });
    const run = await service.generate({ notePath: "Bio/Photosynthesis.md" });
    const deck = await world.vault.read("Flashcards/Photosynthesis.md");
    expect(deck).toContain(`\n${line}\n`);
    const format = srFormatFromData(await world.vault.read(".obsidian/plugins/obsidian-spaced-repetition/data.json"));
    expect(parseCards(deck, format).cards.map((c) => c.kind)).toEqual([kind]);
    if (note) expect(run.text).toContain(note);
    else expect(run.text).not.toMatch(/question and answer/);
  });

  // Existing cards are keyed by the question their line asks; a cloze written as question and answer asks
  // "The light reactions release …", so keying the new one by its "==oxygen==" sentence added it again each run.
  it("with no cloze pattern, a second run does not add a cloze written as question and answer again", async () => {
    await world.vault.write(".obsidian/plugins/obsidian-spaced-repetition/data.json", JSON.stringify({ settings: { clozePatterns: [] } }));
    world.ollama.setDefault({
      route: "chat",
      reply: (req) => reply([{ type: "cloze", front: "The light reactions release ==oxygen==", back: "", passage: passageNumber(req.userText, "oxygen") }]),
    });
    await service.generate({ notePath: "Bio/Photosynthesis.md" });
    const deck = await world.vault.read("Flashcards/Photosynthesis.md");
    const again = await service.generate({ notePath: "Bio/Photosynthesis.md" });
    expect(again.added).toEqual([]);
    expect(again.counts.duplicates).toBe(1);
    const missed = { kind: "cloze" as const, front: "The light reactions release ==oxygen==", back: "", source: "Bio/Photosynthesis#Light reactions" };
    expect((await service.addCards("Photosynthesis", [missed])).added).toEqual([]);
    expect(await world.vault.read("Flashcards/Photosynthesis.md")).toBe(deck);
  });

  // A hand edit that leaves data.json unreadable (a trailing comma) once made Krypton write cards in SR's default
  // format without a word: the user's ";;" cards and Krypton's "::" cards then sat in one deck.
  it("says so when the Spaced Repetition plugin's settings cannot be read and its defaults are written", async () => {
    const dataJson = ".obsidian/plugins/obsidian-spaced-repetition/data.json";
    await world.vault.write(dataJson, '{"settings": {"singleLineCardSeparator": ";;",}}');
    world.ollama.setDefault({ route: "chat", reply: (req) => reply([{ type: "basic", front: "Where?", back: "Chloroplasts", passage: passageNumber(req.userText, "chloroplasts") }]) });
    const run = await service.generate({ notePath: "Bio/Photosynthesis.md" });
    expect(await world.vault.read("Flashcards/Photosynthesis.md")).toContain("\nWhere?::Chloroplasts [[");
    const paragraphs = run.text.split("\n\n");
    // Second, so the notice (the first two paragraphs) shows it too.
    expect(paragraphs[1]).toMatch(
      /^Written in the Spaced Repetition plugin's default card format \(question::answer, #flashcards\): \.obsidian\/plugins\/obsidian-spaced-repetition\/data\.json is not valid JSON \(.+\)\. Fix it and Krypton writes your own separators, tags and cloze patterns\.$/,
    );
    await world.vault.write(dataJson, '{"settings": {"singleLineCardSeparator": ";;"}}');
    const fixed = await service.generate({ notePath: "Bio/Photosynthesis.md", deck: "Other" });
    expect(await world.vault.read("Flashcards/Other.md")).toContain("\nWhere?;;Chloroplasts [[");
    expect(fixed.text).not.toMatch(/default card format/);
  });

  // SR loads no note in one of its "Folders to ignore". The user chose both folders, so the cards are written, but
  // without a word they would wait in a deck SR never shows.
  it("writes into a deck in one of the Spaced Repetition plugin's folders to ignore, and says SR will not review it", async () => {
    await world.vault.write(".obsidian/plugins/obsidian-spaced-repetition/data.json", JSON.stringify({ settings: { noteFoldersToIgnore: ["Flashcards"] } }));
    world.ollama.setDefault({ route: "chat", reply: (req) => reply([{ type: "basic", front: "Where?", back: "Chloroplasts", passage: passageNumber(req.userText, "chloroplasts") }]) });
    const run = await service.generate({ notePath: "Bio/Photosynthesis.md" });
    expect(run).toMatchObject({ createdDeck: true, srIgnoredFolder: "Flashcards" });
    expect(await world.vault.read("Flashcards/Photosynthesis.md")).toContain("\nWhere?::Chloroplasts [[");
    // Second, so the notice (the first two paragraphs) shows it too.
    expect(run.text.split("\n\n")[1]).toBe(
      'The Spaced Repetition plugin will not review the cards of Flashcards/Photosynthesis.md: it is in Flashcards, one of the Spaced Repetition plugin\'s "Folders to ignore". Change that setting or Krypton\'s flashcards folder to have them reviewed.',
    );
    const more = await service.addCards("Photosynthesis", [{ kind: "basic", front: "What is released?", back: "Oxygen", source: "Bio/Photosynthesis" }]);
    expect(more.text.split("\n\n")[1]).toMatch(/^The Spaced Repetition plugin will not review the cards of Flashcards\/Photosynthesis\.md: /);
    await world.vault.write(".obsidian/plugins/obsidian-spaced-repetition/data.json", JSON.stringify({ settings: { noteFoldersToIgnore: ["Archive"] } }));
    const elsewhere = await service.generate({ notePath: "Bio/Photosynthesis.md", deck: "Other" });
    expect(elsewhere.srIgnoredFolder).toBeUndefined();
    expect(elsewhere.text).not.toMatch(/Folders to ignore/);
  });

  // The deck was recreated at its old path with only the new cards: a deletion undone, or a second deck beside
  // the renamed one (in another case, on a case-sensitive disk: two decks of one name, refused by every later run).
  it.each([
    ["deleted", (root: string) => rmSync(join(root, "Flashcards/Photosynthesis.md"))],
    ["renamed", (root: string) => renameSync(join(root, "Flashcards/Photosynthesis.md"), join(root, "Flashcards/Plants.md"))],
  ])("a deck %s while the model makes the cards is not made again: nothing is written, and the user is told", async (_what, change) => {
    const deck = '---\nkrypton-deck: true\ndeck: "Photosynthesis"\n---\n\n#flashcards/photosynthesis\n\nOld::card\n<!--SR:!2024-08-16,51,230-->\n';
    await world.vault.write("Flashcards/Photosynthesis.md", deck);
    world.ollama.script({
      route: "chat",
      reply: (req) => {
        change(world.vault.root);
        return reply([{ type: "basic", front: "Where?", back: "Chloroplasts", passage: passageNumber(req.userText, "chloroplasts") }]);
      },
    });
    await expect(service.generate({ notePath: "Bio/Photosynthesis.md" })).rejects.toThrow(
      "Flashcards/Photosynthesis.md was moved or deleted while the cards were being made, so nothing was written. Ask again to make them.",
    );
    expect(await world.vault.exists("Flashcards/Photosynthesis.md")).toBe(false);
  });

  it("refuses to append to a note that is not a Krypton deck, and never touches it", async () => {
    await world.vault.write("Flashcards/Photosynthesis.md", "My own notes::keep\n");
    world.ollama.setDefault({ route: "chat", reply: (req) => reply([{ type: "basic", front: "Q", back: "A", passage: passageNumber(req.userText, "chloroplasts") }]) });
    await expect(service.generate({ notePath: "Bio/Photosynthesis.md" })).rejects.toThrow(/is not a Krypton deck/);
    expect(await world.vault.read("Flashcards/Photosynthesis.md")).toBe("My own notes::keep\n");
  });

  it("clear errors: no model, missing note, empty note, decks as sources, bad cap", async () => {
    await world.vault.write("Empty.md", "---\ntitle: x\n---\n");
    await expect(service.generate({ notePath: "Nope.md" })).rejects.toThrow("Note not found: Nope.md");
    await expect(service.generate({ notePath: "Empty.md" })).rejects.toThrow(/no text to make flashcards from/);
    await expect(service.generate({ notePath: "Flashcards/X.md" })).rejects.toThrow(/flashcards folder/);
    await expect(service.generate({ notePath: "../x.md" })).rejects.toThrow();
    await expect(service.generate({ notePath: "Bio/Photosynthesis.md", max: 0 })).rejects.toThrow(/at least 1/);
    await expect(service.generate({})).rejects.toThrow(/note or topic/);
    world.model = null;
    await expect(service.generate({ notePath: "Bio/Photosynthesis.md" })).rejects.toThrow(/No chat model/);
  });

  it("topic: passages come from the index, each card links the note it came from", async () => {
    world.ollama.setDefault({
      route: "chat",
      reply: (req) => reply([{ type: "basic", front: "What do light reactions release?", back: "Oxygen", passage: passageNumber(req.userText, "oxygen") }]),
    });
    const run = await service.generate({ topic: "photosynthesis" });
    expect(run.deckPath).toBe("Flashcards/photosynthesis.md");
    expect(run.sources).toEqual(["Bio/Photosynthesis.md"]);
    expect(await world.vault.read(run.deckPath)).toContain("[[Bio/Photosynthesis#");
  });

  it("lists the vault once a run: the passages and the deck note are read from the same listing and folder", async () => {
    world.ollama.setDefault({
      route: "chat",
      reply: (req) => reply([{ type: "basic", front: "What do light reactions release?", back: "Oxygen", passage: passageNumber(req.userText, "oxygen") }]),
    });
    const listNotes = jest.spyOn(world.host.vault, "listNotes");
    // And the flashcards folder ("Flashcards": one level) is looked up once, one folder's listing, no walk.
    const listFolders = jest.spyOn(world.host.vault, "listFolders");
    await service.generate({ notePath: "Bio/Photosynthesis.md" });
    expect([listNotes.mock.calls.length, listFolders.mock.calls]).toEqual([1, [[""]]]);
    listNotes.mockClear();
    listFolders.mockClear();
    await service.generate({ topic: "photosynthesis" });
    expect([listNotes.mock.calls.length, listFolders.mock.calls]).toEqual([1, [[""]]]);
  });

  it("chat: 'make flashcards from this note' uses the active note; 'make 5 flashcards about X' a topic", async () => {
    const agent = createFlashcardAgent({ flashcards: service, logger: world.host.logger });
    world.ollama.setDefault({
      route: "chat",
      reply: (req) => reply([{ type: "basic", front: "Where does photosynthesis happen?", back: "Chloroplasts", passage: passageNumber(req.userText, "chloroplasts") }]),
    });
    expect(await agent.tryHandle("how do flashcards work?", [], {})).toBeNull();
    expect((await agent.tryHandle("make flashcards from this note", [], {}))?.text).toMatch(/Open a note first/);
    const fromNote = await agent.tryHandle("Please make flashcards from this note", [], { activeNotePath: "Bio/Photosynthesis.md" });
    expect(fromNote?.text).toMatch(/Added 1 flashcard to \[\[Flashcards\/Photosynthesis\]\]/);
    // The topic's deck "photosynthesis" is the deck above (case aside): the same card is not added twice.
    const fromTopic = await agent.tryHandle("generate 5 flashcards about photosynthesis", [], {});
    expect(fromTopic?.text).toMatch(/^No new flashcards: Flashcards\/Photosynthesis\.md already has cards/);
  });
});

describe("FlashcardService.addCards (cards made earlier, e.g. a quiz's missed ones)", () => {
  it("creates the deck, then appends only cards not already there; a non-deck note of that name is refused", async () => {
    const card = { kind: "basic" as const, front: "Where does photosynthesis happen?", back: "In the chloroplasts", source: "Bio/Photosynthesis" };
    const other = { kind: "basic" as const, front: "What do light reactions release?", back: "Oxygen", source: "Bio/Photosynthesis#Light reactions" };
    expect((await service.addCards("Plants", [card])).createdDeck).toBe(true);
    const run = await service.addCards("Plants", [card, other]);
    expect(run).toMatchObject({ createdDeck: false, counts: { duplicates: 1 } });
    expect(run.added).toEqual([other]);
    const deck = await world.vault.read("Flashcards/Plants.md");
    expect(deck.match(/Where does photosynthesis happen\?/g)).toHaveLength(1);
    expect(deck).toContain("What do light reactions release?::Oxygen [[Bio/Photosynthesis#Light reactions]]");
    await world.vault.write("Flashcards/Mine.md", "# My own note\n");
    await expect(service.addCards("Mine", [card])).rejects.toThrow(/not a Krypton deck|not a deck/i);
    expect(await world.vault.read("Flashcards/Mine.md")).toBe("# My own note\n");
  });
});


describe("a deck named like an existing one, case and spacing aside", () => {
  const tides = '---\nkrypton-deck: true\ndeck: "Tides"\ncreated: 2026-11-01\n---\n\n#flashcards/tides\n\nWhat pulls the tides?::The Moon [[Ocean/Tides]]\n<!--SR:!2026-12-01,3,250-->\n\n';
  const where = (req: { userText: string }) => reply([{ type: "basic", front: "Where does photosynthesis happen?", back: "In the chloroplasts", passage: passageNumber(req.userText, "chloroplasts") }]);

  it("is that deck, at its real path: no second deck beside it (a case-sensitive disk)", async () => {
    await world.vault.write("Flashcards/Tides.md", tides);
    world.ollama.setDefault({ route: "chat", reply: where });
    const run = await service.generate({ notePath: "Bio/Photosynthesis.md", deck: "tides" });
    expect(run).toMatchObject({ deckPath: "Flashcards/Tides.md", createdDeck: false });
    expect(await world.vault.exists("Flashcards/tides.md")).toBe(false);
    const deck = await world.vault.read("Flashcards/Tides.md");
    expect(deck.startsWith(tides)).toBe(true);
    expect(deck).toContain("Where does photosynthesis happen?::In the chloroplasts");
    // Spacing aside too, and for cards made earlier (a quiz's) and for the Anki export.
    const more = await service.addCards("  TIDES ", [{ kind: "basic", front: "When is the spring tide?", back: "At full and new moon", source: "Ocean/Tides" }]);
    expect(more).toMatchObject({ deckPath: "Flashcards/Tides.md", createdDeck: false, added: [{ front: "When is the spring tide?" }] });
    expect((await service.exportAnki("tides")).deckPath).toBe("Flashcards/Tides.md");
  });

  // On a disk that ignores case (macOS) the setting's "Flashcards" is the folder "flashcards", which Obsidian
  // knows only by that spelling: creating "Flashcards/…" fails there ("Folder already exists").
  it("a new deck goes into the flashcards folder as the vault spells it, whatever the setting's case", async () => {
    await world.vault.write("flashcards/Tides.md", tides);
    world.settings.flashcardsFolder = "Flashcards";
    world.ollama.setDefault({ route: "chat", reply: where });
    const run = await service.generate({ notePath: "Bio/Photosynthesis.md", deck: "Photosynthesis" });
    expect(run).toMatchObject({ deckPath: "flashcards/Photosynthesis.md", createdDeck: true });
    expect(await world.vault.exists("Flashcards")).toBe(false);
  });

  it("an empty flashcards folder in another case than the setting's gets the first deck; a second run adds to it", async () => {
    // Empty but for a picture: no note tells its spelling, the folder itself does.
    await world.vault.write("flashcards/diagram.png", "png");
    world.settings.flashcardsFolder = "Flashcards";
    world.ollama.setDefault({ route: "chat", reply: where });
    const run = await service.generate({ notePath: "Bio/Photosynthesis.md", deck: "Photosynthesis" });
    expect(run).toMatchObject({ deckPath: "flashcards/Photosynthesis.md", createdDeck: true });
    expect(await world.vault.exists("Flashcards")).toBe(false);
    const more = await service.addCards("photosynthesis", [{ kind: "basic", front: "What do light reactions release?", back: "Oxygen", source: "Bio/Photosynthesis" }]);
    expect(more).toMatchObject({ deckPath: "flashcards/Photosynthesis.md", createdDeck: false, added: [{ front: "What do light reactions release?" }] });
    expect((await fs.readdir(join(world.vault.root, "flashcards"))).sort()).toEqual(["Photosynthesis.md", "diagram.png"]);
    // Its deck is no source of cards either.
    await expect(service.generate({ notePath: "flashcards/Photosynthesis.md", deck: "Again" })).rejects.toThrow(/is in the flashcards folder/);
  });

  it("a deck in the flashcards folder as the vault spells it is no source of cards, whatever the setting's case", async () => {
    await world.vault.write("flashcards/Tides.md", tides);
    world.settings.flashcardsFolder = "Flashcards";
    world.ollama.setDefault({ route: "chat", reply: where });
    await expect(service.generate({ notePath: "flashcards/Tides.md", deck: "Tides again" })).rejects.toThrow(
      "flashcards/Tides.md is in the flashcards folder: make cards from your notes, not from a deck.",
    );
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("two existing decks of that name are refused by name, before any model call", async () => {
    await world.vault.write("Flashcards/Tides.md", tides);
    await world.vault.write("Flashcards/tides.md", tides);
    world.ollama.setDefault({ route: "chat", reply: where });
    const chatsBefore = world.chatPrompts().length;
    await expect(service.generate({ notePath: "Bio/Photosynthesis.md", deck: "TIDES" })).rejects.toThrow(
      'More than one deck is named "TIDES": Flashcards/Tides.md, Flashcards/tides.md. Rename or merge them.',
    );
    expect(world.chatPrompts().length).toBe(chatsBefore);
    await expect(service.addCards("tides", [{ kind: "basic", front: "Q?", back: "A", source: "Ocean/Tides" }])).rejects.toThrow(/More than one deck/);
    expect(await world.vault.read("Flashcards/Tides.md")).toBe(tides);
    expect(await world.vault.read("Flashcards/tides.md")).toBe(tides);
  });
});

describe("a topic in another grammatical case than its deck's name", () => {
  const deck = (name: string) => `---\nkrypton-deck: true\ndeck: "${name}"\ncreated: 2026-11-01\n---\n\n#flashcards/${name}\n\nЧто вызывает приливы?::Притяжение Луны [[Океан/Приливы]]\n<!--SR:!2026-12-01,3,250-->\n\n`;
  const tidesNote = "# Приливы\n\nПриливы вызывает притяжение Луны. Приливы бывают дважды в сутки.\n";
  const card = (req: { userText: string }) => reply([{ type: "basic", front: "Сколько раз в сутки бывают приливы?", back: "Дважды", passage: passageNumber(req.userText, "дважды") }]);

  beforeEach(async () => {
    await world.close();
    world = await makeAgentsWorld({ files: { "Океан/Приливы.md": tidesNote, "Flashcards/приливы.md": deck("приливы") } });
    service = new FlashcardService({ host: world.host, settings: () => world.settings, index: world.index, chatModel: () => world.model });
    world.ollama.setDefault({ route: "chat", reply: card });
  });

  it("finds the deck through the search stemmer: \"карточки по приливам\" adds to \"приливы\"; a new topic keeps the user's wording", async () => {
    const agent = createFlashcardAgent({ flashcards: service, logger: world.host.logger });
    const run = await agent.tryHandle("сделай карточки по приливам", [], {});
    expect(run?.text).toMatch(/^Added 1 flashcard to \[\[Flashcards\/приливы\]\]\./);
    expect(await world.vault.exists("Flashcards/приливам.md")).toBe(false);
    expect(await world.vault.read("Flashcards/приливы.md")).toContain("Сколько раз в сутки бывают приливы?::Дважды");
    // A topic no deck is named like: a new deck in the request's own words.
    const fresh = await service.generate({ notePath: "Океан/Приливы.md", deck: "приливах и отливах" });
    expect(fresh).toMatchObject({ deckPath: "Flashcards/приливах и отливах.md", createdDeck: true });
  });

  it("two decks named like the topic are refused by name, before any model call", async () => {
    await world.vault.write("Flashcards/приливов.md", deck("приливов"));
    await expect(service.generate({ notePath: "Океан/Приливы.md", deck: "приливам" })).rejects.toThrow(
      'More than one deck is named like "приливам": Flashcards/приливов.md, Flashcards/приливы.md. Name one exactly.',
    );
    expect(world.ollama.requestsTo("chat")).toHaveLength(0);
  });
});

describe("deck tags keep every script's letters", () => {
  const card = (front: string) => ({ kind: "basic" as const, front, back: "yes", source: "Bio/Photosynthesis" });

  // The tag once went through accent folding: "ド" lost its dakuten (a lone mark, then "-"), "й" became "и",
  // Hangul fell apart into jamo.
  it("writes the name's letters as they are, lower-cased, in NFC; only what a tag cannot hold becomes '-'", () => {
    const tag = (name: string) => deckTag(name, DEFAULT_SR_FORMAT);
    expect(tag("ドイツ語")).toBe("#flashcards/ドイツ語");
    expect(tag("Йогурт и кефир")).toBe("#flashcards/йогурт-и-кефир");
    expect(tag("한국어 문법")).toBe("#flashcards/한국어-문법");
    expect(tag("हिन्दी")).toBe("#flashcards/हिन्दी");
    expect(tag("Café: crème brûlée!")).toBe("#flashcards/café-crème-brûlée");
    expect(tag("AWS SAA (2026)")).toBe("#flashcards/aws-saa-2026");
    // The same tag whichever Unicode form the name came in (a macOS file name is NFD).
    expect(tag("ドイツ語".normalize("NFD"))).toBe("#flashcards/ドイツ語");
    expect(tag("한국어".normalize("NFD"))).toBe("#flashcards/한국어");
    expect(tag("?!")).toBe("#flashcards/cards");
    // Krypton's reader (like Obsidian's) takes the whole tag back, marks included.
    for (const name of ["ドイツ語", "한국어", "हिन्दी", "Café"]) {
      expect(parseCards(`${tag(name)}\n\nQ::A\n`).cards[0].decks).toEqual([tag(name).slice(1)]);
    }
  });

  it("a new deck gets the tag; a second run appends under it without repeating it", async () => {
    await service.addCards("ドイツ語", [card("Was heißt Hund?")]);
    const first = await world.vault.read("Flashcards/ドイツ語.md");
    expect(first).toContain("\n#flashcards/ドイツ語\n");
    await service.addCards("ドイツ語", [card("Was heißt Katze?")]);
    const deck = await world.vault.read("Flashcards/ドイツ語.md");
    expect(deck.startsWith(first)).toBe(true);
    expect(deck.match(/#flashcards/g)).toHaveLength(1);
    expect(parseCards(deck).cards.map((c) => c.decks)).toEqual([["flashcards/ドイツ語"], ["flashcards/ドイツ語"]]);
  });

  it("a deck made with the old folded tag keeps it: new cards join that deck, no second tag", async () => {
    const old = '---\nkrypton-deck: true\ndeck: "ドイツ語"\ncreated: 2026-11-01\n---\n\n#flashcards/ト-イツ語\n\nWas heißt Hund?::der Hund [[Bio/Photosynthesis]]\n<!--SR:!2026-12-01,3,250-->\n\n';
    await world.vault.write("Flashcards/ドイツ語.md", old);
    const run = await service.addCards("ドイツ語", [card("Was heißt Katze?")]);
    expect(run).toMatchObject({ createdDeck: false, added: [{ front: "Was heißt Katze?" }] });
    const deck = await world.vault.read("Flashcards/ドイツ語.md");
    expect(deck).toBe(`${old}Was heißt Katze?::yes [[Bio/Photosynthesis]]\n\n`);
    // After a tag line of the user's at the end, the deck's own (old) tag is repeated, not the new form.
    const edited = `${deck}#flashcards/other\n\nMine::theirs\n\n`;
    await world.vault.write("Flashcards/ドイツ語.md", edited);
    await service.addCards("ドイツ語", [card("Was heißt Maus?")]);
    expect(await world.vault.read("Flashcards/ドイツ語.md")).toBe(`${edited}#flashcards/ト-イツ語\n\nWas heißt Maus?::yes [[Bio/Photosynthesis]]\n\n`);
  });
});

describe("the duplicate check", () => {
  const deck = (lines: string[]) => ['---\nkrypton-deck: true\ndeck: "Math"\ncreated: 2026-11-01\n---\n\n#flashcards/math\n', ...lines.map((l) => `${l}\n`), ""].join("\n");
  const basic = (front: string) => ({ kind: "basic" as const, front, back: "answer", source: "Bio/Photosynthesis" });

  // It once dropped every sign: "What is -5+3?" was a copy of "What is 5+3?", "C" of "C++".
  it("keeps signs: a card differing only in a sign is new; case, spacing and trailing punctuation still count as the same", async () => {
    const before = deck(["What is 5+3?::8 [[Math/Sums]]\n<!--SR:!2026-12-01,3,250-->", "What is C++?::A language", "## What is C#?::A language"]);
    await world.vault.write("Flashcards/Math.md", before);
    const run = await service.addCards("Math", [
      basic("What is -5+3?"),
      basic("what is 5 + 3"),
      basic("What is 5−3?"),
      basic("What is C?"),
      basic("WHAT IS C ++ ?!"),
      basic("What is C#"),
      basic("What is 53?"),
    ]);
    expect(run.added.map((c) => c.front)).toEqual(["What is -5+3?", "What is 5−3?", "What is C?", "What is 53?"]);
    expect(run.counts.duplicates).toBe(3);
    expect((await world.vault.read("Flashcards/Math.md")).startsWith(before)).toBe(true);
  });

  // SR asks a reversed card both ways: "B::A" or "B:::A" asks again what "A:::B" asks.
  it("a card asking the back of a reversed card (single- or multi-line) is a copy of it", async () => {
    const before = deck(["Calvin cycle:::fixes CO2 into sugar [[Bio/Photosynthesis#Calvin cycle]]\n<!--SR:!2026-12-01,3,250!2026-12-04,3,250-->", "Stroma\n??\nthe fluid around the thylakoids"]);
    await world.vault.write("Flashcards/Math.md", before);
    const run = await service.addCards("Math", [
      { kind: "basic", front: "Fixes CO2 into sugar?", back: "Calvin cycle", source: "Bio/Photosynthesis" },
      { kind: "reversed", front: "fixes CO2 into sugar", back: "the Calvin cycle", source: "Bio/Photosynthesis" },
      { kind: "basic", front: "The fluid around the thylakoids", back: "Stroma", source: "Bio/Photosynthesis" },
      { kind: "basic", front: "What fixes CO2 into sugar?", back: "The Calvin cycle", source: "Bio/Photosynthesis" },
    ]);
    expect(run.added.map((c) => c.front)).toEqual(["What fixes CO2 into sugar?"]);
    expect(run.counts.duplicates).toBe(3);
    expect(await world.vault.read("Flashcards/Math.md")).toBe(`${before}What fixes CO2 into sugar?::The Calvin cycle [[Bio/Photosynthesis]]\n\n`);
  });

  it("within one run, the model's reverse of a reversed card it suggested is dropped", async () => {
    world.ollama.script({
      route: "chat",
      reply: (req) =>
        reply([
          { type: "reversed", front: "Calvin cycle", back: "fixes CO2 into sugar", passage: passageNumber(req.userText, "Calvin") },
          { type: "basic", front: "Fixes CO2 into sugar", back: "Calvin cycle", passage: passageNumber(req.userText, "Calvin") },
          { type: "reversed", front: "fixes CO2 into sugar", back: "Calvin cycle", passage: passageNumber(req.userText, "Calvin") },
        ]),
    });
    const run = await service.generate({ notePath: "Bio/Photosynthesis.md" });
    expect(run.added.map((c) => [c.kind, c.front])).toEqual([["reversed", "Calvin cycle"]]);
    expect(run.counts.duplicates).toBe(2);
  });

  it("compares words and signs: a hyphen inside a word, markup and line-start markers are not signs; marks are letters", () => {
    const same = (a: string, b: string) => cardKey(a) === cardKey(b);
    expect(same("What is an X-ray?", "what is an x ray")).toBe(true);
    expect(same("COVID-19 spreads how?", "covid 19 spreads how")).toBe(true);
    expect(same("## What is **ATP**?", "- what is ATP")).toBe(true);
    expect(same("x > 5", "x < 5")).toBe(false);
    expect(same("5-3", "5 3")).toBe(false);
    // Devanagari vowel signs change the word: "कि" is not "का".
    expect(same("कि", "का")).toBe(false);
  });
});
