/** @jest-environment jsdom */
import { MarkdownRenderer, WorkspaceLeaf } from "../../support/obsidian-stub/workspace";
import { Platform } from "../../support/obsidian-stub/app";
import { agentNote, type Fixture, Gate, mountChatView, typeAndEnter } from "./chat-view-fixture";
import type { Source } from "../../../src/core/chat/chat-types";
import { KryptonChatView, VIEW_TYPE_KRYPTON_CHAT } from "../../../src/obsidian/chat-view/chat-view";
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { ConversationStore } from "../../../src/core/chat/conversation-store";
import { nodeClock } from "../../../src/node/node-clock";
import { silentLogger } from "../../../src/core/ports/logger";
import { FsDataDir, dataDirOf } from "../../../src/node/fs-data-dir";
import { makeTempVault } from "../../support/temp-vault";

const noteSource: Source = {
  n: 1,
  kind: "note",
  path: "Geo/France.md",
  title: "France",
  headings: ["Capital"],
  startLine: 12,
  endLine: 20,
  snippet: "Paris is the capital",
};
const webSource: Source = { n: 2, kind: "web", title: "Paris - Wikipedia", url: "https://en.wikipedia.org/wiki/Paris", snippet: "Paris" };

let f: Fixture;
afterEach(async () => {
  await f?.close();
  jest.restoreAllMocks();
});

const lastAnswer = () => {
  const answers = f.$$(".krypton-message-assistant");
  return answers[answers.length - 1];
};

describe("streaming", () => {
  it("batches tokens per animation frame and renders only the streaming message", async () => {
    f = await mountChatView();
    const gate = new Gate();
    const tokens = Array.from({ length: 40 }, (_, i) => ({ type: "token" as const, text: `w${i} ` }));
    f.chat.script(...tokens, { gate });
    const render = jest.spyOn(MarkdownRenderer, "render");

    typeAndEnter(f, "Tell me a story");
    for (let i = 0; i < 10; i++) await Promise.resolve();
    await new Promise((r) => setTimeout(r, 0));
    // 40 tokens arrived, nothing rendered yet: one frame is pending.
    expect(f.frames.count).toBe(1);
    expect(render).not.toHaveBeenCalled();

    f.frames.run();
    await f.view.settled().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 0));
    expect(render.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(render.mock.calls.length).toBeLessThanOrEqual(2);
    expect(lastAnswer().textContent).toContain("w39");
    expect(lastAnswer().classList.contains("is-streaming")).toBe(true);

    // The user's question was not re-rendered through Markdown (no whole-list re-render).
    const renderedTexts = render.mock.calls.map((c) => c[1]);
    expect(renderedTexts.some((t) => t.includes("Tell me a story"))).toBe(false);

    gate.open();
    await f.settle();
    expect(lastAnswer().classList.contains("is-streaming")).toBe(false);
    expect(lastAnswer().querySelector(".krypton-message-body")?.textContent?.trim()).toBe(tokens.map((t) => t.text).join("").trim());
  });

  it("renders finished blocks once while the tail keeps streaming", async () => {
    f = await mountChatView();
    const gate = new Gate();
    f.chat.script({ type: "token", text: "# Title\n\nFirst paragraph.\n\nSecond" }, { gate }, { type: "token", text: " paragraph." });
    typeAndEnter(f, "q");
    await f.settle();
    const body = lastAnswer().querySelector(".krypton-message-body") as HTMLElement;
    expect(body.querySelector(".krypton-stream-stable h1")?.textContent).toBe("Title");
    expect(body.querySelector(".krypton-stream-tail")?.textContent).toContain("Second");
    const stableBlock = body.querySelector(".krypton-stream-stable > div");
    gate.open();
    await f.settle();
    expect(stableBlock?.isConnected).toBe(false); // final render replaced the streaming scaffold
    expect(body.querySelectorAll("p")).toHaveLength(2);
    expect(body.textContent).toContain("Second paragraph.");
  });

  it("Send becomes Stop while streaming; Stop keeps the partial answer marked as stopped", async () => {
    f = await mountChatView();
    f.chat.script({ type: "token", text: "Partial answer" }, { waitForAbort: true }, { type: "token", text: " never shown" });
    typeAndEnter(f, "Explain");
    await f.settle();
    const button = f.$(".krypton-send");
    expect(button.getAttribute("aria-label")).toBe("Stop generating");
    expect(f.view.isStreaming).toBe(true);

    button.click();
    await f.settle();
    expect(f.view.isStreaming).toBe(false);
    expect(button.getAttribute("aria-label")).toBe("Send");
    const answer = lastAnswer();
    expect(answer.classList.contains("is-stopped")).toBe(true);
    expect(answer.querySelector(".krypton-badge-stopped")?.textContent).toBe("Stopped");
    expect(answer.textContent).toContain("Partial answer");
    expect(answer.textContent).not.toContain("never shown");
    expect(f.chat.calls[0].options.signal?.aborted).toBe(true);
    const stored = await f.store.get(f.view.controller.conversationId as string);
    expect(stored?.messages[1].stopped).toBe(true);
  });
});

