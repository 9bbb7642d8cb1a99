// The chunker on a fixture vault (tests/fixtures/chunker-vault/) that holds every markdown feature the
// index must survive: exact line ranges and heading trails, then invariants (size bound, no broken
// fences, wikilinks, math or words) at several chunk sizes, then stress inputs.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { Chunk } from "../../../src/core/indexing/chunk";
import { noteMetadata, parseYamlSubset, readFrontmatter } from "../../../src/core/indexing/frontmatter";
import { HASH_SLICE_CHARS, hashText, hashTextSliced } from "../../../src/core/indexing/hash";
import { CHUNKER_VERSION, chunkNote, chunkNoteSliced, embeddingText, MIN_CHUNK_CHARS } from "../../../src/core/indexing/markdown-chunker";

const vaultRoot = join(__dirname, "..", "..", "fixtures", "chunker-vault");

function fixturePaths(dir = vaultRoot): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) return fixturePaths(full);
      return name.endsWith(".md") ? [relative(vaultRoot, full).split("\\").join("/")] : [];
    });
}

function fixture(path: string): string {
  return readFileSync(join(vaultRoot, path), "utf8");
}

function chunk(path: string, maxChars = 1500) {
  return chunkNote(path, fixture(path), { maxChars });
}

/** [startLine, endLine, heading trail] per chunk: the shape most assertions compare. */
function layout(chunks: Chunk[]): [number, number, string[]][] {
  return chunks.map((c) => [c.startLine, c.endLine, c.headings]);
}

