// The chat view in a real Chromium: the page mounts the real view on the real Krypton core (index,
// ChatService, conversation store), which talks to the loopback Ollama test server. The test types a
// question, watches tokens stream in, clicks a citation, stops an answer mid-stream, switches
// conversations through the history, and saves light and dark screenshots.
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import { launchChromium, type BrowserSession } from "./harness/chromium";
import { startHarnessServer, type HarnessServer } from "./harness/harness-server";

const ROOT = join(__dirname, "..", "..");
const ARTIFACTS = join(ROOT, "test-artifacts");

const ANSWER =
  "Paris is the capital of France [1]. It is the country's largest city and is known for the Eiffel Tower [1].\n\n" +
  "- Population: about **2 million** in the city proper\n- See also [[Geo/Japan]] for another capital";

let ollama: OllamaTestServer;
let harness: HarnessServer;
let context: BrowserContext;
let page: Page;
let browser: BrowserSession;

jest.setTimeout(60_000);

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  ollama = await startOllamaServer({ models: ["llama3.1:8b", "qwen2.5:7b", "nomic-embed-text"] });
  harness = await startHarnessServer(ollama.url);
  browser = await launchChromium({ viewport: { width: 1100, height: 760 }, deviceScaleFactor: 1 });
  ({ context, page } = browser);
  const problems: string[] = [];
  page.on("pageerror", (err) => problems.push(err.message));
  await page.goto(harness.url);
  await page.waitForFunction(() => {
    const w = window as unknown as { krypton?: { ready: boolean }; kryptonError?: string };
    return w.krypton?.ready === true || w.kryptonError !== undefined;
  });
  const startError = await page.evaluate(() => (window as unknown as { kryptonError?: string }).kryptonError);
  if (startError) throw new Error(`The harness page failed to start: ${startError}`);
  if (problems.length) throw new Error(`Page errors: ${problems.join("; ")}`);
});

afterAll(async () => {
  await browser?.close();
  await harness?.close();
  await ollama?.close();
});

async function ask(question: string): Promise<void> {
  await page.fill(".krypton-input", question);
  await page.press(".krypton-input", "Enter");
}

const lastAnswer = () => page.locator(".krypton-message-assistant").last();

async function screenshot(name: string): Promise<string> {
  await page.evaluate(async () => {
    const w = window as unknown as { krypton: { view: { settled(): Promise<void> } } };
    await w.krypton.view.settled();
  });
  await page.mouse.move(0, 0); // no hover highlight in the picture
  const file = join(ARTIFACTS, name);
  await page.locator(".mod-right-split").screenshot({ path: file, animations: "disabled" });
  return file;
}

