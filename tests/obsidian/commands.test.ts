/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
import { clearNotices, Menu, noticeMessages, type StubFileLeaf, TFile } from "../support/obsidian-stub";
import { MarkdownView } from "../support/obsidian-stub/workspace";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import { CreateNoteModal } from "../../src/obsidian/commands/create-note-modal";
import { addEditorMenuItems } from "../../src/obsidian/commands/register-commands";
import { summarizeNote } from "../../src/obsidian/commands/summarize";
import { exportDeckForAnki, generateFlashcards } from "../../src/obsidian/commands/flashcards";
import { StudyGoalsModal } from "../../src/obsidian/commands/study-goals-modal";
import { activateChatView, getChatView } from "../../src/obsidian/chat-view/chat-commands";
import { loadPlugin, waitFor, type LoadedPlugin } from "./plugin-harness";

const NOTES = {
  "Garden/Tomatoes.md": "# Tomatoes\n\nTomatoes need deep watering twice a week in July.",
  "Krypton/machine-learning-basics.md": "# My own note\n\nWritten by hand. Must never change.",
};

let ollama: OllamaTestServer;
let p: LoadedPlugin;

beforeEach(async () => {
  clearNotices();
  ollama = await startOllamaServer();
  p = await loadPlugin(NOTES, { data: { ollamaUrl: ollama.url, chatProvider: "ollama", chatModel: "llama3.1:8b" } });
  await p.layoutReady();
});
afterEach(async () => {
  document.body.querySelectorAll(".modal-container").forEach((el) => el.remove());
  await p.close();
  await ollama.close();
});

/** Opens a note in the editor with a small editor that records insertions. */
async function openInEditor(path: string, selection = ""): Promise<{ inserted: string[]; editor: unknown }> {
  const leaf = p.app.workspace.getLeaf(true) as StubFileLeaf;
  await leaf.openFile(p.app.vault.getFileByPath(path) as TFile);
  const inserted: string[] = [];
  const editor = { getSelection: () => selection, replaceSelection: (t: string) => inserted.push(t), getValue: () => "" };
  (leaf.view as MarkdownView).editor = editor;
  return { inserted, editor };
}

/** Waits for something the UI does in the background (bounded, so a bug fails instead of hanging). */
const openModal = () => document.body.querySelector<HTMLElement>(".modal-container:last-child");
const button = (root: HTMLElement, text: string) =>
  Array.from(root.querySelectorAll("button")).find((b) => b.textContent === text) as HTMLButtonElement;

test("Create note with AI writes a new note, never overwrites the user's, and opens it", async () => {
  ollama.script({ route: "chat", reply: "# Machine Learning Basics\n\nModels learn patterns from data." });
  const modal = new CreateNoteModal(p.app as never, p.services);
  modal.open();
  const created = await modal.submit("machine learning basics");
  expect(created?.path).toBe("Krypton/machine-learning-basics-1.md");
  expect(await p.temp.read("Krypton/machine-learning-basics-1.md")).toContain("Models learn patterns from data.");
  expect(await p.temp.read("Krypton/machine-learning-basics.md")).toBe("# My own note\n\nWritten by hand. Must never change.");
  expect((p.app.workspace.activeLeaf as StubFileLeaf).openedFile?.path).toBe("Krypton/machine-learning-basics-1.md");
  expect(noticeMessages()).toContain("Created Krypton/machine-learning-basics-1.md");
  expect((modal as unknown as { isOpen: boolean }).isOpen).toBe(false);
});

test("Create note with AI keeps the dialog open and says what failed when the model is down", async () => {
  ollama.script({ route: "chat", status: 400, error: "invalid request", times: Infinity });
  const modal = new CreateNoteModal(p.app as never, p.services);
  modal.open();
  expect(await modal.submit("beekeeping")).toBeNull();
  expect((modal as unknown as { isOpen: boolean }).isOpen).toBe(true);
  expect(modal.contentEl.querySelector(".krypton-modal-message")!.textContent).not.toBe("");
  expect(await p.temp.exists("Krypton/beekeeping.md")).toBe(false);
  expect(await modal.submit("  ")).toBeNull();
  expect(modal.contentEl.querySelector(".krypton-modal-message")!.textContent).toBe("Type a topic first.");
});

