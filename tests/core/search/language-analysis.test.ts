import { sealShard, shardLayout } from "../../support/shard-layout";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { MANIFEST_PATH, type Manifest } from "../../../src/core/indexing/index-persistence";
import { ANALYZER_VERSION, detectLanguage, forEachTerm } from "../../../src/core/indexing/text-analyzer";
import { HashEmbedder } from "../../support/hash-embedder";
import { makeHarness, type Harness } from "../indexing/index-harness";

const vault: Record<string, string> = {
  "Trabajo/Verificación de teléfono.md":
    "# Verificación de teléfono\n\nProceso para la verificación de teléfono de los usuarios nuevos: enviamos un código por SMS y el usuario lo introduce en la aplicación.",
  "Trabajo/Facturas.md": "# Facturas\n\nLas facturas se envían el primer día del mes a todos los clientes con el número de pedido.",
  "Obsidian/Hotkeys.md": "# Hotkeys\n\nMy custom key bindings: daily note on Ctrl+D, templates on Ctrl+T.",
  "Obsidian/Plugins.md": "# Plugins\n\nEvery plugin command can get a hotkey. The hotkey for the calendar plugin conflicts with the hotkey of search; set the hotkey again.",
  "Obsidian/Workflow.md": "# Workflow\n\nI press a hotkey to open the daily note, another hotkey for the command palette, and a hotkey for quick capture.",
  "Obsidian/Editing.md": "# Editing\n\nA hotkey moves lines up and down; multiple cursors need no hotkey.",
  "旅行/東京旅行.md": "# 東京旅行\n\n三日間の東京旅行の計画。浅草寺と東京スカイツリー、渋谷のスクランブル交差点。",
  "旅行/京都.md": "# 京都\n\n京都の寺と庭園。清水寺と金閣寺を見に行く。",
  "中文/北京.md": "# 北京\n\n我们在北京住了三天，参观了故宫和长城。",
  "Заметки/Изучение языка.md": "# Изучение языка\n\nНовые слова записываю в карточки и повторяю каждую неделю. Заметка о методах запоминания.",
  "Notizen/Umzug.md": "# Umzug\n\nVor dem Umzug in die neue Wohnung alle Umzugskartons beschriften und den Strom ummelden.",
  "Notes/Crêpes.md": "# Recette des crêpes\n\nMélanger la farine et les œufs, puis verser le lait petit à petit pour éviter les grumeaux.",
  "Notas/Horta.md": "# Horta em casa\n\nCultivar ervas na varanda: manjericão, salsa e hortelã, com vasos que drenam bem.",
  "Note/Risotto.md": "# Risotto\n\nTostare il riso con la cipolla, poi aggiungere il brodo caldo un mestolo alla volta e mescolare.",
  "Garden/Tomatoes.md": "# Tomatoes\n\nWater tomato plants deeply at the base; uneven watering splits the fruit.",
};

describe("language-aware keyword search (real index, keyword-only)", () => {
  let h: Harness;
  const paths = async (query: string) => (await index().searchNotes(query, { limit: 5 })).map((n) => n.path);
  let opened: ReturnType<Harness["open"]> | null = null;
  const index = () => opened as ReturnType<Harness["open"]>;

  beforeAll(async () => {
    h = await makeHarness(vault);
    opened = h.open({ embedder: null });
    await opened.open();
  });
  afterAll(async () => {
    await h.cleanup();
  });

  it("meets plural and singular, with and without accents (Spanish)", async () => {
    expect((await paths("verificaciones de telefono"))[0]).toBe("Trabajo/Verificación de teléfono.md");
    expect((await paths("teléfono"))[0]).toBe("Trabajo/Verificación de teléfono.md");
    expect((await paths("telefono"))[0]).toBe("Trabajo/Verificación de teléfono.md");
    expect((await paths("factura"))[0]).toBe("Trabajo/Facturas.md");
  });

  it("ranks Hotkeys.md first for 'hotkey' although other notes repeat the word", async () => {
    const hits = await paths("hotkey");
    expect(hits[0]).toBe("Obsidian/Hotkeys.md");
    expect(hits).toEqual(expect.arrayContaining(["Obsidian/Plugins.md", "Obsidian/Workflow.md", "Obsidian/Editing.md"]));
  });

  it("finds Japanese and Chinese notes by character bigrams", async () => {
    expect((await paths("東京"))[0]).toBe("旅行/東京旅行.md");
    expect(await paths("東京")).not.toContain("旅行/京都.md");
    expect((await paths("浅草寺"))[0]).toBe("旅行/東京旅行.md");
    expect((await paths("京都の寺"))[0]).toBe("旅行/京都.md");
    expect((await paths("故宫"))[0]).toBe("中文/北京.md");
  });

  it.each([
    ["Russian", "заметки карточка", "Заметки/Изучение языка.md"],
    ["German", "Umzugskarton beschriften", "Notizen/Umzug.md"],
    ["French", "grumeau", "Notes/Crêpes.md"],
    ["Portuguese", "erva", "Notas/Horta.md"],
    ["Italian", "mescolando il brodo", "Note/Risotto.md"],
    ["English", "watered tomato", "Garden/Tomatoes.md"],
  ])("%s: inflected forms meet (%s)", async (_language, query, expected) => {
    expect((await paths(query))[0]).toBe(expected);
  });

  it("gives a query about nothing in the vault a low score, and a real match a high one", async () => {
    const irrelevant = await index().searchNotes("quarterly llama tax tomato", { limit: 1 });
    // One common-ish word of four matches: the best hit is found but cannot look like a full match.
    expect(irrelevant[0].path).toBe("Garden/Tomatoes.md");
    expect(irrelevant[0].score).toBeLessThan(0.5);
    const relevant = await index().searchNotes("tomato watering", { limit: 1 });
    expect(relevant[0].score).toBeGreaterThan(0.8);
    expect(await index().searchNotes("xylophone zeppelin", { limit: 1 })).toEqual([]);
  });
});

