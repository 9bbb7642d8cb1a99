// The controller is host-free: it runs in plain Node, without a DOM or Obsidian.
import { ChatController, type ControllerEvent } from "../../../src/obsidian/chat-view/chat-controller";
import { Gate, MemoryConversations, ScriptedChat } from "./chat-view-fixture";

function setup() {
  const store = new MemoryConversations();
  const chat = new ScriptedChat(store);
  const controller = new ChatController({ chat, conversations: store, activeNotePath: () => "A.md", initialMode: "rag" });
  const events: ControllerEvent[] = [];
  controller.subscribe((e) => events.push(e));
  return { store, chat, controller, events };
}

it("emits one token event per streamed token and ends with the stored ids", async () => {
  const { chat, controller, events, store } = setup();
  chat.script({ type: "token", text: "Hel" }, { type: "token", text: "lo" });
  expect(controller.send("hi")).toBe(true);
  expect(controller.send("again")).toBe(false); // still streaming
  await controller.idle();
  expect(events.filter((e) => e.type === "token").map((e) => (e as { text: string }).text)).toEqual(["Hel", "lo"]);
  expect(events.filter((e) => e.type === "streaming").map((e) => (e as { streaming: boolean }).streaming)).toEqual([true, false]);
  const stored = await store.get(controller.conversationId as string);
  expect(controller.messages.map((m) => m.id)).toEqual(stored?.messages.map((m) => m.id));
  expect(controller.messages[1]).toMatchObject({ content: "Hello", status: "done" });
});

it("ignores empty input and does not edit when there is nothing to edit", () => {
  const { controller } = setup();
  expect(controller.send("   ")).toBe(false);
  expect(controller.editLast()).toBeNull();
  expect(controller.regenerate()).toBe(false);
});

it("switching conversations mid-answer stops it and never mixes its tokens into the new one", async () => {
  const { chat, controller, store } = setup();
  const other = await store.create("Other");
  await store.put(other.id, { id: "x1", role: "user", content: "old question", createdAt: 0 });
  const gate = new Gate();
  chat.script({ type: "token", text: "first" }, { gate }, { type: "token", text: " late" });
  controller.send("q");
  await new Promise((r) => setTimeout(r, 0));
  expect(controller.streaming).toBe(true);
  await controller.open(other.id);
  gate.open();
  await controller.idle();
  expect(chat.calls[0].options.signal?.aborted).toBe(true);
  expect(controller.conversationId).toBe(other.id);
  expect(controller.messages.map((m) => m.content)).toEqual(["old question"]);
  expect(controller.streaming).toBe(false);
});