describe("chunkNote on the fixture vault", () => {
  it("reads title, aliases and tags from frontmatter lists, and counts frontmatter lines", () => {
    const note = chunk("frontmatter-lists.md");
    expect(note.title).toBe("Gradient descent, explained");
    expect(note.aliases).toEqual(["GD", "Steepest descent, basic"]);
    expect(note.tags).toEqual(["ml/optimization", "study"]);
    expect(layout(note.chunks)).toEqual([[11, 11, ["Gradient descent"]]]);
    expect(note.chunks[0].text).toBe(
      "Gradient descent walks downhill on the loss surface. See [[Learning rate|the step size]] for tuning.",
    );
    expect(note.chunks[0].text).not.toContain("---");
    expect(note.chunks[0]).toMatchObject({ title: note.title, aliases: note.aliases, tags: note.tags });
  });

  it("reads scalar frontmatter (legacy tag/alias keys, #tags, comments) and inline #tags", () => {
    const note = chunk("frontmatter-scalars.md");
    expect(note.title).toBe("Books to read"); // no title field: the first H1
    expect(note.aliases).toEqual(["Reading list"]);
    expect(note.tags).toEqual(["inbox", "reading", "focus"]);
    expect(layout(note.chunks)).toEqual([[9, 10, ["Books to read"]]]);
  });

  it("tolerates junk frontmatter without throwing", () => {
    const note = chunk("frontmatter-junk.md");
    expect(note.title).toBe("unclosed");
    expect(note.aliases).toEqual(["It's fine"]);
    expect(note.tags).toEqual(["a", "b", "c"]);
    expect(layout(note.chunks)).toEqual([[12, 12, []]]);
    expect(note.chunks[0].text).toBe("Body after junk frontmatter.");
  });

  it("takes the file name as title when there is neither frontmatter title nor H1", () => {
    const note = chunk("no-frontmatter.md");
    expect(note.title).toBe("no-frontmatter");
    expect(note.tags).toEqual(["solo"]); // "#anchor" in a URL is not a tag
    expect(layout(note.chunks)).toEqual([[1, 3, []]]);
  });

  it("never reads a # inside a code fence as a heading and keeps fences whole", () => {
    const note = chunk("code-fences.md");
    expect(layout(note.chunks)).toEqual([
      [3, 20, ["Code samples"]],
      [24, 24, ["Code samples", "After code"]],
    ]);
    expect(note.chunks[0].text).toContain("# this is a comment, not a heading");
    expect(note.chunks[0].text).toContain('echo "## not a heading either"');
    expect(note.chunks[0].text).toContain("````markdown\n```js\nnested fence\n```\n````");
  });

  it("keeps callouts, including a fence inside one, in one piece", () => {
    const note = chunk("callouts.md");
    expect(layout(note.chunks)).toEqual([[3, 13, ["Callouts"]]]);
    expect(note.chunks[0].text).toContain("> [!note] Remember\n> Callouts are blockquotes with a type.\n>\n> They can span");
    expect(note.chunks[0].text).toContain("> ```js\n> const x = 1; // code inside a callout\n> ```");
  });

  it("keeps a table with its header and delimiter row", () => {
    const note = chunk("tables.md");
    expect(layout(note.chunks)).toEqual([[3, 9, ["Model comparison"]]]);
    expect(note.chunks[0].text.startsWith("| Model | Params | Notes |\n|:------|------:|-------|\n| Llama 3.1")).toBe(true);
  });

  it("keeps wikilinks with aliases, embeds and markdown links as written", () => {
    const note = chunk("links.md");
    expect(layout(note.chunks)).toEqual([[3, 9, ["Links and embeds"]]]);
    const text = note.chunks[0].text;
    expect(text).toContain("[[Notes/Deep learning#Backprop|backprop section]]");
    expect(text).toContain("![[diagram.png]]\n\n![[Callouts#Remember]]");
    expect(text).toContain("[Obsidian](https://obsidian.md)");
  });

  it("treats $$ blocks (multi-line and one-line) as blocks, and stray $ as text", () => {
    const note = chunk("math.md");
    expect(layout(note.chunks)).toEqual([[3, 11, ["Math"]]]);
    expect(note.chunks[0].text).toContain("$$\n\\nabla_\\theta J(\\theta)");
    expect(note.chunks[0].text.endsWith("Price is $5 and $$ is not a block here.")).toBe(true);
  });

  it("builds heading trails through nested ATX and setext headings", () => {
    const note = chunk("Notes/nested-headings.md");
    expect(note.title).toBe("Deep learning");
    expect(layout(note.chunks)).toEqual([
      [1, 1, []],
      [5, 5, ["Deep learning"]],
      [9, 9, ["Deep learning", "Backprop"]],
      [13, 13, ["Deep learning", "Backprop", "Details"]], // closing #s are not part of the heading
      [17, 17, ["Deep learning", "Backprop", "Details", "Tiny"]],
      [21, 21, ["Deep learning", "Optimizers"]],
      [26, 26, ["Deep learning", "Setext heading"]],
      [31, 31, ["Top again"]],
    ]);
    expect(note.chunks.map((c) => c.text)).toEqual([
      "Preamble before any heading.",
      "Intro to deep learning.",
      "Chain rule everywhere.",
      "Vanishing gradients.",
      "Level four.",
      "Adam and friends.",
      "Under a setext heading.",
      "Last words.",
    ]);
  });

  it("handles CRLF line endings and a byte-order mark exactly like LF", () => {
    const raw = fixture("crlf.md");
    expect(raw.charCodeAt(0)).toBe(0xfeff); // the fixture really has them (see .gitattributes)
    expect(raw).toContain("\r\n");
    const note = chunk("crlf.md");
    expect(note.title).toBe("Windows note");
    expect(note.tags).toEqual(["crlf"]);
    expect(layout(note.chunks)).toEqual([
      [6, 7, ["Heading"]],
      [11, 11, ["Heading", "Next"]],
    ]);
    expect(note.chunks[0].text).toBe("First line\nsecond line");
    const lf = chunkNote("crlf.md", raw.slice(1).replace(/\r\n/g, "\n"), { maxChars: 1500 });
    expect(lf).toEqual(note);
    const oldMac = chunkNote("crlf.md", raw.replace(/\r\n/g, "\r"), { maxChars: 1500 });
    expect(oldMac).toEqual(note);
  });

  it("handles unicode headings, CJK sentences and unicode tags (not all-digit ones)", () => {
    const note = chunk("unicode.md");
    expect(note.title).toBe("Ünïcödé 🚀");
    expect(note.tags).toEqual(["café", "日本", "a1"]);
    expect(layout(note.chunks)).toEqual([[3, 5, ["Ünïcödé 🚀"]]]);
  });

  it("splits CJK text at sentence ends when it must", () => {
    const sentence = "日本語の文章です。";
    const text = `# 日本\n\n${sentence.repeat(40)}`;
    const note = chunkNote("cjk.md", text, { maxChars: 100 });
    expect(note.chunks.length).toBeGreaterThan(3);
    for (const c of note.chunks) {
      expect(c.text.length).toBeLessThanOrEqual(100);
      expect(c.text.endsWith("。")).toBe(true);
    }
  });

  it("gives an empty note zero chunks but a title", () => {
    expect(chunk("empty.md")).toEqual({ title: "empty", aliases: [], tags: [], chunks: [] });
    expect(chunk("frontmatter-only.md")).toEqual({ title: "Only frontmatter", aliases: [], tags: ["x"], chunks: [] });
    expect(chunkNote("Folder/Blank.md", "\n\n   \n", { maxChars: 500 }).chunks).toEqual([]);
  });

  it("indexes a note made only of headings by its headings", () => {
    const note = chunk("headings-only.md");
    expect(note.title).toBe("Ideas");
    expect(layout(note.chunks)).toEqual([[1, 3, []]]);
    expect(note.chunks[0].text).toBe("# Ideas\n\n## Later");
  });

  it("packs small paragraphs together and splits long material at natural boundaries", () => {
    const note = chunk("long.md", 300);
    expect(layout(note.chunks)).toEqual([
      ...Array.from({ length: 7 }, (): [number, number, string[]] => [7, 7, ["Long material"]]),
      [11, 14, ["Long material", "A long list"]],
      [15, 18, ["Long material", "A long list"]],
      [19, 22, ["Long material", "A long list"]],
      [23, 25, ["Long material", "A long list"]],
      [29, 36, ["Long material", "A long code block"]],
      [37, 43, ["Long material", "A long code block"]],
      [44, 49, ["Long material", "A long code block"]],
      [50, 55, ["Long material", "A long code block"]],
      [56, 59, ["Long material", "A long code block"]],
      [63, 75, ["Long material", "A long table"]],
      [76, 86, ["Long material", "A long table"]],
      [87, 93, ["Long material", "A long table"]],
      [97, 102, ["Long material", "A long callout"]],
      [103, 107, ["Long material", "A long callout"]],
      [108, 112, ["Long material", "A long callout"]],
      [113, 117, ["Long material", "A long callout"]],
      [121, 128, ["Long material", "A long formula"]],
      [129, 135, ["Long material", "A long formula"]],
      [136, 141, ["Long material", "A long formula"]],
      [145, 145, ["Long material", "One enormous word"]],
      [145, 145, ["Long material", "One enormous word"]],
    ]);
    const paragraph = note.chunks.slice(0, 7);
    // The long paragraph is cut at sentence ends only.
    for (const c of paragraph) expect(c.text).toMatch(/[.!?]$/);
    expect(paragraph.map((c) => c.text).join(" ")).toBe(fixture("long.md").split("\n")[6]);
    // List pieces start at an item; code, table, formula and callout pieces are re-opened.
    for (const c of note.chunks.filter((c) => c.headings[1] === "A long list")) expect(c.text.startsWith("- Item ")).toBe(true);
    for (const c of note.chunks.filter((c) => c.headings[1] === "A long code block")) {
      expect(c.text.startsWith("```ts\n")).toBe(true);
      expect(c.text.endsWith("\n```")).toBe(true);
    }
    for (const c of note.chunks.filter((c) => c.headings[1] === "A long table")) {
      expect(c.text.startsWith("| Epoch | Loss | Accuracy |\n|---|---|---|\n| ")).toBe(true);
    }
    for (const c of note.chunks.filter((c) => c.headings[1] === "A long callout")) {
      expect(c.text.startsWith("> [!tip] Study plan\n> Week ")).toBe(true);
    }
    for (const c of note.chunks.filter((c) => c.headings[1] === "A long formula")) {
      expect(c.text.startsWith("$$\nx_")).toBe(true);
      expect(c.text.endsWith("\n$$")).toBe(true);
    }
  });

  it("uses the note's own lines as text when a block is not cut", () => {
    for (const path of fixturePaths().filter((p) => p !== "long.md")) {
      const lines = fixture(path).replace(/^\uFEFF/, "").split(/\r\n|\r|\n/);
      for (const c of chunk(path).chunks) {
        // Packed blocks are joined by one blank line; the source may have had more, so compare without blanks.
        const source = lines.slice(c.startLine - 1, c.endLine).filter((l) => l.trim() !== "");
        expect(c.text.split("\n").filter((l) => l.trim() !== "")).toEqual(source);
      }
    }
  });
});

