import { getHeapSnapshot } from "node:v8";
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

/** Strings on the heap longer than `minLength` that contain `needle`. */
async function heapStringsContaining(needle: string, minLength: number): Promise<number> {
  let json = "";
  for await (const part of getHeapSnapshot()) json += String(part);
  const snap = JSON.parse(json) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  let found = 0;
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    if (types[snap.nodes[i + typeAt]] !== "string") continue;
    const s = snap.strings[snap.nodes[i + nameAt]];
    if (s.length > minLength && s.includes(needle)) found++;
  }
  return found;
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
      expect(await heapStringsContaining(`${MARK} ${MARK} ${MARK}`, 200)).toBe(0);
      // The index works from what it kept: words, tags and titles are all still found.
      expect((await index.searchNotes("thylakoidmembranes7", { limit: 5 }))[0]?.path).toBe("Note 7.md");
      expect((await index.searchNotes("longtopicname12", { limit: 5 }))[0]?.path).toBe("Note 12.md");
      expect((await index.searchNotes("sliced 21", { limit: 5 }))[0]?.path).toBe("Note 21.md");
    } finally {
      await h.cleanup();
    }
  });
});
