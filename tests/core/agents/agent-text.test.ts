import { firstHeading, previewOf, readableNote, splitIntoParts } from "../../../src/core/notes/note-text";
import { cleanModelText } from "../../../src/core/model/ask-model";
import { MAX_SLUG_CHARS, noteLink, normalizeVaultPath, slugify } from "../../../src/core/notes/note-paths";
import { AgentError } from "../../../src/core/notes/agent-error";

describe("slugify", () => {
  it.each([
    ["Machine Learning Basics", "machine-learning-basics"],
    ["  C++ & Rust: a comparison!  ", "c-rust-a-comparison"],
    ["Crème brûlée", "creme-brulee"],
    ["Ελληνικά κείμενα", "ελληνικα-κειμενα"],
    ["東京 旅行", "東京-旅行"],
    ["ドイツ語の文法", "ドイツ語の文法"],
    ["Йога и сон", "йога-и-сон"],
    ["한국어 공부", "한국어-공부"],
    ["हिन्दी व्याकरण", "हिन्दी-व्याकरण"],
    ["ﬁnance Ｑ１", "finance-q1"],
    ["../../etc/passwd", "etc-passwd"],
    ["???", "note"],
    ["con", "con-note"],
  ])("%p → %p", (topic, slug) => {
    expect(slugify(topic)).toBe(slug);
  });

  it("cuts long topics at a word boundary", () => {
    const slug = slugify("the long and winding history of the roman empire from augustus to the fall of constantinople");
    expect(slug.length).toBeLessThanOrEqual(MAX_SLUG_CHARS);
    expect(slug).toBe("the-long-and-winding-history-of-the-roman-empire-from");
  });
});

describe("normalizeVaultPath", () => {
  it("accepts the ways people write vault folders", () => {
    expect(normalizeVaultPath("Krypton", ".obsidian", "folder", "write")).toBe("Krypton");
    expect(normalizeVaultPath(" /Notes//AI/ ", ".obsidian", "folder", "write")).toBe("Notes/AI");
    expect(normalizeVaultPath("Notes\\AI", ".obsidian", "folder", "write")).toBe("Notes/AI");
    expect(normalizeVaultPath("", ".obsidian", "folder", "write")).toBe("");
    expect(normalizeVaultPath("/", ".obsidian", "folder", "write")).toBe("");
  });

  it("refuses escapes with an AgentError", () => {
    expect(() => normalizeVaultPath("a/../../b", ".obsidian", "folder", "write")).toThrow(AgentError);
  });

  it("refuses a name Windows reserves for a folder to write in, not for a note to read", () => {
    expect(() => normalizeVaultPath("Notes/aux", ".obsidian", "folder", "write")).toThrow(/Windows reserves/);
    expect(normalizeVaultPath("Notes/aux.md", ".obsidian", "note path", "read")).toBe("Notes/aux.md");
  });
});

describe("note links", () => {
  it("links by path and labels with the title when it differs", () => {
    expect(noteLink("Cloud/aws.md", "AWS")).toBe("[[Cloud/aws|AWS]]");
    expect(noteLink("Cloud/aws.md", "aws")).toBe("[[Cloud/aws]]");
    expect(noteLink("a.md", "Title with | pipe ]]")).toBe("[[a|Title with pipe]]");
  });
});

describe("model output and markdown helpers", () => {
  it("drops reasoning blocks and a fence around the whole answer", () => {
    expect(cleanModelText("<think>x</think>\n```md\n# T\nbody\n```")).toBe("# T\nbody");
    expect(cleanModelText("# T\n\n```js\ncode\n```\n\nafter")).toBe("# T\n\n```js\ncode\n```\n\nafter");
  });

  it("finds the first H1 without emphasis", () => {
    expect(firstHeading("intro\n# **Bold** _title_ ##\n# second")).toBe("Bold title");
    expect(firstHeading("## only h2")).toBeNull();
  });

  it("previews text without headings or list markers", () => {
    expect(previewOf("# T\n\nFirst *line*.\n\n## Kinds\n- one\n- two")).toBe("First line. one two");
    expect(previewOf(`# T\n\n${"word ".repeat(100)}`, 50)).toMatch(/^(word ){8,}word…$|^(word ?)+…$/);
  });

  it("reads the title from frontmatter, then the H1, then the file name", () => {
    expect(readableNote("a/b.md", "---\ntitle: From FM\n---\n# H1\ntext")).toEqual({ title: "From FM", body: "# H1\ntext" });
    expect(readableNote("a/b.md", "# H1\ntext").title).toBe("H1");
    expect(readableNote("a/b.md", "text").title).toBe("b");
  });
});

describe("splitIntoParts", () => {
  it("packs paragraphs into parts no longer than the limit and loses nothing", () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `p${i} ${"x".repeat(i * 7)}`);
    const parts = splitIntoParts(paragraphs.join("\n\n"), 200);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(200);
    expect(parts.join("\n\n").replace(/\s+/g, "")).toBe(paragraphs.join("").replace(/\s+/g, ""));
  });

  it("splits an over-long paragraph at lines, then hard", () => {
    const parts = splitIntoParts(`${"a".repeat(450)}\nshort line`, 200);
    expect(parts.map((p) => p.length)).toEqual([200, 200, 50 + 2 + "short line".length]);
  });

  it("returns one part for short text", () => {
    expect(splitIntoParts("hello\n\nworld", 100)).toEqual(["hello\n\nworld"]);
  });
});