describe("closing the view", () => {
  it("cancels the animation frame an answer's tokens were waiting for", async () => {
    f = await mountChatView();
    const gate = new Gate();
    f.chat.script({ type: "token", text: "Half an answer " }, { gate }, { type: "token", text: "never shown" });
    typeAndEnter(f, "q");
    for (let i = 0; i < 10; i++) await Promise.resolve();
    await new Promise((r) => setTimeout(r, 0));
    expect(f.frames.count).toBe(1);
    await f.close();
    expect(f.frames.count).toBe(0);
    gate.open();
  });
});

describe("composer", () => {
  it("Enter sends, Shift+Enter does not, and the options reach ChatService", async () => {
    f = await mountChatView({ activeNote: "Daily/today.md" });
    typeAndEnter(f, "line one", { shiftKey: true });
    expect(f.chat.calls).toHaveLength(0);
    (f.$(".krypton-use-note input") as HTMLInputElement).click();
    typeAndEnter(f, "  What is new?  ");
    await f.settle();
    expect(f.chat.calls).toHaveLength(1);
    expect(f.chat.calls[0].message).toBe("What is new?");
    expect(f.chat.calls[0].options).toMatchObject({ mode: "rag", activeNotePath: "Daily/today.md", useActiveNote: true });
    expect((f.$(".krypton-input") as HTMLTextAreaElement).value).toBe("");
    expect(f.$(".krypton-message-user").textContent).toBe("What is new?");
  });

  it("shows only configured modes: web and hybrid need a Tavily key", async () => {
    f = await mountChatView();
    const options = () => Array.from((f.$(".krypton-mode-select") as HTMLSelectElement).options).map((o) => o.textContent);
    expect(options()).toEqual(["None", "Notes"]);
    f.changeSettings({ tavilyApiKey: "tvly-test" });
    expect(options()).toEqual(["None", "Notes", "Web", "Hybrid"]);
    const select = f.$(".krypton-mode-select") as HTMLSelectElement;
    select.value = "hybrid";
    select.dispatchEvent(new Event("change"));
    typeAndEnter(f, "news?");
    await f.settle();
    expect(f.chat.calls[0].options.mode).toBe("hybrid");
    // The key goes away: the view falls back to a mode it can serve.
    f.changeSettings({ tavilyApiKey: "" });
    expect(select.value).toBe("rag");
  });

  it("shows the current model and switches it through the settings", async () => {
    f = await mountChatView();
    const select = f.$(".krypton-model-select") as HTMLSelectElement;
    expect(select.value).toBe("llama3.1:8b");
    select.dispatchEvent(new Event("focus"));
    await f.settle();
    expect(Array.from(select.options).map((o) => o.value)).toEqual(["llama3.1:8b", "qwen2.5:7b"]);
    select.value = "qwen2.5:7b";
    select.dispatchEvent(new Event("change"));
    await f.settle();
    expect(f.context.calls.saveSettings).toEqual([[{ chatModel: "qwen2.5:7b" }]]);
    expect(f.settings.chatModel).toBe("qwen2.5:7b");
    expect(select.value).toBe("qwen2.5:7b");
  });

  it("on mobile, Enter is a new line and the Send button sends", async () => {
    f = await mountChatView({ mobile: true });
    const input = f.$(".krypton-input") as HTMLTextAreaElement;
    expect(input.getAttribute("enterkeyhint")).toBe("enter");
    expect(f.$(".krypton-state-empty").textContent).toContain("Tap Send");
    input.value = "first line";
    const enter = new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true });
    input.dispatchEvent(enter);
    await f.settle();
    expect(enter.defaultPrevented).toBe(false); // the keyboard's newline goes into the box
    expect(f.chat.calls).toHaveLength(0);
    expect(input.value).toBe("first line");

    input.value = "first line\nsecond line";
    f.$(".krypton-send").click();
    await f.settle();
    expect(f.chat.calls.map((c) => c.message)).toEqual(["first line\nsecond line"]);
    expect(input.value).toBe("");
  });

  it("follows Platform.isMobile when the view is not told otherwise", async () => {
    f = await mountChatView();
    expect(f.$(".krypton-input").getAttribute("enterkeyhint")).toBe("send");
    expect(f.$(".krypton-state-empty").textContent).toContain("Enter sends");
    await f.close();
    Platform.isMobile = true;
    try {
      f = await mountChatView();
      expect(f.$(".krypton-input").getAttribute("enterkeyhint")).toBe("enter");
      typeAndEnter(f, "hello");
      await f.settle();
      expect(f.chat.calls).toHaveLength(0);
    } finally {
      Platform.isMobile = false;
    }
  });

  it("Up on an empty box edits the last question; sending replaces the last exchange", async () => {
    f = await mountChatView();
    f.chat.script({ type: "token", text: "first answer" });
    typeAndEnter(f, "frist question");
    await f.settle();
    const input = f.$(".krypton-input") as HTMLTextAreaElement;
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowUp", bubbles: true, cancelable: true }));
    expect(input.value).toBe("frist question");
    expect(f.$(".krypton-composer").classList.contains("is-editing")).toBe(true);

    f.chat.script({ type: "token", text: "second answer" });
    typeAndEnter(f, "first question");
    await f.settle();
    expect(f.$$(".krypton-message-user").map((e) => e.textContent)).toEqual(["first question"]);
    expect(f.$$(".krypton-message-assistant").map((e) => e.querySelector(".krypton-message-body")?.textContent?.trim())).toEqual(["second answer"]);
    const stored = await f.store.get(f.view.controller.conversationId as string);
    expect(stored?.messages.map((m) => m.content)).toEqual(["first question", "second answer"]);
  });
});