test("Summarize current note shows a dialog when the chat is closed; Insert at cursor writes at the cursor", async () => {
  ollama.script({ route: "chat", reply: "Tomatoes want deep watering twice a week." });
  const { inserted } = await openInEditor("Garden/Tomatoes.md");
  expect(p.app.commands.commands["krypton:summarize-current-note"].checkCallback!(true)).toBe(true);

  const summary = await summarizeNote(p.services, p.services.activeNotePath());
  expect(summary?.summary).toBe("Tomatoes want deep watering twice a week.");
  expect(ollama.requestsTo("chat")[0].userText).toContain("deep watering twice a week in July");
  const modal = openModal()!;
  expect(modal.textContent).toContain("Tomatoes want deep watering twice a week.");
  button(modal, "Insert at cursor").click();
  expect(inserted).toEqual(["Tomatoes want deep watering twice a week."]);
  expect(openModal()).toBeNull();
});

test("the summary dialog's Copy copies the summary, and says so when the clipboard is unavailable", async () => {
  ollama.script({ route: "chat", reply: "Water tomatoes deeply." });
  const copied: string[] = [];
  let clipboardWorks = true;
  Object.defineProperty(navigator, "clipboard", {
    configurable: true,
    value: {
      writeText: async (text: string) => {
        if (!clipboardWorks) throw new Error("denied");
        copied.push(text);
      },
    },
  });
  await openInEditor("Garden/Tomatoes.md");
  await summarizeNote(p.services, "Garden/Tomatoes.md");
  const modal = openModal()!;
  button(modal, "Copy").click();
  await waitFor(() => noticeMessages().includes("Summary copied"));
  expect(copied).toEqual(["Water tomatoes deeply."]);
  clipboardWorks = false;
  button(modal, "Copy").click();
  await waitFor(() => noticeMessages().includes("Could not copy: the clipboard is not available"));
});

test("Summarize current note shows the summary in the chat view when it is open", async () => {
  ollama.script({ route: "chat", reply: "A short tomato summary." });
  await openInEditor("Garden/Tomatoes.md");
  const chatLeaf = p.app.workspace.getRightLeaf(false);
  await chatLeaf.setViewState({ type: "krypton-chat" });
  const reveal = jest.spyOn(p.app.workspace, "revealLeaf");
  await summarizeNote(p.services, "Garden/Tomatoes.md");
  await waitFor(() => chatLeaf.containerEl.textContent?.includes("A short tomato summary.") ?? false);
  expect(reveal).toHaveBeenCalledWith(chatLeaf); // a collapsed sidebar opens: the summary is not shown where nobody looks
  expect(openModal()).toBeNull();
  expect((await p.services.core.conversations.list())[0].title).toBe("Tomatoes"); // saved in a conversation
});

test("the editor menu offers both summaries; Summarize selection sends only the selection", async () => {
  ollama.script({ route: "chat", reply: "Selection summary." });
  const { editor } = await openInEditor("Garden/Tomatoes.md", "twice a week in July");
  const view = p.app.workspace.getActiveViewOfType(MarkdownView)!;
  const menu = new Menu();
  addEditorMenuItems(menu as never, editor as never, view as never, p.services);
  expect(menu.items.map((i) => i.title)).toEqual(["Summarize note", "Generate flashcards", "Summarize selection"]);
  menu.items[2].callback!(new MouseEvent("click"));
  await waitFor(() => openModal() !== null);
  expect(openModal()!.textContent).toContain("Selection summary.");
  const sent = ollama.requestsTo("chat")[0].userText;
  expect(sent).toContain("twice a week in July");
  expect(sent).not.toContain("Tomatoes need deep watering");
});

test("summary commands are unavailable without a note or a selection, and say why", async () => {
  expect(p.app.commands.commands["krypton:summarize-current-note"].checkCallback!(true)).toBe(false);
  await summarizeNote(p.services, undefined);
  expect(noticeMessages()).toContain("Open a note first.");
  const cmd = p.app.commands.commands["krypton:summarize-selection"];
  expect(cmd.editorCheckCallback!(true, { getSelection: () => "   " }, {})).toBe(false);
});

