/** @jest-environment jsdom */
// The history panel on the REAL ConversationStore (in-memory .krypton/ data dir): the same store the CLI
// writes, so chats from either show up here.
import { TextDecoder, TextEncoder } from "node:util";
Object.assign(globalThis, { TextEncoder, TextDecoder });

import { ConversationStore } from "../../../src/core/chat/conversation-store";
import { clockFromTimers } from "../../../src/core/ports/clock";
import { silentLogger } from "../../../src/core/ports/logger";
import { formatWhen } from "../../../src/obsidian/chat-view/history-panel";
import { MemoryDataDir } from "../../browser/harness/memory-host";
import { type Fixture, mountChatView, typeAndEnter } from "./chat-view-fixture";

let now = Date.UTC(2026, 10, 20, 9, 0);
const clock = clockFromTimers(
  () => (now += 1000),
  (fn, ms) => {
    const id = setTimeout(fn, ms);
    return () => clearTimeout(id);
  },
);

let f: Fixture;
let data: MemoryDataDir;
let store: ConversationStore;

async function seed(title: string, question: string, answer: string): Promise<string> {
  const c = await store.create(title);
  await store.put(c.id, { id: `${c.id}-u`, role: "user", content: question, createdAt: now });
  await store.put(c.id, { id: `${c.id}-a`, role: "assistant", content: answer, createdAt: now });
  return c.id;
}

beforeEach(async () => {
  data = new MemoryDataDir();
  store = new ConversationStore(data, clock, silentLogger);
  f = await mountChatView({ store });
});
afterEach(() => f.close());

const items = () => f.$$(".krypton-history-item");
const titles = () => f.$$(".krypton-history-title").map((e) => e.textContent);

async function openHistory(): Promise<void> {
  f.$(".krypton-history-toggle").click();
  await f.settle();
}

it("says so when there is no history yet", async () => {
  await openHistory();
  expect(f.$(".krypton-history").classList.contains("is-hidden")).toBe(false);
  expect(f.$(".krypton-history-toggle").getAttribute("aria-expanded")).toBe("true");
  expect(f.$(".krypton-history-empty").textContent).toContain("No conversations yet");
});

it("lists conversations newest first and switches to one", async () => {
  const older = await seed("Bread baking", "How long to knead?", "About **ten** minutes.");
  await seed("Capitals", "Capital of Japan?", "Tokyo.");
  await openHistory();
  expect(titles()).toEqual(["Capitals", "Bread baking"]);
  expect(items()[0].querySelector(".krypton-history-meta")?.textContent).toBeTruthy();

  (items()[1].querySelector(".krypton-history-open") as HTMLElement).click();
  await f.settle();
  expect(f.view.controller.conversationId).toBe(older);
  expect(f.$(".krypton-chat-title").textContent).toBe("Bread baking");
  expect(f.$(".krypton-message-user").textContent).toBe("How long to knead?");
  expect(f.$(".krypton-message-assistant strong").textContent).toBe("ten");
  expect(f.$(".krypton-history").classList.contains("is-hidden")).toBe(true);

  // A follow-up goes into the opened conversation.
  f.chat.script({ type: "token", text: "Then rest it." });
  typeAndEnter(f, "And then?");
  await f.settle();
  expect(f.chat.calls[0].options.conversationId).toBe(older);
  expect((await store.get(older))?.messages).toHaveLength(4);
});

it("renames in place; Escape cancels", async () => {
  const id = await seed("Old title", "q", "a");
  await f.view.controller.open(id);
  await openHistory();
  (f.$(".krypton-history-rename") as HTMLElement).click();
  const input = f.$(".krypton-history-rename-input") as HTMLInputElement;
  expect(input.value).toBe("Old title");
  input.value = "Never saved";
  input.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true }));
  await f.settle();
  expect(titles()).toEqual(["Old title"]);
  expect(document.activeElement).toBe(f.$(".krypton-history-rename")); // the keyboard user is where they were
  expect(f.$(".krypton-history").classList.contains("is-hidden")).toBe(false); // Escape cancelled the rename only

  (f.$(".krypton-history-rename") as HTMLElement).click();
  const again = f.$(".krypton-history-rename-input") as HTMLInputElement;
  again.value = "Sourdough notes";
  again.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  await f.settle();
  expect(titles()).toEqual(["Sourdough notes"]);
  expect(document.activeElement).toBe(f.$(".krypton-history-rename"));
  expect((await store.get(id))?.title).toBe("Sourdough notes");
  expect(f.$(".krypton-chat-title").textContent).toBe("Sourdough notes"); // the open conversation follows
});