describe("scores with vectors", () => {
  it("keep a query about nothing in the vault below a real match", async () => {
    const h = await makeHarness(vault, new HashEmbedder({ dim: 256, batchSize: 8 }));
    try {
      const index = h.open();
      await index.open();
      expect(await index.searchNotes("submarine propeller cavitation", { limit: 1 })).toEqual([]);
      // One word of four in the vault: found, but far below a real match.
      const [weak] = await index.searchNotes("submarine propeller cavitation tomato", { limit: 1 });
      const [relevant] = await index.searchNotes("water tomato plants", { limit: 1 });
      expect(weak.path).toBe("Garden/Tomatoes.md");
      expect(relevant.path).toBe("Garden/Tomatoes.md");
      expect(weak.score).toBeLessThan(0.3);
      expect(relevant.score).toBeGreaterThan(0.5);
    } finally {
      await h.cleanup();
    }
  });
});

describe("the analyser", () => {
  const terms = (text: string) => {
    const out: string[] = [];
    forEachTerm(text, detectLanguage(text), (t) => out.push(t));
    return out;
  };

  it("guesses the language from function words", () => {
    expect(detectLanguage("el proceso para la verificación de los usuarios")).toBe("es");
    expect(detectLanguage("mélanger la farine et les œufs avec le lait")).toBe("fr");
    expect(detectLanguage("vor dem Umzug in die neue Wohnung und den Strom")).toBe("de");
    expect(detectLanguage("cultivar ervas na varanda com vasos que drenam")).toBe("pt");
    expect(detectLanguage("tostare il riso con la cipolla e aggiungere il brodo")).toBe("it");
    expect(detectLanguage("новые слова записываю в карточки")).toBe("ru");
    expect(detectLanguage("hotkeys")).toBe("en");
  });

  it("stems, folds accents, drops function words and cuts CJK into bigrams", () => {
    expect(terms("Las verificaciones de teléfono")).toEqual(["verif", "telefon"]);
    expect(terms("The Hotkeys")).toEqual(["hotkey"]);
    expect(terms("東京タワー")).toEqual(["東京", "京タ", "タワ", "ワー"]);
    expect(terms("version v2 of snake_case")).toEqual(["version", "v2", "snake_case"]);
  });
});

describe("an index saved by another analyser version", () => {
  it("is re-analysed on load without re-embedding, and saved with the current version", async () => {
    const embedder = new HashEmbedder({ dim: 32, batchSize: 4 });
    const h = await makeHarness({ "Biology/Photosynthesis.md": "# Photosynthesis\n\nPlants turn light into sugar.", "Trains.md": "# Trains\n\nNight trains." }, embedder);
    try {
      const first = h.open();
      await first.open();
      await first.close();
      const embedded = embedder.texts.length;
      expect(embedded).toBeGreaterThan(0);
      const indexDir = join(h.vault.root, ".krypton", "index");
      await scrambleStoredWords(indexDir);

      // Same analyser version: the stored (now scrambled) words are used as they are, so the word is not found.
      const trusting = h.open();
      await trusting.open();
      expect(await trusting.searchNotes("photosynthesis", { semanticWeight: 0 })).toEqual([]);
      await trusting.close();

      // Another analyser version: the chunk texts are analysed again, the vectors are kept.
      const manifestPath = join(h.vault.root, ".krypton", MANIFEST_PATH);
      const manifest = JSON.parse(await readFile(manifestPath, "utf8")) as Manifest;
      expect(manifest.analyzerVersion).toBe(ANALYZER_VERSION);
      await writeFile(manifestPath, JSON.stringify({ ...manifest, analyzerVersion: ANALYZER_VERSION - 1 }));
      const reopened = h.open();
      const status = await reopened.open();
      expect(status.embedded).toBe(status.chunks);
      expect(embedder.texts.length).toBe(embedded);
      expect((await reopened.searchNotes("photosynthesis", { semanticWeight: 0 }))[0]?.path).toBe("Biology/Photosynthesis.md");
      await reopened.close();
      const saved = JSON.parse(await readFile(manifestPath, "utf8")) as Manifest;
      expect(saved.analyzerVersion).toBe(ANALYZER_VERSION);
      expect(saved.shards.map((s) => s.file)).not.toEqual(manifest.shards.map((s) => s.file));
    } finally {
      await h.cleanup();
    }
  });
});

/** Upper-cases every stored index word in each shard (queries are lower-cased, so none matches) and fixes the checksums. */
async function scrambleStoredWords(indexDir: string): Promise<void> {
  const manifestPath = join(indexDir, "manifest.json");
  const manifest = JSON.parse(await readFile(manifestPath, "utf8")) as Manifest;
  for (const shard of manifest.shards) {
    const file = join(indexDir, shard.file);
    const bytes = new Uint8Array(await readFile(file));
    const { wordsAt: dictStart, wordBytes: dictLength } = shardLayout(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    for (let i = dictStart; i < dictStart + dictLength; i++) if (bytes[i] >= 97 && bytes[i] <= 122) bytes[i] -= 32;
    await writeFile(file, bytes);
    sealShard(shard, bytes);
  }
  await writeFile(manifestPath, JSON.stringify(manifest));
  expect((await readdir(indexDir)).length).toBeGreaterThan(1);
}