test("the note worked in last, while the chat has the focus, follows a rename and is forgotten once deleted", async () => {
  await openInEditor("Garden/Tomatoes.md");
  await p.app.workspace.getRightLeaf(false).setViewState({ type: "krypton-chat" });
  await activateChatView(p.app as never);
  expect(p.services.activeNotePath()).toBe("Garden/Tomatoes.md");

  await p.app.vault.rename(p.app.vault.getFileByPath("Garden/Tomatoes.md")!, "Garden/Cherry tomatoes.md");
  expect(p.services.activeNotePath()).toBe("Garden/Cherry tomatoes.md");
  ollama.script({ route: "chat", reply: "Deep watering twice a week." });
  expect((await summarizeNote(p.services, p.services.activeNotePath()))?.summary).toContain("Deep watering");

  await p.app.vault.delete(p.app.vault.getFileByPath("Garden/Cherry tomatoes.md")!);
  expect(p.services.activeNotePath()).toBeUndefined();
  expect(p.app.commands.commands["krypton:summarize-current-note"].checkCallback!(true)).toBe(false);
});

test("with a PDF in front, the note commands do not act on the Markdown note behind it; the chat's focus keeps the note", async () => {
  const pdf = await p.app.vault.create("Tides.pdf", "%PDF-1.4\n");
  await openInEditor("Garden/Tomatoes.md");
  const leaf = p.app.workspace.getLeaf(true) as StubFileLeaf;
  await leaf.openFile(pdf);
  expect(p.services.activeNotePath()).toBeUndefined();
  expect(p.app.commands.commands["krypton:summarize-current-note"].checkCallback!(true)).toBe(false);
  expect(p.app.commands.commands["krypton:ask-about-current-note"].checkCallback!(true)).toBe(false);

  // Back in the note, then in the chat: the note stays "current", as before.
  await openInEditor("Garden/Tomatoes.md");
  await p.app.workspace.getRightLeaf(false).setViewState({ type: "krypton-chat" });
  await activateChatView(p.app as never);
  expect(p.services.activeNotePath()).toBe("Garden/Tomatoes.md");
});

describe("a note the chat's create agent writes", () => {
  async function createFromChat(): Promise<void> {
    ollama.script({ route: "chat", reply: "# Tides\n\nThe moon pulls the sea twice a day." });
    await openInEditor("Garden/Tomatoes.md");
    const chatLeaf = p.app.workspace.getRightLeaf(false);
    await chatLeaf.setViewState({ type: "krypton-chat" });
    const view = getChatView(p.app as never)!;
    expect(view.controller.send("create a note on tides")).toBe(true);
    await view.controller.idle();
    expect(await p.temp.read("Krypton/tides.md")).toContain("The moon pulls the sea");
  }

  test("opens when 'Open created notes' is on", async () => {
    expect(p.services.settings().openCreatedNote).toBe(true);
    await createFromChat();
    expect((p.app.workspace.activeLeaf as StubFileLeaf).openedFile?.path).toBe("Krypton/tides.md");
  });

  test("stays closed when it is off", async () => {
    await p.services.saveSettings({ openCreatedNote: false });
    await createFromChat();
    expect((p.app.workspace.activeLeaf as StubFileLeaf).openedFile?.path).toBe("Garden/Tomatoes.md");
  });
});

test("Generate flashcards (editor menu, selection) writes a deck through Vault.process; the source note never changes", async () => {
  const cards = '{"cards":[{"type":"basic","front":"How often do tomatoes need deep watering?","back":"Twice a week","passage":1}]}';
  ollama.setDefault({ route: "chat", reply: cards });
  const { editor } = await openInEditor("Garden/Tomatoes.md", "Tomatoes need deep watering twice a week in July.");
  const view = p.app.workspace.getActiveViewOfType(MarkdownView)!;
  const menu = new Menu();
  addEditorMenuItems(menu as never, editor as never, view as never, p.services);
  const item = menu.items.find((i) => i.title === "Generate flashcards")!;
  item.callback!(new MouseEvent("click"));
  await waitFor(() => noticeMessages().some((m) => m.startsWith("Added 1 flashcard")));
  const deck = await p.temp.read("Flashcards/Tomatoes.md");
  expect(deck).toContain("#flashcards/tomatoes\n\nHow often do tomatoes need deep watering?::Twice a week [[Garden/Tomatoes#Tomatoes]]\n\n");
  // A review in SR adds its comment; a second run with a new card appends through Vault.process after it.
  const reviewed = `${deck}<!--SR:!2026-12-01,3,250-->\n`;
  await p.app.vault.modify(p.app.vault.getFileByPath("Flashcards/Tomatoes.md") as TFile, reviewed);
  ollama.setDefault({ route: "chat", reply: '{"cards":[{"type":"cloze","front":"Tomatoes want ==deep== watering","back":"","passage":1}]}' });
  const process = jest.spyOn(p.app.vault, "process");
  const run = await generateFlashcards(p.services, "Garden/Tomatoes.md");
  expect(run?.added).toHaveLength(1);
  expect(process).toHaveBeenCalledTimes(1);
  const after = await p.temp.read("Flashcards/Tomatoes.md");
  expect(after.startsWith(reviewed)).toBe(true);
  expect(await p.temp.read("Garden/Tomatoes.md")).toBe(NOTES["Garden/Tomatoes.md"]);
  expect(p.app.commands.commands["krypton:generate-flashcards-selection"].editorCheckCallback!(true, { getSelection: () => " " }, {})).toBe(false);
});

