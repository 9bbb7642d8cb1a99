/**
 * Every file name Krypton makes from a title (a study goal, a flashcard deck, a note the agents or "save as
 * note" create) comes from one rule in note-paths.ts: a name the vault path policy accepts as it is, whole
 * characters only, within the 255 bytes file systems allow, and the same on both hosts (the CLI's FsVault
 * and the Obsidian adapter over the stand-in).
 */
import { promises as fs } from "node:fs";
import { App, Plugin, type PluginManifest } from "../../support/obsidian-stub";
import { makeTempVault, type TempVault } from "../../support/temp-vault";
import { createNodeHost } from "../../../src/node/node-host";
import { ObsidianVault } from "../../../src/obsidian/host/obsidian-vault";
import { GoalService } from "../../../src/core/goals/goal-service";
import { FlashcardService } from "../../../src/core/flashcards/flashcard-service";
import { createUniqueNote, slugify } from "../../../src/core/notes/note-paths";
import { toNotePath } from "../../../src/core/notes/vault-path-policy";
import { DEFAULT_SETTINGS } from "../../../src/core/settings";
import type { Host } from "../../../src/core/ports/host";
import type { VaultIndexApi } from "../../../src/core/indexing/vault-index-api";

const TITLES = [
  'Tides: a "study" <guide> | part 1? *',
  "[[Links]] #tag ^block \\ back/slash",
  "a\u0007bell\u0001c",
  "a\u202Eevil.exe",
  "zero\u200Bwidth",
  "CON",
  "nul.txt",
  "Com1 ",
  "  ..hidden..  ",
  "trailing dots...",
  `${"x".repeat(79)}😀 and more`,
  `${"x".repeat(59)}𞤀𞤀 Adlam`,
  "漢".repeat(100),
  "😀".repeat(100),
  "e\u0301cole", // "école" with a combining accent (as macOS may hand it over)
];

class TestPlugin extends Plugin {}
const manifest: PluginManifest = { id: "krypton", name: "Krypton", version: "0.0.0" };
const noIndex = {} as VaultIndexApi; // creating goals and writing given cards never searches
const card = { kind: "basic" as const, front: "What moves the tides?", back: "The Moon", source: "Tides" };

interface HostWorld {
  temp: TempVault;
  host: Host;
  close(): void;
}

async function nodeWorld(): Promise<HostWorld> {
  const temp = await makeTempVault();
  return { temp, host: createNodeHost(temp.root), close: () => undefined };
}

async function obsidianWorld(): Promise<HostWorld> {
  const temp = await makeTempVault();
  const app = new App(temp.root);
  const plugin = new TestPlugin(app, manifest);
  plugin.load();
  const host = { ...createNodeHost(temp.root), vault: new ObsidianVault(app as never, plugin as never) };
  return { temp, host, close: () => plugin.unload() };
}

/** What each way of naming a file made of every title, on one host. */
async function namesOn(world: HostWorld): Promise<string[]> {
  const settings = () => ({ ...DEFAULT_SETTINGS });
  const goals = new GoalService({ host: world.host, settings, index: noIndex, timeZone: "UTC" });
  const decks = new FlashcardService({ host: world.host, settings, index: noIndex, chatModel: () => null });
  const paths: string[] = [];
  for (const title of TITLES) {
    paths.push((await goals.create(title)).path);
    paths.push((await decks.addCards(title, [card])).deckPath);
    paths.push((await createUniqueNote(world.host.vault, "Notes", slugify(title), "# Note\n")) ?? "no free name");
  }
  return paths;
}

function expectGoodName(path: string): void {
  expect(toNotePath(path, { configDir: ".obsidian", access: "write" })).toBe(path); // the policy takes it as it is, for a write too
  expect(Buffer.from(path, "utf8").toString("utf8")).toBe(path); // no half of a surrogate pair
  expect(path).toBe(path.normalize("NFC"));
  const name = path.slice(path.lastIndexOf("/") + 1);
  expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
  expect(name.replace(/\.md$/, "")).not.toMatch(/^[\s.]|[\s.]$/); // Windows drops trailing dots and spaces
}

test("names made from hostile titles are good file names, on disk as named, and the same on both hosts", async () => {
  const worlds = [await nodeWorld(), await obsidianWorld()];
  try {
    const [onNode, onObsidian] = [await namesOn(worlds[0]), await namesOn(worlds[1])];
    for (const path of onNode) expectGoodName(path);
    expect(onObsidian).toEqual(onNode);
    for (const world of worlds) {
      for (const path of onNode) expect(await world.temp.exists(path)).toBe(true);
      for (const folder of ["Notes", DEFAULT_SETTINGS.studyGoalsFolder, DEFAULT_SETTINGS.flashcardsFolder]) {
        const onDisk = (await fs.readdir(`${world.temp.root}/${folder}`)).sort();
        expect(onDisk).toEqual(onNode.filter((p) => p.startsWith(`${folder}/`)).map((p) => p.slice(folder.length + 1)).sort());
      }
    }
  } finally {
    for (const world of worlds) {
      world.close();
      await world.temp.cleanup();
    }
  }
});