describe("citations and sources", () => {
  async function answerWithSources(): Promise<HTMLElement> {
    f = await mountChatView();
    f.chat.script(
      { type: "sources", sources: [noteSource, webSource] },
      { type: "token", text: "Paris is the capital [1]. It has 2 million people [2]. Not a source: [7]. " },
      { type: "token", text: "Code stays `[1]`." },
    );
    typeAndEnter(f, "Capital of France?");
    await f.settle();
    return lastAnswer();
  }

  it("makes [n] markers clickable: notes open at the cited line, Ctrl/Cmd-click in a new tab", async () => {
    const answer = await answerWithSources();
    const cites = Array.from(answer.querySelectorAll<HTMLElement>(".krypton-citation"));
    expect(cites.map((c) => c.textContent)).toEqual(["1", "2"]);
    expect(answer.textContent).toContain("[7]");
    expect(answer.querySelector("code")?.textContent).toBe("[1]");
    expect(cites[0].getAttribute("aria-label")).toBe("Source 1: France");

    cites[0].click();
    cites[0].dispatchEvent(new MouseEvent("click", { bubbles: true, ctrlKey: true }));
    // startLine 12 in the index (1-based) is editor line 11 (0-based).
    expect(f.context.calls.openNote).toEqual([
      ["Geo/France.md", 11, false],
      ["Geo/France.md", 11, true],
    ]);
    cites[1].dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    expect(f.context.calls.openUrl).toEqual([["https://en.wikipedia.org/wiki/Paris"]]);
  });

  it("a citation shown while the answer streams opens a note renamed meanwhile at its new path", async () => {
    f = await mountChatView();
    const gate = new Gate();
    f.chat.script({ type: "sources", sources: [noteSource] }, { type: "token", text: "Paris is the capital [1].\n\nMore" }, { gate });
    typeAndEnter(f, "Capital of France?");
    await f.settle();
    const cite = lastAnswer().querySelector<HTMLElement>(".krypton-stream-stable .krypton-citation")!;
    expect(lastAnswer().classList.contains("is-streaming")).toBe(true);
    // The block was rendered before the rename and is not rendered again while the answer streams.
    f.view.controller.followNoteRename({ from: "Geo/France.md", to: "Europe/France.md" });
    cite.click();
    expect(f.context.calls.openNote).toEqual([["Europe/France.md", 11, false]]);
    gate.open();
    await f.settle();
  });

  it("lists sources in a collapsible section: note titles with heading, web results with domain", async () => {
    const answer = await answerWithSources();
    const details = answer.querySelector("details.krypton-sources") as HTMLDetailsElement;
    expect(details.open).toBe(false);
    expect(details.querySelector("summary")?.textContent).toBe("Sources (2)");
    const items = Array.from(details.querySelectorAll(".krypton-source"));
    expect(items[0].textContent).toContain("France");
    expect(items[0].textContent).toContain("Geo/France.md › Capital");
    expect(items[1].textContent).toContain("wikipedia.org");
    (items[0].querySelector("a") as HTMLElement).click();
    (items[1].querySelector("a") as HTMLElement).click();
    expect(f.context.calls.openNote).toEqual([["Geo/France.md", 11, false]]);
    expect(f.context.calls.openUrl).toEqual([["https://en.wikipedia.org/wiki/Paris"]]);
  });

  it("opens and links only http(s) web sources: a javascript: or file: URL (a crafted search result, an edited conversation file) stays text", async () => {
    f = await mountChatView();
    const bad: Source = { ...webSource, n: 1, title: "Looks fine", url: "javascript:alert(document.cookie)" };
    const file: Source = { ...webSource, n: 2, title: "Local", url: "file:///etc/passwd" };
    const good: Source = { ...webSource, n: 3 };
    f.chat.script({ type: "sources", sources: [bad, file, good] }, { type: "token", text: "One [1], two [2], three [3]." });
    typeAndEnter(f, "q");
    await f.settle();
    const answer = lastAnswer();
    const hrefs = Array.from(answer.querySelectorAll<HTMLAnchorElement>(".krypton-source-link")).map((a) => a.getAttribute("href"));
    expect(hrefs).toEqual(["#", "#", "https://en.wikipedia.org/wiki/Paris"]);
    expect(answer.querySelector('[href^="javascript:"], [href^="file:"]')).toBeNull();
    for (const a of Array.from(answer.querySelectorAll<HTMLElement>(".krypton-source-link, .krypton-citation"))) a.click();
    expect(f.context.calls.openUrl).toEqual([["https://en.wikipedia.org/wiki/Paris"], ["https://en.wikipedia.org/wiki/Paris"]]);
    expect(f.context.calls.notify.at(-1)?.[0]).toMatch(/not a web address/);
  });

  it("lists a note retrieved more than once as one source with its passages; [n] keeps pointing at its passage", async () => {
    f = await mountChatView();
    const japan: Source = { ...noteSource, n: 2, path: "Geo/Japan.md", title: "Japan", headings: ["Capital"], startLine: 5, endLine: 7 };
    const franceIntro: Source = { ...noteSource, n: 3, headings: [], startLine: 1, endLine: 3, snippet: "A country" };
    const web = { ...webSource, n: 4 };
    const sameWeb = { ...webSource, n: 5 };
    f.chat.script(
      { type: "sources", sources: [noteSource, japan, franceIntro, web, sameWeb] },
      { type: "token", text: "Paris [1], Tokyo [2], France is a country [3]." },
    );
    typeAndEnter(f, "Capitals?");
    await f.settle();
    const details = lastAnswer().querySelector("details.krypton-sources") as HTMLElement;
    expect(details.querySelector("summary")?.textContent).toBe("Sources (3)");
    const items = Array.from(details.querySelectorAll<HTMLElement>(".krypton-source"));
    expect(items.map((i) => i.querySelector(".krypton-source-link")?.textContent)).toEqual(["France", "Japan", "Paris - Wikipedia"]);
    expect(items.map((i) => i.querySelector(".krypton-source-nums")?.textContent)).toEqual(["1, 3", "2", "4, 5"]);
    const passages = Array.from(items[0].querySelectorAll<HTMLElement>(".krypton-source-passage"));
    expect(passages.map((p) => p.textContent)).toEqual(["1Capital", "3Lines 1–3"]);
    expect(items[1].querySelectorAll(".krypton-source-passage")).toHaveLength(0);
    expect(items[1].querySelector(".krypton-source-detail")?.textContent).toBe("Geo/Japan.md › Capital");

    passages[1].click();
    (items[0].querySelector(".krypton-source-link") as HTMLElement).dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, ctrlKey: true }));
    (lastAnswer().querySelectorAll<HTMLElement>(".krypton-citation")[2]).click();
    expect(f.context.calls.openNote).toEqual([
      ["Geo/France.md", 0, false],
      ["Geo/France.md", 11, true],
      ["Geo/France.md", 0, false],
    ]);
  });

  it("follows [[wikilinks]] in answers through Obsidian's link resolution", async () => {
    f = await mountChatView();
    f.chat.script({ type: "token", text: "See [[Projects/Krypton|Krypton]]." });
    typeAndEnter(f, "q");
    await f.settle();
    const link = lastAnswer().querySelector("a.internal-link") as HTMLElement;
    expect(link.textContent).toBe("Krypton");
    link.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, metaKey: true }));
    expect(f.context.calls.openLinkText).toEqual([["Projects/Krypton", "", true]]);
  });
});

