/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
/**
 * Deck names that differ only in case, in the real plugin on the Obsidian stand-in, on a case-sensitive disk
 * (Linux) and on one that ignores case (macOS, Windows). Obsidian's file tree is case-sensitive on both, while
 * adapter.exists follows the disk: asking for deck "tomatoes" beside "Tomatoes.md" once failed on macOS after
 * the model call ("Could not add cards … Note not found") and made a second deck on Linux.
 */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import { loadPlugin, type LoadedPlugin } from "./plugin-harness";

const DECK = '---\nkrypton-deck: true\ndeck: "Tomatoes"\ncreated: 2026-11-01\n---\n\n#flashcards/tomatoes\n\nWhen to water tomatoes?::Twice a week [[Garden/Tomatoes]]\n<!--SR:!2026-12-01,3,250-->\n\n';
const NOTES = { "Garden/Tomatoes.md": "# Tomatoes\n\nTomatoes need deep watering twice a week in July." };
const CARD = '{"cards":[{"type":"basic","front":"How deep should tomatoes be watered?","back":"Deeply","passage":1}]}';

let ollama: OllamaTestServer;
let p: LoadedPlugin;

beforeAll(async () => {
  ollama = await startOllamaServer();
  ollama.setDefault({ route: "chat", reply: CARD });
});
afterAll(() => ollama.close());
afterEach(() => p.close());

const open = async (caseInsensitiveDisk: boolean, decks: Record<string, string>) => {
  p = await loadPlugin(NOTES, { caseInsensitiveDisk, extraFiles: decks, data: { ollamaUrl: ollama.url, chatProvider: "ollama", chatModel: "llama3.1:8b" } });
  await p.layoutReady();
};
const chats = () => ollama.requestsTo("chat").length;

describe.each([
  ["a case-sensitive disk (Linux)", false],
  ["a disk that ignores case (macOS, Windows)", true],
])("on %s", (_disk, caseInsensitiveDisk) => {
  test('cards for deck "tomatoes" go into the deck note "Tomatoes", at its real path', async () => {
    await open(caseInsensitiveDisk, { "Flashcards/Tomatoes.md": DECK });
    const run = await p.services.core.flashcards.generate({ notePath: "Garden/Tomatoes.md", deck: "tomatoes" });
    expect(run).toMatchObject({ deckPath: "Flashcards/Tomatoes.md", createdDeck: false });
    const deck = await p.temp.read("Flashcards/Tomatoes.md");
    expect(deck.startsWith(DECK)).toBe(true);
    expect(deck).toContain("How deep should tomatoes be watered?::Deeply [[Garden/Tomatoes#Tomatoes]]");
    expect(p.app.vault.getMarkdownFiles().map((f) => f.path).filter((f) => f.startsWith("Flashcards/"))).toEqual(["Flashcards/Tomatoes.md"]);
  });

  test("an empty flashcards folder in another case than the setting's gets the first deck, once", async () => {
    p = await loadPlugin(NOTES, {
      caseInsensitiveDisk,
      beforeOpen: (root) => fs.mkdir(join(root, "flashcards")),
      data: { flashcardsFolder: "Flashcards", ollamaUrl: ollama.url, chatProvider: "ollama", chatModel: "llama3.1:8b" },
    });
    await p.layoutReady();
    const first = await p.services.core.flashcards.generate({ notePath: "Garden/Tomatoes.md", deck: "Garden care" });
    expect(first).toMatchObject({ deckPath: "flashcards/Garden care.md", createdDeck: true });
    const again = await p.services.core.flashcards.generate({ notePath: "Garden/Tomatoes.md", deck: "garden care" });
    expect(again).toMatchObject({ deckPath: "flashcards/Garden care.md", createdDeck: false });
    expect(p.app.vault.getAllLoadedFiles().map((f) => f.path).filter((f) => /^flashcards(\/|$)/i.test(f))).toEqual(["flashcards", "flashcards/Garden care.md"]);
    expect(await fs.readdir(p.temp.root)).not.toContain("Flashcards");
  });

  test("a new deck is still created when none has the name", async () => {
    await open(caseInsensitiveDisk, { "Flashcards/Tomatoes.md": DECK });
    const run = await p.services.core.flashcards.generate({ notePath: "Garden/Tomatoes.md", deck: "Garden care" });
    expect(run).toMatchObject({ deckPath: "Flashcards/Garden care.md", createdDeck: true });
    expect(await p.temp.read("Flashcards/Tomatoes.md")).toBe(DECK);
  });
});

test("two deck notes of one name (a case-sensitive disk) are refused by name before the model is asked", async () => {
  await open(false, { "Flashcards/Tomatoes.md": DECK, "Flashcards/tomatoes.md": DECK });
  const before = chats();
  await expect(p.services.core.flashcards.generate({ notePath: "Garden/Tomatoes.md", deck: "TOMATOES" })).rejects.toThrow(
    'More than one deck is named "TOMATOES": Flashcards/Tomatoes.md, Flashcards/tomatoes.md. Rename or merge them.',
  );
  expect(chats()).toBe(before);
  expect(await p.temp.read("Flashcards/Tomatoes.md")).toBe(DECK);
  expect(await p.temp.read("Flashcards/tomatoes.md")).toBe(DECK);
});