test("Export deck for Obsidian_to_Anki: the open deck's cards to a new note; the deck is untouched", async () => {
  const deck = '---\nkrypton-deck: true\ndeck: "Garden"\n---\n\n#flashcards/garden\n\nWhen to water tomatoes?::Twice a week [[Garden/Tomatoes]]\n';
  if (!p.app.vault.getAbstractFileByPath("Flashcards")) await p.app.vault.createFolder("Flashcards");
  await p.app.vault.create("Flashcards/Garden.md", deck);
  const command = p.app.commands.commands["krypton:export-deck-obsidian-to-anki"];
  expect(command.name).toBe("Export deck for Obsidian_to_Anki");
  await exportDeckForAnki(p.services, "Flashcards/Garden.md");
  await waitFor(() => noticeMessages().some((m) => m.startsWith("Exported 1 card")));
  expect(await p.temp.read("Anki exports/Garden.md")).toContain("TARGET DECK\nGarden\n\nSTART\nBasic\nFront: When to water tomatoes?\nBack: Twice a week [[Garden/Tomatoes]]\nEND\n");
  expect(await p.temp.read("Flashcards/Garden.md")).toBe(deck);
  await exportDeckForAnki(p.services, "Garden/Tomatoes.md");
  await waitFor(() => noticeMessages().some((m) => /not a Krypton deck|not a deck/i.test(m)));
});

test("Study goals dashboard lists every goal with its minutes from the sessions (hand edits included)", async () => {
  await p.services.core.goals.create("Pass AWS SAA", "2099-01-15");
  await p.services.core.goals.log("aws", 30);
  const path = "Study goals/Pass AWS SAA.md";
  // A hand edit: a session typed in another format.
  const text = await p.temp.read(path);
  await p.app.vault.modify(p.app.vault.getFileByPath(path) as TFile, text.replace(/(- \d{4}-\d{2}-\d{2}: 30 min)/, "$1\n- Nov 20, 2026 — 1h 15m"));
  const modal = new StudyGoalsModal(p.app as never, p.services);
  modal.open();
  await modal.rendered();
  expect(openModal()!.querySelectorAll("table")).toHaveLength(1);
  const cells = Array.from(openModal()!.querySelectorAll("td")).map((td) => td.textContent);
  expect(cells.slice(0, 3)).toEqual(["Pass AWS SAA", "1h 45m", cells[2]]);
  expect(cells[3]).toMatch(/^2099-01-15 \([\d,]+ days left\)$/);
  expect(p.app.commands.commands["krypton:study-goals-dashboard"]).toBeDefined();
});

test("Study goals dashboard: one row per goal note, even for goals whose names overlap or repeat", async () => {
  const goals = p.services.core.goals;
  await goals.create("Pass AWS");
  await goals.create("AWS Pass exam");
  await goals.log("AWS Pass exam", 45);
  await p.app.vault.createFolder("Study goals/Archive");
  await p.app.vault.create("Study goals/Archive/Pass AWS.md", "---\nkrypton-goal: true\ngoal: Pass AWS\n---\n# Pass AWS\n\n## Sessions\n- 2025-03-01: 2h\n");
  const modal = new StudyGoalsModal(p.app as never, p.services);
  modal.open();
  await modal.rendered();
  const tables = openModal()!.querySelectorAll("table");
  expect(tables).toHaveLength(1);
  const table = tables[0];
  const rows = Array.from(table.querySelectorAll("tr")).slice(1);
  expect(rows.map((tr) => Array.from(tr.querySelectorAll("td")).slice(0, 2).map((td) => td.textContent).join(" | ")).sort()).toEqual([
    "AWS Pass exam | 45 min",
    "Pass AWS | 0 min",
    "Pass AWS | 2h",
  ]);
});