describe("agent results", () => {
  it("renders a created note with preview and Open", async () => {
    f = await mountChatView();
    f.chat.script({ type: "agent", result: agentNote() });
    typeAndEnter(f, "Create a note about photosynthesis");
    await f.settle();
    const block = lastAnswer().querySelector(".krypton-agent-note-created") as HTMLElement;
    expect(block.querySelector(".krypton-note-link")?.textContent).toBe("Photosynthesis");
    expect(block.querySelector(".krypton-agent-preview strong")?.textContent).toBe("light");
    expect(lastAnswer().querySelector(".krypton-message-body")?.classList.contains("is-empty")).toBe(true);
    (block.querySelector(".krypton-agent-open") as HTMLElement).click();
    expect(f.context.calls.openNote).toEqual([["Krypton/photosynthesis.md", undefined, false]]);
  });

  it("renders search results with snippets and scores, clickable to the line", async () => {
    f = await mountChatView();
    f.chat.script({
      type: "agent",
      result: {
        kind: "search-results",
        agent: "search",
        text: "2 notes",
        query: "orama",
        hits: [
          { path: "Tech/Orama.md", title: "Orama", folder: "Tech", snippet: "Orama is a search engine", score: 0.91, startLine: 4 },
          { path: "Tech/Vectors.md", title: "Vectors", folder: "Tech", snippet: "Float32Array scans", score: 0.5, startLine: 0 },
        ],
      },
    });
    typeAndEnter(f, "find notes about orama");
    await f.settle();
    const hits = f.$$(".krypton-search-hit");
    expect(hits).toHaveLength(2);
    expect(hits[0].querySelector(".krypton-search-score")?.textContent).toBe("0.91");
    expect(hits[0].querySelector(".krypton-search-snippet")?.textContent).toBe("Orama is a search engine");
    expect(f.$(".krypton-agent-head").textContent).toContain('2 notes for "orama"');
    (hits[0].querySelector("a") as HTMLElement).click();
    expect(f.context.calls.openNote).toEqual([["Tech/Orama.md", 3, false]]);
    expect(f.$$(".krypton-search-keyword-only")).toHaveLength(0);
  });

  it("says under search results when they were matched by keywords only", async () => {
    f = await mountChatView();
    const keywordOnly = "Semantic search failed (the embedding model did not answer within 10 s): notes were matched by keywords only.";
    f.chat.script({
      type: "agent",
      result: {
        kind: "search-results",
        agent: "search",
        text: "1 note",
        query: "orama",
        hits: [{ path: "Tech/Orama.md", title: "Orama", folder: "Tech", snippet: "Orama is a search engine", score: 0.91, startLine: 4 }],
        keywordOnly,
      },
    });
    typeAndEnter(f, "find notes about orama");
    await f.settle();
    expect(f.$(".krypton-search-keyword-only").textContent).toBe(keywordOnly);
  });

  it("says under a topic summary when its notes were matched by keywords only", async () => {
    f = await mountChatView();
    const keywordOnly = "Semantic search is unavailable (Ollama is not reachable at http://localhost:11434: is it running and is the address right?): notes were matched by keywords only.";
    f.chat.script({
      type: "agent",
      result: { kind: "summary", agent: "summarize", text: "Summary", title: "orama", summary: "Orama is a search engine.", sourceFiles: ["Tech/Orama.md"], keywordOnly },
    });
    typeAndEnter(f, "summarize my notes on orama");
    await f.settle();
    expect(f.$(".krypton-agent-summary-text").textContent).toContain("Orama is a search engine.");
    expect(f.$(".krypton-search-keyword-only").textContent).toBe(keywordOnly);
  });

  it("renders a summary with its source notes, and results shown from commands", async () => {
    f = await mountChatView();
    await f.view.showAgentResult({
      kind: "summary",
      agent: "summarize",
      text: "Summary of France",
      title: "France",
      summary: "- Capital: Paris\n- Language: French",
      sourceFiles: ["Geo/France.md"],
    });
    await f.settle();
    const block = f.$(".krypton-agent-summary-text");
    expect(block.querySelectorAll("li")).toHaveLength(2);
    expect(f.$(".krypton-agent-sources").textContent).toContain("France");
    (f.$(".krypton-agent-sources a") as HTMLElement).click();
    expect(f.context.calls.openNote).toEqual([["Geo/France.md", undefined, false]]);
    // It was saved in a conversation, so it shows up in the history too.
    const convs = await f.store.list();
    expect(convs).toHaveLength(1);
    expect((await f.store.get(convs[0].id))?.messages[0].agent?.kind).toBe("summary");
  });
});