describe("chunk invariants at every size", () => {
  const sizes = [MIN_CHUNK_CHARS, 150, 300, 700, 1500];
  const paths = fixturePaths();

  it("has a fixture vault with every feature", () => {
    expect(paths.length).toBeGreaterThanOrEqual(15);
  });

  for (const maxChars of sizes) {
    it(`keeps every chunk within ${maxChars} chars and every token whole`, () => {
      for (const path of paths) {
        const source = fixture(path);
        const note = chunkNote(path, source, { maxChars });
        const words = new Set(source.split(/\s+/));
        note.chunks.forEach((c, i) => {
          const where = `${path} chunk ${i} at ${maxChars}`;
          expect({ where, ok: c.text.length <= maxChars }).toEqual({ where, ok: true });
          expect({ where, text: c.text }).toEqual({ where, text: c.text.trim() });
          expect({ where, fences: unclosedFence(c.text) }).toEqual({ where, fences: null });
          expect({ where, links: brokenWikilinks(c.text) }).toEqual({ where, links: [] });
          expect({ where, math: mathBalanced(c.text) }).toEqual({ where, math: true });
          expect({ where, ok: c.startLine >= 1 && c.startLine <= c.endLine }).toEqual({ where, ok: true });
          // No word is cut, except the one word longer than any chunk.
          const cut = c.text.split(/\s+/).filter((w) => !words.has(w) && !w.includes("Pneumono"));
          expect({ where, cut }).toEqual({ where, cut: [] });
        });
        // Chunks come in note order and never overlap (a long word's pieces share its line).
        for (let i = 1; i < note.chunks.length; i++) {
          expect(note.chunks[i].startLine).toBeGreaterThanOrEqual(note.chunks[i - 1].endLine);
        }
      }
    });
  }

  it("gives unique, position-based ids and hashes that follow the embedded text", () => {
    for (const path of paths) {
      const note = chunk(path, 300);
      expect(note.chunks.map((c) => c.id)).toEqual(note.chunks.map((_, i) => `${path}#${i}`));
      for (const c of note.chunks) expect(c.textHash).toBe(hashText(embeddingText(c)));
    }
  });

  it("is deterministic", () => {
    for (const path of paths) expect(chunk(path, 300)).toEqual(chunk(path, 300));
  });
});