it("deletes only after confirmation; deleting the open conversation starts a new chat", async () => {
  const keep = await seed("Keep me", "q1", "a1");
  const drop = await seed("Drop me", "q2", "a2");
  await f.view.controller.open(drop);
  await openHistory();
  const row = () => items().find((li) => li.textContent?.includes("Drop me")) as HTMLElement;

  (row().querySelector(".krypton-history-delete") as HTMLElement).click();
  expect(row().textContent).toContain('Delete "Drop me"? This cannot be undone.');
  (row().querySelector(".krypton-history-confirm-cancel") as HTMLElement).click();
  await f.settle();
  expect(titles()).toEqual(["Drop me", "Keep me"]);
  expect(await store.get(drop)).not.toBeNull();
  expect(document.activeElement).toBe(row().querySelector(".krypton-history-delete")); // back where the user started

  (row().querySelector(".krypton-history-delete") as HTMLElement).click();
  (row().querySelector(".krypton-history-confirm-delete") as HTMLElement).click();
  await f.settle();
  expect(titles()).toEqual(["Keep me"]);
  expect(document.activeElement).toBe(f.$(".krypton-history-search")); // its row is gone; not the top of the window
  expect(await store.get(drop)).toBeNull();
  expect(await store.get(keep)).not.toBeNull();
  expect(f.view.controller.conversationId).toBeUndefined();
  expect(f.$$(".krypton-message")).toHaveLength(0);
});

it("a rename that fails (the conversation was deleted elsewhere meanwhile) says why instead of leaving the row half-edited", async () => {
  const id = await seed("Bread baking", "q", "a");
  await openHistory();
  await data.remove(`chat/${id}.json`); // another process (the CLI, a sync) deleted it while the list showed it
  (f.$(".krypton-history-rename") as HTMLElement).click();
  const input = f.$(".krypton-history-rename-input") as HTMLInputElement;
  input.value = "Sourdough";
  input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  await f.settle();
  expect(f.$(".krypton-history-problems [role=alert]").textContent).toMatch(/^Could not rename "Bread baking": .*does not exist or cannot be read/);
  expect(f.$$(".krypton-history-rename-input")).toHaveLength(0);
  expect(document.activeElement).toBe(f.$(".krypton-history-search")); // the list no longer has that row
});

it("searches titles and message text", async () => {
  await seed("Bread baking", "How long to knead?", "About ten minutes.");
  await seed("Capitals", "Capital of Japan?", "Tokyo is the capital.");
  await openHistory();
  const search = f.$(".krypton-history-search") as HTMLInputElement;
  const typeQuery = async (text: string) => {
    search.value = text;
    search.dispatchEvent(new Event("input"));
    f.delays.run();
    await f.settle();
  };
  await typeQuery("tokyo");
  expect(titles()).toEqual(["Capitals"]);
  await typeQuery("KNEAD");
  expect(titles()).toEqual(["Bread baking"]);
  await typeQuery("nothing like this");
  expect(f.$(".krypton-history-empty").textContent).toBe('No conversation mentions "nothing like this".');
});