describe("per-message actions", () => {
  beforeEach(async () => {
    f = await mountChatView();
    f.chat.script({ type: "sources", sources: [noteSource] }, { type: "token", text: "Paris [1]." });
    typeAndEnter(f, "Capital of France?");
    await f.settle();
  });

  it("copies and inserts the answer", async () => {
    const writeText = jest.fn(async () => undefined);
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    (lastAnswer().querySelector(".krypton-action-copy") as HTMLElement).click();
    (lastAnswer().querySelector(".krypton-action-insert") as HTMLElement).click();
    await f.settle();
    expect(writeText).toHaveBeenCalledWith("Paris [1].");
    expect(f.context.calls.insertAtCursor).toEqual([["Paris [1]."]]);
    for (const b of Array.from(lastAnswer().querySelectorAll(".krypton-action"))) expect(b.getAttribute("aria-label")).toBeTruthy();
  });

  it("creates a note from the answer without overwriting an existing one", async () => {
    f.vault.files.set("Krypton/capital-of-france.md", "the user's own note");
    (lastAnswer().querySelector(".krypton-action-note") as HTMLElement).click();
    await f.settle();
    expect(f.vault.files.get("Krypton/capital-of-france.md")).toBe("the user's own note");
    const created = f.vault.files.get("Krypton/capital-of-france-1.md") as string;
    expect(created).toContain("> Capital of France?");
    expect(created).toContain("Paris [1].");
    expect(created).toContain("1. [[Geo/France]]");
    expect(f.context.calls.notify).toEqual([["Created Krypton/capital-of-france-1.md"]]);
    expect(f.context.calls.openNote).toEqual([["Krypton/capital-of-france-1.md", undefined, false]]);
  });

  it("regenerates the last answer in place", async () => {
    expect(f.$$(".krypton-action-regenerate")).toHaveLength(1);
    f.chat.script({ type: "token", text: "Paris, again." });
    (lastAnswer().querySelector(".krypton-action-regenerate") as HTMLElement).click();
    await f.settle();
    expect(f.chat.calls[1]).toMatchObject({ message: "Capital of France?", options: { regenerate: true } });
    expect(f.$$(".krypton-message-assistant")).toHaveLength(1);
    expect(lastAnswer().textContent).toContain("Paris, again.");
    const stored = await f.store.get(f.view.controller.conversationId as string);
    expect(stored?.messages.map((m) => m.content)).toEqual(["Capital of France?", "Paris, again."]);
  });
});