describe("incremental-friendly output", () => {
  const note = "# Plan\n\nFirst paragraph about apples.\n\n## Steps\n\nSecond paragraph about pears.\n\n## Risks\n\nThird about plums.\n";

  it("changes only the edited chunk's hash when one paragraph changes", () => {
    const before = chunkNote("plan.md", note, { maxChars: 500 }).chunks;
    const after = chunkNote("plan.md", note.replace("pears", "quinces"), { maxChars: 500 }).chunks;
    expect(after.map((c) => c.id)).toEqual(before.map((c) => c.id));
    expect(after.map((c, i) => c.textHash === before[i].textHash)).toEqual([true, false, true]);
  });

  it("gives identical text in two notes distinct ids (no content-hash collisions)", () => {
    const text = "---\ntitle: Copy\n---\nSame words.";
    const a = chunkNote("a.md", text, { maxChars: 500 }).chunks[0];
    const b = chunkNote("Folder/b.md", text, { maxChars: 500 }).chunks[0];
    expect(a.id).not.toBe(b.id);
    expect(a.textHash).toBe(b.textHash); // same embedded text: the vector can be reused
    const renamed = chunkNote("c.md", "Same words.", { maxChars: 500 }).chunks[0];
    expect(renamed.textHash).not.toBe(a.textHash); // the title is part of what gets embedded
  });

  it("puts title and heading trail into what gets embedded", () => {
    const c = chunkNote("Notes/Deep.md", "# Deep\n\n## Backprop\n\nChain rule.", { maxChars: 500 }).chunks[0];
    expect(embeddingText(c)).toBe("Deep > Backprop\n\nChain rule.");
    const plain = chunkNote("Notes/Plain.md", "Chain rule.", { maxChars: 500 }).chunks[0];
    expect(embeddingText(plain)).toBe("Plain\n\nChain rule.");
  });

  it("exports a numeric chunker version for the index manifest", () => {
    expect(typeof CHUNKER_VERSION).toBe("number");
  });
});

