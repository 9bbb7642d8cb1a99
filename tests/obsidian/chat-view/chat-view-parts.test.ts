/** @jest-environment jsdom */
// The small parts on their own: token batching, scroll following, the streaming block boundary,
// citation linking, mode availability, error hints.
import type { Source } from "../../../src/core/chat/chat-types";
import { DEFAULT_SETTINGS } from "../../../src/core/settings";
import { linkifyCitations } from "../../../src/obsidian/chat-view/citations";
import { answerNoteContent } from "../../../src/obsidian/chat-view/note-from-answer";
import { availableModes } from "../../../src/obsidian/chat-view/composer";
import { stableBoundary } from "../../../src/obsidian/chat-view/message-renderer";
import { ScrollFollow } from "../../../src/obsidian/chat-view/scroll-follow";
import { errorHint, indexBannerText } from "../../../src/obsidian/chat-view/states";
import { TokenBatcher } from "../../../src/obsidian/chat-view/token-batcher";
import "../../support/obsidian-stub/dom";
import { ManualFrames } from "./chat-view-fixture";

describe("TokenBatcher", () => {
  it("delivers all tokens of a frame at once, and nothing twice", () => {
    const frames = new ManualFrames();
    const out: string[] = [];
    const b = new TokenBatcher(frames.schedule, (t) => out.push(t));
    for (const t of ["a", "b", "c"]) b.push(t);
    expect(frames.count).toBe(1);
    expect(out).toEqual([]);
    frames.run();
    expect(out).toEqual(["abc"]);
    frames.run();
    expect(out).toEqual(["abc"]);
    b.push("d");
    b.flush(); // end of stream: no waiting for the frame
    expect(out).toEqual(["abc", "d"]);
    expect(frames.count).toBe(0);
    b.push("e");
    b.dispose();
    frames.run();
    expect(out).toEqual(["abc", "d"]);
  });
});

describe("ScrollFollow", () => {
  function scroller(height: number, client: number) {
    const el = document.createElement("div");
    let top = 0;
    Object.defineProperty(el, "scrollHeight", { get: () => height, configurable: true });
    Object.defineProperty(el, "clientHeight", { get: () => client });
    Object.defineProperty(el, "scrollTop", { get: () => top, set: (v: number) => (top = Math.min(v, height - client)) });
    return { el, grow: (by: number) => (height += by) };
  }

  it("follows new content while at the bottom, not after the user scrolled up, again after jumping", () => {
    const s = scroller(1000, 400);
    const follow = new ScrollFollow(s.el);
    const changes: boolean[] = [];
    follow.onChange((p) => changes.push(p));
    follow.follow();
    expect(s.el.scrollTop).toBe(600);
    s.grow(200);
    follow.follow();
    expect(s.el.scrollTop).toBe(800);

    s.el.scrollTop = 300; // the user scrolls up to read
    follow.onScroll();
    s.grow(200);
    follow.follow();
    expect(s.el.scrollTop).toBe(300);
    expect(changes).toEqual([false]);

    follow.jumpToBottom();
    expect(s.el.scrollTop).toBe(1000);
    expect(follow.isPinned).toBe(true);
    expect(changes).toEqual([false, true]);
  });
});

describe("stableBoundary", () => {
  it("ends after the last blank line outside code fences", () => {
    expect(stableBoundary("one")).toBe(0);
    expect(stableBoundary("one\n\ntwo")).toBe(5);
    expect(stableBoundary("a\n\n```\ncode\n\nmore")).toBe(3); // the blank line inside the open fence does not count
    expect(stableBoundary("a\n\n```\ncode\n\n```\n\nafter")).toBe("a\n\n```\ncode\n\n```\n\n".length);
  });
});

describe("linkifyCitations", () => {
  const sources: Source[] = [
    { n: 1, kind: "note", path: "A.md", title: "A", headings: [], startLine: 0, endLine: 1, snippet: "" },
    { n: 2, kind: "web", title: "B", url: "https://b.example/x", snippet: "" },
  ];
  it("links known numbers, including lists, and leaves code and unknown numbers alone", () => {
    const root = document.createElement("div");
    const p = root.createEl("p", { text: "See [1] and [1, 2], not [3] or [a]." });
    root.createEl("code", { text: "[1]" });
    const opened: [number, boolean][] = [];
    expect(linkifyCitations(root, sources, (s, t) => opened.push([s.n, t]))).toBe(3);
    expect(Array.from(p.querySelectorAll(".krypton-citation")).map((a) => a.textContent)).toEqual(["1", "1", "2"]);
    expect(p.textContent).toBe("See 1 and 12, not [3] or [a].");
    expect(root.querySelector("code")?.textContent).toBe("[1]");
    (p.querySelectorAll(".krypton-citation")[2] as HTMLElement).dispatchEvent(new MouseEvent("click", { metaKey: true }));
    expect(opened).toEqual([[2, true]]);
    expect(p.querySelectorAll(".krypton-citation")[2].getAttribute("aria-label")).toBe("Source 2: B (b.example)");
  });
  it("does nothing without sources", () => {
    const root = document.createElement("div");
    root.setText("Just [1].");
    expect(linkifyCitations(root, [], () => undefined)).toBe(0);
    expect(root.textContent).toBe("Just [1].");
  });
});

describe("states", () => {
  it("offers web and hybrid only with a Tavily key", () => {
    expect(availableModes(DEFAULT_SETTINGS)).toEqual(["none", "rag"]);
    expect(availableModes({ ...DEFAULT_SETTINGS, tavilyApiKey: " key " })).toEqual(["none", "rag", "web", "hybrid"]);
  });
  it("explains what to do for provider failures", () => {
    expect(errorHint("unreachable")).toContain("ollama serve");
    expect(errorHint("cors")).toContain("OLLAMA_ORIGINS");
    expect(errorHint("model-missing")).toContain("ollama pull");
    expect(errorHint("context-too-long")).toContain("Ollama context limit");
    expect(errorHint("something-else")).toBeNull();
  });
  it("describes index progress in words", () => {
    const base = { notes: 0, chunks: 0, embedded: 0, keywordOnly: false, embedder: null, failures: [] };
    expect(indexBannerText({ ...base, state: "ready" })).toBeNull();
    expect(indexBannerText({ ...base, state: "loading" })).toContain("Loading");
    expect(indexBannerText({ ...base, state: "indexing", progress: { done: 3, total: 10, phase: "chunking" } })).toContain("3 of 10");
  });
});

describe("answerNoteContent (Create note from answer)", () => {
  const web = (n: number, title: string, url: string): Source => ({ n, kind: "web", title, url, snippet: "" });
  const answer = (sources: Source[]) => ({ key: "k", role: "assistant" as const, content: "Paris [1].", sources, notices: [], status: "done" as const });

  it("links web sources by their http(s) address, with parentheses that cannot end the link early", () => {
    const text = answerNoteContent("Capital?", answer([web(1, "Paris [city]", "https://en.wikipedia.org/wiki/Paris_(France)")]) as never);
    expect(text).toContain("1. [Paris city](https://en.wikipedia.org/wiki/Paris_%28France%29)");
  });

  it("never writes a javascript: or file: address as a link", () => {
    const text = answerNoteContent("q", answer([web(1, "Trap", "javascript:alert(1)"), web(2, "Local", "file:///etc/passwd")]) as never);
    expect(text).not.toMatch(/\]\((javascript|file):/);
    expect(text).toContain("1. Trap (not a web address: `javascript:alert(1)`)");
    expect(text).toContain("2. Local (not a web address: `file:///etc/passwd`)");
  });
});
