/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
/**
 * data.json changed on disk from outside Obsidian (a sync tool, another device): Obsidian 1.5.7+ calls the
 * plugin's onExternalSettingsChange, and Krypton applies what the file now says as it applies a change made in
 * its settings tab (KryptonServices.saveSettings): the core, the listeners, a re-index for index settings.
 */
import { clearNotices, noticeMessages } from "../support/obsidian-stub";
import { loadPlugin, type LoadedPlugin } from "./plugin-harness";

const DATA = ".obsidian/plugins/krypton/data.json";
let p: LoadedPlugin;

beforeEach(async () => {
  clearNotices();
  p = await loadPlugin({ "A.md": "# A\n\nApples in the orchard.", "Private/B.md": "# B\n\nApples in my diary." }, { data: { chatModel: "llama3.1:8b" } });
  await p.layoutReady();
});
afterEach(() => p.close());

const search = async (q: string) => (await p.services.core.index.searchNotes(q)).map((h) => h.path).sort();
const external = () => (p.plugin as unknown as { externalSettingsChanged(): Promise<void> }).externalSettingsChanged();

test("settings changed on disk are applied as a change in the settings tab is, and not written back", async () => {
  expect(await search("apples")).toEqual(["A.md", "Private/B.md"]);
  let heard = 0;
  p.services.onSettingsChange(() => heard++);
  const onDisk = { ...JSON.parse(await p.temp.read(DATA)), chatModel: "qwen2.5:7b", excludePatterns: ["Private/"] };
  const text = JSON.stringify(onDisk, null, 1);
  await p.temp.write(DATA, text);
  await external();
  expect(p.services.settings()).toMatchObject({ chatModel: "qwen2.5:7b", excludePatterns: ["Private/"] });
  expect(heard).toBe(1);
  // An index setting re-syncs the index, as from the tab: the excluded note leaves it.
  await p.settle();
  expect(await search("apples")).toEqual(["A.md"]);
  expect(await p.temp.read(DATA)).toBe(text);
});

test("the same settings again change nothing; a file that cannot be read keeps the settings and says so", async () => {
  let heard = 0;
  p.services.onSettingsChange(() => heard++);
  await external();
  expect(heard).toBe(0);
  // A sync tool caught mid-write.
  await p.temp.write(DATA, '{"chatModel": "qwen');
  await external();
  expect(p.services.settings().chatModel).toBe("llama3.1:8b");
  expect(heard).toBe(0);
  expect(noticeMessages().some((m) => /settings file changed on disk but could not be read/.test(m))).toBe(true);
  expect(await p.temp.read(DATA)).toBe('{"chatModel": "qwen');
});

test("an API key arriving in plain text (from a device without secret storage) moves to secret storage, as at load", async () => {
  const onDisk = { ...JSON.parse(await p.temp.read(DATA)), geminiApiKey: "AIza-from-elsewhere" };
  await p.temp.write(DATA, JSON.stringify(onDisk));
  await external();
  expect(p.services.settings().geminiApiKey).toBe("AIza-from-elsewhere");
  expect(p.app.secretStorage?.getSecret("krypton-gemini-api-key")).toBe("AIza-from-elsewhere");
  expect(await p.temp.read(DATA)).not.toContain("AIza-from-elsewhere");
});

/** A promise and the function that resolves it: a test holds a slow disk at one point with it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

test("a change made in the tab while data.json is being read for a reload is kept: the reload goes first, the change onto it", async () => {
  const plugin = p.plugin as unknown as { loadData(): Promise<unknown> };
  const load = plugin.loadData.bind(plugin);
  const slowDisk = gate();
  const read = gate();
  // The disk answers the reload's read late (a slow or busy disk): the file is read, its answer held back.
  plugin.loadData = async () => {
    const data = await load();
    read.open();
    await slowDisk.opened;
    return data;
  };
  await p.temp.write(DATA, JSON.stringify({ ...JSON.parse(await p.temp.read(DATA)), chatModel: "qwen2.5:7b" }));
  const reloaded = external();
  await read.opened;
  const saved = p.services.saveSettings({ defaultMode: "hybrid" });
  slowDisk.open();
  await Promise.all([reloaded, saved]);
  expect(p.services.settings()).toMatchObject({ chatModel: "qwen2.5:7b", defaultMode: "hybrid" });
  expect(JSON.parse(await p.temp.read(DATA))).toMatchObject({ chatModel: "qwen2.5:7b", defaultMode: "hybrid" });
});

test("unloading waits for a settings change still being written, so a reload of the plugin reads it", async () => {
  const plugin = p.plugin as unknown as { saveData(data: unknown): Promise<void> };
  const save = plugin.saveData.bind(plugin);
  const slowDisk = gate();
  let written: unknown = null;
  plugin.saveData = async (data) => {
    await slowDisk.opened;
    await save(data);
    written = data;
  };
  const saved = p.services.saveSettings({ chatModel: "qwen2.5:7b" });
  let writtenAtUnload: unknown = "not unloaded";
  const unloading = p.close().then(() => (writtenAtUnload = written));
  // Everything else unload does is done by now; only the write is held.
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(writtenAtUnload).toBe("not unloaded");
  slowDisk.open();
  await Promise.all([saved, unloading]);
  expect(writtenAtUnload).toMatchObject({ chatModel: "qwen2.5:7b" });
});