describe("hard inputs", () => {
  it("chunks a 5 MB single line within bounds", () => {
    const line = "Gradient descent takes one more small step downhill. ".repeat(100_000);
    const note = chunkNote("huge.md", line, { maxChars: 1500 });
    expect(note.chunks.length).toBeGreaterThan(3000);
    expect(Math.max(...note.chunks.map((c) => c.text.length))).toBeLessThanOrEqual(1500);
    expect(note.chunks.every((c) => c.startLine === 1 && c.endLine === 1)).toBe(true);
  });

  it("chunks 5 MB without any whitespace (the only case where a word is cut)", () => {
    const note = chunkNote("blob.md", "x".repeat(5_000_000), { maxChars: 1000 });
    expect(note.chunks.length).toBe(5000);
    expect(note.chunks.map((c) => c.text).join("")).toHaveLength(5_000_000);
  });

  it("chunks 100k lines with headings, stray $$ and [[ in linear time", () => {
    const lines = Array.from({ length: 100_000 }, (_, i) =>
      i % 50 === 0 ? `## Section ${i}` : i % 7 === 0 ? "$$ not closed" : i % 11 === 0 ? "[[ open link" : `Line ${i} of text.`,
    );
    const note = chunkNote("many.md", lines.join("\n"), { maxChars: 1500 });
    expect(note.chunks.length).toBe(2000);
    expect(note.chunks[1999].endLine).toBe(100_000);
  });

  it("closes a code fence that the note never closes", () => {
    const note = chunkNote("open.md", "# Open\n\n```js\nconst a = 1;\n# not a heading\n", { maxChars: 500 });
    expect(layout(note.chunks)).toEqual([[3, 6, ["Open"]]]);
    expect(note.chunks[0].text).toBe("```js\nconst a = 1;\n# not a heading\n\n```");
    const long = chunkNote("open.md", "```\n" + "code line\n".repeat(300), { maxChars: 200 });
    for (const c of long.chunks) expect(unclosedFence(c.text)).toBeNull();
  });

  it("clamps silly limits instead of looping forever", () => {
    const text = "word ".repeat(1000);
    expect(chunkNote("a.md", text, { maxChars: 0 }).chunks.every((c) => c.text.length <= MIN_CHUNK_CHARS)).toBe(true);
    expect(chunkNote("a.md", text, { maxChars: Number.NaN }).chunks.length).toBeGreaterThan(0);
  });

  it("does not take anchors in links for tags, and skips empty headings in the trail", () => {
    const note = chunkNote("n.md", "# A\n\nSee [[#Intro]], [[Note#Part]], [x](#anchor) and (#real).\n\n#\n\nAfter.", { maxChars: 500 });
    expect(note.tags).toEqual(["real"]);
    expect(layout(note.chunks)).toEqual([
      [3, 3, ["A"]],
      [7, 7, []],
    ]);
  });

  it("does not mistake a later --- for frontmatter", () => {
    const note = chunkNote("n.md", "Intro\n\n---\ntitle: no\n---\n", { maxChars: 500 });
    expect(note.title).toBe("n");
    expect(chunkNote("n.md", "---\ntitle: never closed\n\nBody", { maxChars: 500 }).title).toBe("n");
  });
});

describe("frontmatter subset parser", () => {
  it("parses scalars, quotes, comments, inline and block lists, block scalars and skips nested maps", () => {
    const fields = parseYamlSubset([
      "title: 'It''s: a \"title\"'",
      'subtitle: "line\\none"',
      "rating: 4 # comment",
      "tags: #idea",
      "aliases: [one, 'two, three', \"four\"]",
      "list:",
      "  - a",
      "  -",
      "  - 'b'",
      "author:",
      "  name: Ada",
      "summary: >",
      "  folded",
      "  text",
      "empty:",
      "nothing: ~",
      "url: https://example.com/a:b",
      "   ",
      "garbage line",
    ]);
    expect(fields).toEqual({
      title: "It's: a \"title\"",
      subtitle: "line\none",
      rating: "4",
      tags: "#idea",
      aliases: ["one", "two, three", "four"],
      list: ["a", "b"],
      author: null,
      summary: "folded text",
      empty: null,
      nothing: null,
      url: "https://example.com/a:b",
    });
  });

  it("normalizes tags from every accepted shape", () => {
    expect(noteMetadata({ tags: "#a, b c", tag: ["#d", "a"] }).tags).toEqual(["a", "b", "c", "d"]);
    expect(noteMetadata({ title: ["x", "y"], aliases: "Solo" })).toEqual({ title: "x y", aliases: ["Solo"], tags: [] });
    expect(noteMetadata(null)).toEqual({ title: null, aliases: [], tags: [] });
  });

  it("finds frontmatter only at the very top, closed by --- or ...", () => {
    expect(readFrontmatter(["---", "a: 1", "...", "body"])?.endLine).toBe(2);
    expect(readFrontmatter(["", "---", "a: 1", "---"])).toBeNull();
    expect(readFrontmatter(["---", "a: 1"])).toBeNull();
  });
});

