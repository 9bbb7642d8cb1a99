/**
 * The Mermaid text Krypton writes for a workflow, rendered by the real Mermaid library (the engine Obsidian
 * ships: the dev dependency is pinned to Obsidian's Mermaid, 11.13 since its July 2026 release) in a real Chromium: awkward agent names (`end`, quotes, brackets, pipes, `#`, `<b>`) and every
 * shipped example must draw without a parse error.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { launchChromium, type BrowserSession } from "./harness/chromium";
import { startLoopbackServer, type LoopbackServer } from "../support/servers/loopback-server";
import { flowToMermaid } from "../../src/core/workflows/flow-graph";
import { validateFlow } from "../../src/core/workflows/flow-validate";
import { exampleFlows } from "../core/workflows/flow-fixtures";
import { AWKWARD_FLOW } from "../core/workflows/flow-graph.test";

const MERMAID = join(__dirname, "..", "..", "node_modules", "mermaid", "dist", "mermaid.min.js");

jest.setTimeout(60_000);

let server: LoopbackServer;
let browser: BrowserSession;
let page: Page;

beforeAll(async () => {
  const mermaid = readFileSync(MERMAID, "utf8");
  server = await startLoopbackServer((req, res) => {
    if (req.url === "/mermaid.js") {
      res.writeHead(200, { "content-type": "text/javascript" });
      res.end(mermaid);
      return;
    }
    res.writeHead(200, { "content-type": "text/html" });
    res.end('<!doctype html><html><body><div id="out"></div><script src="/mermaid.js"></script></body></html>');
  });
  browser = await launchChromium();
  page = browser.page;
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => typeof (window as unknown as { mermaid?: unknown }).mermaid !== "undefined");
  await page.evaluate(() => (window as unknown as { mermaid: { initialize(o: unknown): void } }).mermaid.initialize({ startOnLoad: false, securityLevel: "strict" }));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Renders with mermaid.render; returns the SVG's node labels, or the parse error. */
async function render(text: string): Promise<{ labels: string[]; edges: string[] } | { error: string }> {
  return page.evaluate(async (source) => {
    const m = (window as unknown as { mermaid: { render(id: string, text: string): Promise<{ svg: string }> } }).mermaid;
    try {
      const { svg } = await m.render(`g${Math.random().toString(36).slice(2)}`, source);
      const holder = document.createElement("div");
      holder.innerHTML = svg;
      const texts = (selector: string) => Array.from(holder.querySelectorAll(selector)).map((n) => n.textContent ?? "");
      return { labels: texts(".nodeLabel"), edges: [...new Set(texts(".edgeLabel").filter(Boolean))] };
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }, text);
}

it("draws a flow whose agent names would break naive Mermaid", async () => {
  const result = await render(flowToMermaid(validateFlow(AWKWARD_FLOW).flow!));
  expect(result).not.toHaveProperty("error");
  const { labels, edges } = result as { labels: string[]; edges: string[] };
  expect(labels).toEqual(expect.arrayContaining(["end", 'say "hi" [now] {x} (y) (verify)', "a|b #1 <b> (transform)", "graph", "Start", "Finish"]));
  expect(edges).toEqual(['feedback = "he said \\"no\\" | [x]"']);
});

it.each(Object.entries(exampleFlows()))("draws the shipped example %s", async (_name, json) => {
  const result = await render(flowToMermaid(validateFlow(json).flow!));
  expect(result).not.toHaveProperty("error");
});

it("the check itself catches a parse error", async () => {
  expect(await render("flowchart TD\n  a[end] --> b[x]]")).toHaveProperty("error");
});