it("streams an answer token by token, with clickable citations and sources", async () => {
  ollama.script({ route: "chat", reply: ANSWER, tokenDelayMs: 40 });
  // Record every distinct text the streaming answer showed, from inside the page.
  await page.evaluate(() => {
    const seen: number[] = [];
    (window as unknown as { streamLengths: number[] }).streamLengths = seen;
    new MutationObserver(() => {
      const el = document.querySelector(".krypton-message-assistant.is-streaming .krypton-message-body");
      const n = el?.textContent?.length ?? 0;
      if (n > 0 && seen[seen.length - 1] !== n) seen.push(n);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });

  await ask("What is the capital of France?");
  await page.waitForSelector(".krypton-send[aria-label='Stop generating']");
  await page.waitForSelector(".krypton-message-assistant:not(.is-streaming) .krypton-citation");
  await page.waitForSelector(".krypton-send[aria-label='Send']");

  const lengths = await page.evaluate(() => (window as unknown as { streamLengths: number[] }).streamLengths);
  expect(lengths.length).toBeGreaterThanOrEqual(3); // the answer grew in steps while streaming
  expect([...lengths].sort((a, b) => a - b)).toEqual(lengths); // and only ever grew

  const answer = lastAnswer();
  await expect(answer.locator(".krypton-message-body").textContent()).resolves.toContain("Paris is the capital of France");
  expect(await answer.locator(".krypton-message-body strong").textContent()).toBe("2 million");
  expect(await answer.locator(".krypton-citation").count()).toBe(2);

  // The prompt the model got carried the retrieved note as block [1].
  const prompt = JSON.stringify(ollama.requestsTo("chat")[0].body);
  expect(prompt).toContain("Paris is the capital of France and its largest city");

  // Sources: collapsed list; source 1 is the France note, listed once even when several of its
  // passages were retrieved (they are listed under it, each with its number).
  const sources = answer.locator("details.krypton-sources");
  expect(await sources.locator("summary").textContent()).toMatch(/^Sources \(\d+\)$/);
  await sources.locator("summary").click();
  const first = sources.locator(".krypton-source").first();
  expect(await first.locator(".krypton-source-detail").first().textContent()).toContain("Geo/France.md");
  expect(await first.locator(".krypton-source-nums").textContent()).toMatch(/^1(, \d+)*$/);
  const titles = await sources.locator(".krypton-source-link").allTextContents();
  expect(new Set(titles).size).toBe(titles.length);

  await answer.locator(".krypton-citation").first().click();
  await answer.locator(".krypton-citation").first().click({ modifiers: ["Control"] });
  const calls = await page.evaluate(() => (window as unknown as { krypton: { calls: { openNote: unknown[] } } }).krypton.calls.openNote);
  expect(calls).toHaveLength(2);
  expect(calls[0]).toEqual(["Geo/France.md", expect.any(Number), false]);
  expect(calls[1]).toEqual(["Geo/France.md", expect.any(Number), true]);

  await answer.locator("a.internal-link").click();
  const links = await page.evaluate(() => (window as unknown as { krypton: { calls: { openLinkText: unknown[] } } }).krypton.calls.openLinkText);
  expect(links).toEqual([["Geo/Japan", "", false]]);
});

it("Stop mid-stream keeps the partial answer, marked as stopped, and saves it", async () => {
  ollama.script({ route: "chat", reply: "Bread needs flour, water, salt and yeast. Then you knead it and let it rest for an hour.", stallAfterTokens: 4 });
  await ask("How do I bake bread?");
  const stop = page.locator(".krypton-send[aria-label='Stop generating']");
  await stop.waitFor();
  await page.waitForFunction(() => (document.querySelector(".krypton-message-assistant.is-streaming .krypton-message-body")?.textContent ?? "").includes("Bread"));
  await stop.click();

  await page.waitForSelector(".krypton-message-assistant.is-stopped .krypton-badge-stopped");
  await page.locator(".krypton-send[aria-label='Send']").waitFor();
  const text = await lastAnswer().locator(".krypton-message-body").textContent();
  expect(text).toContain("Bread");
  expect(text).not.toContain("hour");

  const stored = await page.evaluate(async () => {
    const k = (window as unknown as { krypton: { core: { conversations: { list(): Promise<{ id: string }[]>; get(id: string): Promise<{ messages: { stopped?: boolean; content: string }[] }> } }; view: { controller: { conversationId: string } } } }).krypton;
    const conv = await k.core.conversations.get(k.view.controller.conversationId);
    return conv.messages[conv.messages.length - 1];
  });
  expect(stored.stopped).toBe(true);
  expect(stored.content).toContain("Bread");
});

it("switches between conversations through the history, and finds one by text", async () => {
  const firstTitleBefore = await page.locator(".krypton-chat-title").textContent();
  await page.click(".krypton-new-chat");
  expect(await page.locator(".krypton-message").count()).toBe(0);
  await page.locator(".krypton-state-empty").waitFor();

  ollama.script({ route: "chat", reply: "Tokyo is the capital of Japan [1].", tokenDelayMs: 5 });
  await ask("And the capital of Japan?");
  await page.waitForSelector(".krypton-message-assistant:not(.is-streaming) .krypton-citation");

  await page.click(".krypton-history-toggle");
  const items = page.locator(".krypton-history-item");
  await expect(items.count()).resolves.toBeGreaterThanOrEqual(0);
  await page.waitForFunction(() => document.querySelectorAll(".krypton-history-item").length === 2);
  await screenshot("chat-view-history-light.png");

  // Open the earlier (France) conversation.
  await page.locator(".krypton-history-item", { hasText: firstTitleBefore ?? "capital of France" }).locator(".krypton-history-open").click();
  await page.waitForFunction(() => document.querySelector(".krypton-messages")?.textContent?.includes("Paris is the capital of France") ?? false);
  expect(await page.locator(".krypton-message-user").first().textContent()).toBe("What is the capital of France?");
  expect(await page.locator(".krypton-history").getAttribute("class")).toContain("is-hidden");
  // Citations still work in a reopened conversation.
  expect(await page.locator(".krypton-citation").count()).toBeGreaterThanOrEqual(2);

  // Search by text.
  await page.click(".krypton-history-toggle");
  await page.fill(".krypton-history-search", "tokyo");
  await page.waitForFunction(() => document.querySelectorAll(".krypton-history-item").length === 1);
  expect(await page.locator(".krypton-history-item .krypton-history-title").textContent()).toContain("Japan");
  await page.fill(".krypton-history-search", "");
  await page.click(".krypton-history-toggle");
});

it("a provider failure says what to do, and Retry recovers", async () => {
  await page.click(".krypton-new-chat");
  ollama.script({ route: "chat", status: 500, times: 10 });
  await ask("Summarize my bread note in one line");
  const error = page.locator(".krypton-error");
  await error.waitFor();
  expect(await error.getAttribute("role")).toBe("alert");
  expect(await error.locator(".krypton-error-hint").textContent()).toBeTruthy();
  await screenshot("chat-view-error-light.png");

  ollama.reset();
  ollama.script({ route: "chat", reply: "Flour, water, salt, yeast; knead, then rest [1].", tokenDelayMs: 2 });
  await error.locator("button", { hasText: "Retry" }).click();
  await page.waitForSelector(".krypton-message-assistant:not(.is-streaming) .krypton-citation");
  expect(await page.locator(".krypton-error").count()).toBe(0);
  expect(await page.locator(".krypton-message-user").count()).toBe(1); // retried in place, not asked twice
});

it("looks right in light and dark, at normal and the narrowest sidebar width", async () => {
  // The first conversation (France) with its sources open: the picture the README shows.
  await page.click(".krypton-history-toggle");
  await page.locator(".krypton-history-item", { hasText: "France" }).locator(".krypton-history-open").click();
  await page.waitForFunction(() => document.querySelector(".krypton-messages")?.textContent?.includes("Paris is the capital of France") ?? false);
  await page.locator(".krypton-message-assistant").first().locator("details.krypton-sources summary").click();

  const noSidewaysOverflow = () =>
    page.evaluate(() => {
      const el = document.querySelector(".krypton-chat") as HTMLElement;
      const bar = document.querySelector(".krypton-composer-bar") as HTMLElement;
      return Math.max(el.scrollWidth - el.clientWidth, bar.scrollWidth - bar.clientWidth);
    });

  await screenshot("chat-view-light.png");
  await page.evaluate(() => document.body.classList.replace("theme-light", "theme-dark"));
  await screenshot("chat-view-dark.png");
  await page.evaluate(() => document.body.style.setProperty("--sidebar-width", "260px"));
  await screenshot("chat-view-narrow-dark.png");
  expect(await noSidewaysOverflow()).toBeLessThanOrEqual(0); // nothing sticks out sideways
  // The narrower list grew taller: it still shows the latest message.
  const distanceFromBottom = await page.evaluate(() => {
    const el = document.querySelector(".krypton-messages") as HTMLElement;
    return el.scrollHeight - el.scrollTop - el.clientHeight;
  });
  expect(distanceFromBottom).toBeLessThanOrEqual(2);
  await page.evaluate(() => document.body.classList.replace("theme-dark", "theme-light"));
  await screenshot("chat-view-narrow-light.png");
  expect(await noSidewaysOverflow()).toBeLessThanOrEqual(0);
  await page.evaluate(() => document.body.style.removeProperty("--sidebar-width"));
  // The README's picture is refreshed on request only, so a test run never changes tracked files.
  if (process.env.UPDATE_README_SCREENSHOT === "1") {
    mkdirSync(join(ROOT, "docs", "images"), { recursive: true });
    copyFileSync(join(ARTIFACTS, "chat-view-light.png"), join(ROOT, "docs", "images", "chat-view.png"));
  }
});

it("on a phone, Enter adds a line in the box and the Send button sends", async () => {
  const phone = await context.newPage();
  try {
    await phone.setViewportSize({ width: 390, height: 760 });
    await phone.goto(`${harness.url}/?mobile=1`);
    await phone.waitForFunction(() => (window as unknown as { krypton?: { ready: boolean } }).krypton?.ready === true);
    await phone.evaluate(() => {
      document.body.classList.add("is-mobile");
      document.body.style.setProperty("--sidebar-width", "100vw");
    });
    ollama.script({ route: "chat", reply: "Knead for ten minutes, then let it rest for an hour [1].", tokenDelayMs: 2 });
    await phone.click(".krypton-input");
    await phone.keyboard.type("How long do I knead?");
    await phone.keyboard.press("Enter");
    await phone.keyboard.type("And rest?");
    expect(await phone.inputValue(".krypton-input")).toBe("How long do I knead?\nAnd rest?");
    expect(await phone.locator(".krypton-message").count()).toBe(0);

    await phone.click(".krypton-send");
    await phone.waitForSelector(".krypton-message-assistant:not(.is-streaming) .krypton-citation");
    expect(await phone.locator(".krypton-message-user").textContent()).toBe("How long do I knead?\nAnd rest?");
    expect(await phone.inputValue(".krypton-input")).toBe("");
    await phone.evaluate(async () => {
      await (window as unknown as { krypton: { view: { settled(): Promise<void> } } }).krypton.view.settled();
    });
    await phone.mouse.move(0, 0);
    await phone.locator(".mod-right-split").screenshot({ path: join(ARTIFACTS, "chat-view-mobile-light.png"), animations: "disabled" });
  } finally {
    await phone.close();
  }
});