describe("hashText", () => {
  it("is FNV-1a 64 over UTF-8", () => {
    expect(hashText("")).toBe("cbf29ce484222325");
    expect(hashText("a")).toBe("af63dc4c8601ec8c");
    expect(hashText("foobar")).toBe("85944171f73967e8");
    expect(hashText("héllo 😀")).toBe("7f7121cbd1d0a6ad");
    expect(hashText("x")).not.toBe(hashText("y"));
  });

  it("agrees with a BigInt FNV-1a 64 over TextEncoder bytes, zero-padded limbs included", () => {
    const reference = (text: string): string => {
      let h = 0xcbf29ce484222325n;
      for (const byte of new TextEncoder().encode(text)) h = ((h ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
      return h.toString(16).padStart(16, "0");
    };
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const alphabet = "ab é😀\n#0";
    for (let n = 0; n < 300; n++) {
      const text = Array.from({ length: Math.floor(random() * 40) }, () => [...alphabet][Math.floor(random() * [...alphabet].length)]).join("");
      expect(hashText(text)).toBe(reference(text));
    }
  });

  it("gives the same value hashed in slices, a tick between each, surrogate pairs and lone surrogates across slice ends too", async () => {
    const texts = ["", "a", "héllo 😀", "😀😀😀😀", "x\ud83d", "\ude00y\ud83d\ud83d😀", "ab é😀\n#0".repeat(50)];
    for (const text of texts) {
      for (const slice of [1, 2, 3, 7, 64]) {
        let ticks = 0;
        const sliced = await hashTextSliced(text, async () => void ticks++, slice);
        expect(sliced).toBe(hashText(text));
        // A tick between two slices, none after the last (a pair straddling a slice end is hashed whole).
        expect(ticks).toBeLessThan(Math.max(1, Math.ceil(text.length / slice)));
        if (text.length > 2 * slice) expect(ticks).toBeGreaterThanOrEqual(Math.floor(text.length / (slice + 1)) - 1);
      }
    }
  });

  it("hashes a 5 MB note in slices with the default size, to the same value", async () => {
    const note = "Paragraph with accents é and 😀 emoji.\n".repeat(130_000);
    let ticks = 0;
    expect(await hashTextSliced(note, async () => void ticks++)).toBe(hashText(note));
    expect(ticks).toBe(Math.ceil(note.length / HASH_SLICE_CHARS) - 1);
  });
});

describe("the example vault (examples/demo-vault)", () => {
  const demoRoot = join(__dirname, "..", "..", "..", "examples", "demo-vault");
  const demoNotes = readdirSyncDeep(demoRoot);

  it("looks like an Obsidian vault without a prebuilt index", () => {
    expect(readFileSync(join(demoRoot, ".obsidian", "app.json"), "utf8").trim()).toBe("{}");
    // The quick start builds demoRoot/.krypton at run time; what matters is that no index is shipped.
    const ignored = readFileSync(join(demoRoot, "..", "..", ".gitignore"), "utf8").split(/\r?\n/);
    expect(ignored).toContain(".krypton/");
    expect(demoNotes.length).toBeGreaterThanOrEqual(15);
    expect(demoNotes.length).toBeLessThanOrEqual(100);
  });

  it("has only wikilinks that resolve to a note in the vault", () => {
    const names = new Set(demoNotes.map((p) => p.slice(p.lastIndexOf("/") + 1).replace(/\.md$/, "")));
    const missing: string[] = [];
    for (const path of demoNotes) {
      const body = readFileSync(join(demoRoot, path), "utf8").replace(/`[^`\n]*`/g, "");
      for (const m of body.matchAll(/\[\[([^\]|#]+)/g)) if (!names.has(m[1])) missing.push(`${path} -> ${m[1]}`);
    }
    expect(missing).toEqual([]);
  });

  it("chunks every note, with titles, tags and a gradient descent section", () => {
    const all = demoNotes.map((path) => chunkNote(path, readFileSync(join(demoRoot, path), "utf8"), { maxChars: 1500 }));
    for (const note of all) {
      expect(note.chunks.length).toBeGreaterThan(0);
      expect(note.tags.length).toBeGreaterThan(0);
    }
    const gd = all.find((n) => n.title === "Gradient descent");
    expect(gd?.aliases).toEqual(["GD", "steepest descent"]);
    expect(gd?.chunks.some((c) => c.headings.join(" > ") === "Gradient descent > The update rule")).toBe(true);
  });
});

/** Vault-relative paths of the markdown files under root, skipping dot-folders. */
function readdirSyncDeep(root: string, dir = root): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      if (name.startsWith(".")) return [];
      const full = join(dir, name);
      if (statSync(full).isDirectory()) return readdirSyncDeep(root, full);
      return name.endsWith(".md") ? [relative(root, full).split("\\").join("/")] : [];
    });
}

// --- independent checkers (deliberately not the chunker's own parsing code) ---

/** The marker of a fence left open at the end of the text, or null. Quote prefixes are stripped. */
function unclosedFence(text: string): string | null {
  let open: string | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/^[ \t]*(?:>[ \t]?)*/, "").trim();
    const m = /^(`{3,}|~{3,})(.*)$/.exec(line);
    if (!m) continue;
    if (open === null) open = m[1];
    else if (m[1][0] === open[0] && m[1].length >= open.length && m[2].trim() === "") open = null;
  }
  return open;
}

/** Lines where a "[[" has no "]]" after it, or a "]]" has no "[[" before it. */
function brokenWikilinks(text: string): string[] {
  return text.split("\n").filter((line) => {
    const opens = line.split("[[").length - 1;
    const closes = line.split("]]").length - 1;
    return opens !== closes || (opens > 0 && line.indexOf("]]") < line.indexOf("[["));
  });
}

/** Display-math delimiters on their own lines come in pairs. */
function mathBalanced(text: string): boolean {
  let open = false;
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (t === "$$") open = !open;
    else if (t.startsWith("$$") && !(t.length >= 4 && t.endsWith("$$"))) open = !open;
    else if (open && t.endsWith("$$")) open = false;
  }
  return !open;
}

describe("chunkNoteSliced (the index's chunker, in steps)", () => {
  const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join("\n");
  const notes: [string, string][] = [
    ["nested-headings.md", lines(20_000, (i) => `${"#".repeat(1 + (i % 6))} Heading ${i} #tag${i % 7}\nline ${i}`)],
    ["bare-headings.md", lines(20_000, (i) => `# Heading ${i}`)],
    ["list.md", lines(60_000, (i) => `- item ${i}`)],
    ["unclosed-fence.md", "```js\n" + lines(20_000, (i) => `let x${i} = ${i};`)],
    ["quote.md", lines(20_000, (i) => `> quoted ${i}`)],
    ["one-line.md", "word ".repeat(200_000)],
    ["mixed.md", "---\ntags: [a]\n---\n" + lines(3_000, (i) => (i % 50 === 0 ? `## Part ${i}\n\n| a | b |\n|---|---|\n| ${i} | x |\n\n$$\nx^${i}\n$$\n` : `Para ${i} #t${i % 5} with [[link]].`))],
  ];

  it.each(notes)("%s: the same chunks as chunkNote, handing back control along the way", async (path, text) => {
    for (const maxChunks of [undefined, 50]) {
      const options = { maxChars: 1500, maxChunks };
      let ticks = 0;
      const sliced = await chunkNoteSliced(path, text, options, () => {
        ticks++;
        return Promise.resolve();
      });
      expect(sliced).toEqual(chunkNote(path, text, options));
      expect(ticks).toBeGreaterThan(0);
    }
  });

  it("stops when its tick throws (an aborted build)", async () => {
    const text = lines(20_000, (i) => `# Heading ${i}`);
    await expect(chunkNoteSliced("a.md", text, { maxChars: 1500 }, () => Promise.reject(new Error("Aborted")))).rejects.toThrow("Aborted");
  });
});