describe("states", () => {
  it("no model configured: says so and offers settings; the box is disabled", async () => {
    f = await mountChatView({ noModel: true });
    expect(f.$(".krypton-state-no-model").textContent).toContain("No chat model configured");
    expect((f.$(".krypton-input") as HTMLTextAreaElement).disabled).toBe(true);
    (f.$(".krypton-state-no-model button") as HTMLElement).click();
    expect(f.context.calls.openSettings).toHaveLength(1);
    f.setChatModel(true);
    expect(f.$$(".krypton-state-no-model")).toHaveLength(0);
    expect(f.$(".krypton-state-empty").textContent).toContain("Ask about your notes");
    expect((f.$(".krypton-input") as HTMLTextAreaElement).disabled).toBe(false);
  });

  it("index building: a banner with progress that goes away when ready", async () => {
    f = await mountChatView();
    const banner = f.$(".krypton-banner");
    expect(banner.classList.contains("is-hidden")).toBe(true);
    f.setIndexStatus({ ...f.view.controller && { state: "indexing", notes: 10, chunks: 30, embedded: 10, keywordOnly: false, embedder: "x", failures: [] }, progress: { done: 120, total: 500, phase: "embedding" } });
    expect(banner.classList.contains("is-hidden")).toBe(false);
    expect(banner.textContent).toContain("Embedding your notes: 120 of 500");
    const progress = banner.querySelector("progress") as HTMLProgressElement;
    expect(progress.getAttribute("value")).toBe("120");
    expect(progress.getAttribute("max")).toBe("500");
    f.setIndexStatus({ state: "ready", notes: 500, chunks: 1500, embedded: 1500, keywordOnly: false, embedder: "x", failures: [] });
    expect(banner.classList.contains("is-hidden")).toBe(true);
  });

  it("provider unreachable: the error says what to do, Retry asks again", async () => {
    f = await mountChatView();
    f.chat.script({ type: "error", code: "unreachable", message: "Could not reach Ollama at http://localhost:11434.", retryable: true });
    typeAndEnter(f, "hello?");
    await f.settle();
    const error = f.$(".krypton-error");
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toContain("Could not reach Ollama");
    expect(error.textContent).toContain("ollama serve");
    const [retry, settings] = Array.from(error.querySelectorAll("button"));
    settings.click();
    expect(f.context.calls.openSettings).toHaveLength(1);

    f.chat.script({ type: "token", text: "Hello!" });
    retry.click();
    await f.settle();
    expect(f.chat.calls[1]).toMatchObject({ message: "hello?", options: { regenerate: true } });
    expect(f.$$(".krypton-error")).toHaveLength(0);
    expect(lastAnswer().textContent).toContain("Hello!");
  });

  it("a throwing chat pipeline still ends in a visible, retryable error", async () => {
    f = await mountChatView();
    f.chat.script({ type: "token", text: "Par" }, { throws: new Error("socket hang up") });
    typeAndEnter(f, "q");
    await f.settle();
    expect(f.$(".krypton-error").textContent).toContain("socket hang up");
    expect(f.view.isStreaming).toBe(false);
    expect(f.$(".krypton-send").getAttribute("aria-label")).toBe("Send");
  });

  it("an answer of only whitespace ends shown as an empty answer is, not as the whitespace streamed", async () => {
    const emptyAnswer = { type: "error" as const, code: "empty-answer", message: "The model (m) returned an empty answer. Try again, or try another model.", retryable: true };
    f = await mountChatView();
    f.chat.script(emptyAnswer);
    typeAndEnter(f, "q");
    await f.settle();
    const empty = lastAnswer().cloneNode(true) as HTMLElement;
    expect(empty.querySelector(".krypton-message-body")?.classList.contains("is-empty")).toBe(true);

    f.chat.script({ type: "token", text: "\n" }, { type: "token", text: "  " }, { type: "token", text: "\n\n" }, emptyAnswer);
    typeAndEnter(f, "q");
    await f.settle();
    expect(f.$$(".krypton-message-assistant")).toHaveLength(2);
    expect(lastAnswer().innerHTML).toBe(empty.innerHTML);
    expect(f.view.controller.messages[3]).toMatchObject({ content: "", status: "error" });
  });

  it("notices from degraded retrieval show above the answer", async () => {
    f = await mountChatView();
    f.chat.script({ type: "notice", code: "web-unavailable", message: "Web search unavailable: no Tavily key." }, { type: "token", text: "From notes only." });
    typeAndEnter(f, "q");
    await f.settle();
    expect(f.$(".krypton-notice").textContent).toBe("Web search unavailable: no Tavily key.");
  });

  it("restores the open conversation from the saved view state", async () => {
    f = await mountChatView();
    f.chat.script({ type: "token", text: "Remember me" });
    typeAndEnter(f, "q1");
    await f.settle();
    const state = f.leaf.getViewState();
    expect(state.state?.conversationId).toBe(f.view.controller.conversationId);
    await f.view.setState({ conversationId: "missing" }, { history: false });
    await f.view.setState(state.state, { history: false });
    await f.settle();
    expect(lastAnswer().textContent).toContain("Remember me");
  });
});

