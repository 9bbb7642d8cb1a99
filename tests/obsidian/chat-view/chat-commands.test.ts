/** @jest-environment jsdom */
// The chat commands on the stand-in App/Plugin: they find the view by type (never a stored reference),
// open it in the right sidebar once, and check their preconditions.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, Plugin } from "../../support/obsidian-stub/app";
import { activateChatView, getChatView, registerChatCommands, showAgentResultInChat } from "../../../src/obsidian/chat-view/chat-commands";
import { KryptonChatView, VIEW_TYPE_KRYPTON_CHAT } from "../../../src/obsidian/chat-view/chat-view";
import { Gate, mountChatView, type Fixture } from "./chat-view-fixture";

class TestPlugin extends Plugin {}

let dir: string;
let app: App;
let plugin: TestPlugin;
let f: Fixture;
let activeNote: string | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "krypton-cmd-"));
  app = new App(dir);
  plugin = new TestPlugin(app, { id: "krypton", name: "Krypton", version: "0.1.0" });
  // The fixture's context (scripted chat, in-memory store) is reused for the views the commands open.
  f = await mountChatView();
  activeNote = "Notes/today.md";
  const context = { ...f.context, activeNotePath: () => activeNote };
  plugin.registerView(VIEW_TYPE_KRYPTON_CHAT, (leaf) => new KryptonChatView(leaf as never, context) as never);
  registerChatCommands(plugin as never, context);
  plugin.load();
});

afterEach(async () => {
  plugin.unload();
  await f.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (id: string) => app.commands.commands[`krypton:${id}`];
const flush = () => new Promise((r) => setTimeout(r, 0));

it("registers the four commands without default hotkeys, and a ribbon icon", () => {
  const names = Object.values(app.commands.commands).map((c) => c.name);
  expect(names).toEqual(["Open chat", "New chat", "Ask about current note", "Stop generating"]);
  expect(Object.values(app.commands.commands).every((c) => c.hotkeys === undefined)).toBe(true);
  expect(plugin.ribbonIcons.map((r) => r.title)).toEqual(["Open chat"]);
});

it("Open chat opens one view in the sidebar and reveals it again instead of opening a second", async () => {
  expect(getChatView(app as never)).toBeNull();
  app.commands.executeCommandById("krypton:open-chat");
  await flush();
  await flush();
  const view = getChatView(app as never);
  expect(view).toBeInstanceOf(KryptonChatView);
  plugin.ribbonIcons[0].el.click();
  await flush();
  expect(app.workspace.getLeavesOfType(VIEW_TYPE_KRYPTON_CHAT)).toHaveLength(1);
  expect(await activateChatView(app as never)).toBe(view);
});

it("New chat clears the open conversation", async () => {
  const view = (await activateChatView(app as never)) as KryptonChatView;
  f.chat.script({ type: "token", text: "hello" });
  view.controller.send("hi");
  await view.controller.idle();
  expect(view.controller.conversationId).toBeDefined();
  app.commands.executeCommandById("krypton:new-chat");
  await flush();
  await flush();
  expect(view.controller.conversationId).toBeUndefined();
  expect(view.controller.messages).toHaveLength(0);
});

it("Ask about current note needs an open note and turns on 'Use current note'", async () => {
  activeNote = undefined;
  expect(run("ask-about-current-note").checkCallback?.(true)).toBe(false);
  activeNote = "Notes/today.md";
  expect(run("ask-about-current-note").checkCallback?.(true)).toBe(true);
  run("ask-about-current-note").checkCallback?.(false);
  await flush();
  await flush();
  const view = getChatView(app as never) as KryptonChatView;
  expect(view.controller.useActiveNote).toBe(true);
  expect((view.contentEl.querySelector(".krypton-use-note input") as HTMLInputElement).checked).toBe(true);
});

it("Stop generating is available only while an answer streams, and stops it", async () => {
  const view = (await activateChatView(app as never)) as KryptonChatView;
  expect(run("stop-generating").checkCallback?.(true)).toBe(false);
  const gate = new Gate();
  f.chat.script({ type: "token", text: "partial" }, { gate }, { waitForAbort: true });
  view.controller.send("long question");
  await flush();
  expect(run("stop-generating").checkCallback?.(true)).toBe(true);
  run("stop-generating").checkCallback?.(false);
  gate.open();
  await view.controller.idle();
  expect(view.isStreaming).toBe(false);
  expect(view.controller.messages[1].status).toBe("stopped");
});

it("shows an agent result in the open chat view, or reports that none is open", async () => {
  const result = { kind: "message" as const, agent: "summarize", text: "Open a note first." };
  expect(showAgentResultInChat(app as never, result)).toBe(false);
  const view = (await activateChatView(app as never)) as KryptonChatView;
  expect(showAgentResultInChat(app as never, result)).toBe(true);
  await flush();
  await flush();
  expect(view.controller.messages.map((m) => m.content)).toEqual(["Open a note first."]);
});
