import { getHeapSnapshot, setFlagsFromString } from "node:v8";
import { makeHarness } from "./index-harness";

/**
 * What the index keeps of a note once its chunks are saved must not keep the note's text alive: V8 cuts a
 * substring of 13+ characters as a view into its parent, so a tag, heading, title or index word taken from
 * a note would hold the whole note (or chunk text) in memory. At 100,000 notes that was ~250 MB.
 * The heap snapshot (taken after a full garbage collection) is the oracle: no string there may contain a
 * note's body.
 */

// Built at run time, so the only strings holding it are the notes' texts (the test's source holds the parts).
const MARK = ["quartz", "lantern"].join("");

function note(i: number): string {
  return [
    "---",
    `tags: [longtopicname${i}, another-long-tag-${i}]`,
    `aliases: [An alias long enough ${i}]`,
    "---",
    `# Photosynthesis experiments ${i}`,
    "",
    `${`${MARK} `.repeat(4)}chloroplastic${i} thylakoidmembranes${i} ` + "words of ordinary prose ".repeat(30),
    "",
    `## A heading long enough to be sliced ${i}`,
    "",
    `More text about mitochondrial${i} respiration and ${MARK} in a second section. ` + "filler sentence here ".repeat(30),
  ].join("\n");
}

/**
 * Whether any string on the heap contains `needle` with more text after it. Read as a stream from the
 * snapshot's JSON, whose string table holds every string: the needle itself (a string of its own, ending
 * in a quote there) does not count. No JSON.parse: in a long test run the snapshot is hundreds of MB.
 */
async function heapHoldsTextAround(needle: string): Promise<boolean> {
  const wanted = `${needle} `;
  let tail = "";
  for await (const part of getHeapSnapshot()) {
    const text = tail + String(part);
    if (text.includes(wanted)) return true;
    tail = text.slice(-wanted.length);
  }
  return false;
}

describe("index memory", () => {
  it("a saved note's text is not kept alive by its tags, title, headings or index words", async () => {
    // The notes' texts exist only on disk: nothing here keeps them.
    const h = await makeHarness(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`Note ${i}.md`, note(i)])));
    try {
      const index = h.open({ embedder: null });
      const status = await index.open();
      await index.idle();
      expect(status.notes).toBe(30);
      // Nothing holds a note's text or a chunk's (lower-cased) text any more (checked before any search,
      // whose results hold texts).
      expect(await heapHoldsTextAround(`${MARK} ${MARK} ${MARK}`)).toBe(false);
      // The index works from what it kept: words, tags and titles are all still found.
      expect((await index.searchNotes("thylakoidmembranes7", { limit: 5 }))[0]?.path).toBe("Note 7.md");
      expect((await index.searchNotes("longtopicname12", { limit: 5 }))[0]?.path).toBe("Note 12.md");
      expect((await index.searchNotes("sliced 21", { limit: 5 }))[0]?.path).toBe("Note 21.md");
    } finally {
      await h.cleanup();
    }
    // A hang guard, not a speed bound: late in a long run the worker's heap (and its snapshot) is large.
  }, 180_000);

  it("every note record and every chunk record shares one object shape, built or loaded", async () => {
    // V8's own test of two objects' hidden classes (natives syntax, enabled for this process). A shape per
    // note (what spreading a note's facts into its record did) cost ~45 MB of shapes at 100,000 notes.
    setFlagsFromString("--allow-natives-syntax");
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    const sameShape = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;
    const files = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`N${i}.md`, `---\ntags: [t${i}]\n---\n# Note ${i}\n\nText ${i} here.\n\n## Part\n\nMore ${i}.`]));
    files["Huge.md"] = "# Huge\n\n" + "line of text\n".repeat(50);
    const h = await makeHarness(files);
    type Records = { store: { notes: Map<string, { chunks: object[] }> } };
    const recordsOf = (index: unknown) => [...(index as Records).store.notes.values()];
    try {
      const built = h.open({ embedder: null, index: { maxNoteChars: 200 } });
      await built.open();
      await built.idle();
      const notes = recordsOf(built);
      expect(notes).toHaveLength(301);
      // One of them indexed in part (a record with its `limited` reason).
      expect(built.status().partial).toHaveLength(1);
      expect(notes.filter((n) => !sameShape(n, notes[0]))).toHaveLength(0);
      const chunks = notes.flatMap((n) => n.chunks);
      expect(chunks.filter((c) => !sameShape(c, chunks[0]))).toHaveLength(0);
      await built.close();
      const loaded = h.open({ embedder: null, index: { maxNoteChars: 200 } });
      await loaded.open();
      const again = recordsOf(loaded);
      expect(again.filter((n) => !sameShape(n, notes[0]))).toHaveLength(0);
      await loaded.close();
    } finally {
      await h.cleanup();
    }
  });
});