describe("restart", () => {
  it("a fresh view built from the saved layout shows the conversation again", async () => {
    f = await mountChatView();
    f.chat.script({ type: "sources", sources: [noteSource] }, { type: "token", text: "Paris [1]." });
    typeAndEnter(f, "Capital of France?");
    await f.settle();
    const saved = f.leaf.getViewState();
    expect(saved.type).toBe(VIEW_TYPE_KRYPTON_CHAT);

    // Obsidian restarts: it builds a new view through the registered factory and hands it the saved state.
    const registry = new Map([[VIEW_TYPE_KRYPTON_CHAT, (leaf: WorkspaceLeaf) => new KryptonChatView(leaf as never, f.context) as never]]);
    const leaf = new WorkspaceLeaf({}, registry);
    document.body.appendChild(leaf.containerEl);
    try {
      await leaf.setViewState(saved);
      const view = leaf.view as unknown as KryptonChatView;
      expect(view).not.toBe(f.view);
      await view.settled();
      const el = view.contentEl;
      expect(el.querySelector(".krypton-message-user")?.textContent).toBe("Capital of France?");
      expect(el.querySelector(".krypton-chat-title")?.textContent).toBe("Capital of France?");
      expect(el.querySelectorAll(".krypton-citation")).toHaveLength(1);
    } finally {
      await leaf.detach();
    }
  });

  it("state handed over before the view opened is applied when it opens", async () => {
    f = await mountChatView();
    f.chat.script({ type: "token", text: "Remembered." });
    typeAndEnter(f, "q");
    await f.settle();
    const id = f.view.controller.conversationId;
    const leaf = new WorkspaceLeaf({});
    document.body.appendChild(leaf.containerEl);
    const view = new KryptonChatView(leaf as never, f.context);
    try {
      await view.setState({ conversationId: id }, { history: false });
      await leaf.open(view as never);
      await view.settled();
      expect(view.controller.conversationId).toBe(id);
      expect(view.contentEl.querySelector(".krypton-message-assistant")?.textContent).toContain("Remembered.");
    } finally {
      await leaf.detach();
    }
  });
});