it("waits for a pause in typing before searching; Enter and clearing the box do not wait", async () => {
  await seed("Bread baking", "How long to knead?", "About ten minutes.");
  await seed("Capitals", "Capital of Japan?", "Tokyo is the capital.");
  await openHistory();
  const searchSpy = jest.spyOn(store, "search");
  const search = f.$(".krypton-history-search") as HTMLInputElement;
  for (const text of ["t", "to", "tok", "toky", "tokyo"]) {
    search.value = text;
    search.dispatchEvent(new Event("input"));
  }
  await f.settle();
  // Five keystrokes, one timer pending, nothing searched yet.
  expect(searchSpy).not.toHaveBeenCalled();
  expect(f.delays.count).toBe(1);
  expect(f.delays.requested.every((ms) => ms > 0 && ms <= 300)).toBe(true);
  expect(titles()).toEqual(["Capitals", "Bread baking"]);
  f.delays.run();
  await f.settle();
  expect(searchSpy.mock.calls).toEqual([["tokyo"]]);
  expect(titles()).toEqual(["Capitals"]);

  // Enter searches at once and drops the pending timer.
  search.value = "knead";
  search.dispatchEvent(new Event("input"));
  search.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
  await f.settle();
  expect(f.delays.count).toBe(0);
  expect(titles()).toEqual(["Bread baking"]);

  // Clearing the box lists everything without waiting.
  search.value = "";
  search.dispatchEvent(new Event("input"));
  await f.settle();
  expect(f.delays.count).toBe(0);
  expect(titles()).toEqual(["Capitals", "Bread baking"]);
  expect(searchSpy).toHaveBeenCalledTimes(2);
});

it("runs one search at a time: what is typed during a search runs after it, once, with the latest text", async () => {
  await seed("Bread baking", "How long to knead?", "About ten minutes.");
  await seed("Capitals", "Capital of Japan?", "Tokyo is the capital.");
  await openHistory();
  const search = store.search.bind(store);
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const searchSpy = jest.spyOn(store, "search").mockImplementation(async (text) => {
    await held;
    return search(text);
  });
  // f.settle() would wait for the held search: plain turns of the event loop instead.
  const turns = async () => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
  };
  const input = f.$(".krypton-history-search") as HTMLInputElement;
  for (const text of ["t", "to", "tok", "knead"]) {
    input.value = text;
    input.dispatchEvent(new Event("input"));
    f.delays.run(); // each keystroke after a pause
    await turns();
  }
  expect(searchSpy.mock.calls).toEqual([["t"]]);
  release();
  await f.settle();
  expect(searchSpy.mock.calls).toEqual([["t"], ["knead"]]);
  expect(titles()).toEqual(["Bread baking"]);
});

it("reports unreadable conversation files and still lists the rest", async () => {
  await seed("Fine", "q", "a");
  const broken = await seed("Broken", "q", "a");
  await data.writeAtomic(`chat/${broken}.json`, "{ not json");
  await store.search("q"); // reading the broken file reports it
  await openHistory();
  expect(titles()).toContain("Fine");
  expect(f.$(".krypton-history-problems").textContent).toBe("Skipped 1 unreadable conversation file in .krypton/chat.");
});

it("Escape closes the panel and gives focus back to its button", async () => {
  await openHistory();
  f.$(".krypton-history-search").dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true }));
  expect(f.$(".krypton-history").classList.contains("is-hidden")).toBe(true);
  expect(f.$(".krypton-history-toggle").getAttribute("aria-expanded")).toBe("false");
  expect(document.activeElement).toBe(f.$(".krypton-history-toggle"));
});

it("formats dates as time today, Yesterday, then a short date", () => {
  const base = Date.UTC(2026, 10, 20, 15, 0);
  expect(formatWhen(base - 60_000, base)).toMatch(/\d/);
  expect(formatWhen(base - 86_400_000, base)).toBe("Yesterday");
  expect(formatWhen(base - 10 * 86_400_000, base)).toMatch(/Nov/);
});

it("closing the view cancels a search still waiting for the typing pause", async () => {
  await seed("Capitals", "Capital of Japan?", "Tokyo is the capital.");
  await openHistory();
  const searchSpy = jest.spyOn(store, "search");
  const search = f.$(".krypton-history-search") as HTMLInputElement;
  search.value = "tokyo";
  search.dispatchEvent(new Event("input"));
  expect(f.delays.count).toBe(1);
  await f.close();
  expect(f.delays.count).toBe(0);
  f.delays.run();
  await new Promise((r) => setTimeout(r, 0));
  expect(searchSpy).not.toHaveBeenCalled();
});