describe("damaged conversation files", () => {
  it("a saved answer with damaged parts still opens, showing its text and the parts that are intact", async () => {
    const vault = await makeTempVault({});
    try {
      const store = new ConversationStore(new FsDataDir(dataDirOf(vault.root)), nodeClock, silentLogger);
      const c = await store.create("Tides");
      await store.put(c.id, { id: "m1", role: "user", content: "find notes about tides", createdAt: 1 });
      await store.put(c.id, { id: "m2", role: "assistant", content: "Here is what I found.", createdAt: 2, replyTo: "m1" });
      // A sync conflict or a hand edit: parts of the wrong shape next to good ones.
      const file = join(dataDirOf(vault.root), "chat", c.id, "m2.json");
      const saved = JSON.parse(await fs.readFile(file, "utf8")) as Record<string, unknown>;
      Object.assign(saved, {
        agent: { kind: "search-results", agent: "search-notes", text: "1 note", query: "tides" },
        sources: [null, noteSource],
        notices: [null, "Indexing is still running."],
        steps: [null, { thought: "looking" }],
      });
      await fs.writeFile(file, JSON.stringify(saved));

      f = await mountChatView({ store: new ConversationStore(new FsDataDir(dataDirOf(vault.root)), nodeClock, silentLogger) });
      await f.view.setState({ conversationId: c.id }, { history: false });
      await f.settle();
      const answer = f.$(".krypton-message-assistant");
      expect(answer.textContent).toContain("Here is what I found.");
      expect(answer.textContent).toContain("Indexing is still running.");
      expect(answer.textContent).toContain("France");
      expect(f.$$(".krypton-search-hit")).toHaveLength(0);
    } finally {
      await vault.cleanup();
    }
  });
});

describe("no innerHTML", () => {
  it("renders model text as text, never as HTML", async () => {
    f = await mountChatView();
    f.chat.script({ type: "error", code: "x", message: "<img src=x onerror=alert(1)>", retryable: false });
    typeAndEnter(f, "<b>bold?</b>");
    await f.settle();
    expect(f.root.querySelector("img")).toBeNull();
    expect(f.root.querySelector(".krypton-message-user b")).toBeNull();
    expect(f.$(".krypton-error-message").textContent).toBe("<img src=x onerror=alert(1)>");
  });
});
