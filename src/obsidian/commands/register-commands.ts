import { MarkdownView, Notice, Platform, type Editor, type MarkdownFileInfo, type Menu, type Plugin } from "obsidian";
import { describeBridgeState } from "../mcp/mcp-bridge";
import type { KryptonServices } from "../plugin-services";
import { IndexStatusModal } from "../status/index-status-modal";
import { CreateNoteModal } from "./create-note-modal";
import { summarizeNote, summarizeSelection } from "./summarize";
import { exportDeckForAnki, generateFlashcards } from "./flashcards";
import { StudyGoalsModal } from "./study-goals-modal";

/**
 * Index, agent and MCP commands, plus the editor's context-menu entries. No default hotkeys (Obsidian's
 * guidelines): users bind their own. The chat's commands live in chat-view/chat-commands.ts, search in
 * search/register-search.ts.
 */
export function registerCommands(plugin: Plugin, services: KryptonServices): void {
  const { app } = plugin;

  plugin.addCommand({
    id: "rebuild-index",
    name: "Rebuild index",
    callback: () => {
      new Notice("Krypton: rebuilding the index…");
      void services.rebuildIndex();
    },
  });

  plugin.addCommand({
    id: "show-index-status",
    name: "Show index status",
    callback: () => new IndexStatusModal(app, services).open(),
  });

  plugin.addCommand({
    id: "create-note-with-ai",
    name: "Create note with AI…",
    callback: () => new CreateNoteModal(app, services).open(),
  });

  plugin.addCommand({
    id: "summarize-current-note",
    name: "Summarize current note",
    checkCallback: (checking) => {
      const path = services.activeNotePath();
      if (!path) return false;
      if (!checking) void summarizeNote(services, path);
      return true;
    },
  });

  plugin.addCommand({
    id: "summarize-selection",
    name: "Summarize selection",
    editorCheckCallback: (checking, editor, ctx) => {
      const text = editor.getSelection();
      if (!text.trim()) return false;
      if (!checking) void summarizeSelection(services, titleOf(ctx), text);
      return true;
    },
  });

  plugin.addCommand({
    id: "generate-flashcards",
    name: "Generate flashcards from current note",
    checkCallback: (checking) => {
      const path = services.activeNotePath();
      if (!path) return false;
      if (!checking) void generateFlashcards(services, path);
      return true;
    },
  });

  plugin.addCommand({
    id: "generate-flashcards-selection",
    name: "Generate flashcards from selection",
    editorCheckCallback: (checking, editor, ctx) => {
      const text = editor.getSelection();
      if (!text.trim() || !ctx.file) return false;
      if (!checking) void generateFlashcards(services, ctx.file.path, text);
      return true;
    },
  });

  plugin.addCommand({
    id: "export-deck-obsidian-to-anki",
    name: "Export deck for Obsidian_to_Anki",
    checkCallback: (checking) => {
      const path = services.activeNotePath();
      if (!path) return false;
      if (!checking) void exportDeckForAnki(services, path);
      return true;
    },
  });

  plugin.addCommand({
    id: "study-goals-dashboard",
    name: "Study goals dashboard",
    callback: () => new StudyGoalsModal(app, services).open(),
  });

  if (Platform.isDesktopApp) {
    plugin.addCommand({
      id: "toggle-mcp-bridge",
      name: "Start/stop MCP bridge",
      callback: async () => {
        await services.toggleBridge();
        new Notice(`MCP bridge: ${describeBridgeState(services.bridge.current())}`);
      },
    });
  }

  plugin.registerEvent(
    app.workspace.on("editor-menu", (menu: Menu, editor: Editor, info: MarkdownView | MarkdownFileInfo) => {
      addEditorMenuItems(menu, editor, info, services);
    }),
  );
}

/** "Summarize note" and "Generate flashcards" always; their selection forms when text is selected. */
export function addEditorMenuItems(menu: Menu, editor: Editor, info: MarkdownView | MarkdownFileInfo, services: KryptonServices): void {
  const path = info.file?.path;
  if (path) {
    menu.addItem((item) =>
      item
        .setTitle("Summarize note")
        .setIcon("list")
        .onClick(() => void summarizeNote(services, path)),
    );
    menu.addItem((item) =>
      item
        .setTitle("Generate flashcards")
        .setIcon("layers")
        .onClick(() => void generateFlashcards(services, path, editor.getSelection().trim() ? editor.getSelection() : undefined)),
    );
  }
  const selection = editor.getSelection();
  if (selection.trim()) {
    menu.addItem((item) =>
      item
        .setTitle("Summarize selection")
        .setIcon("text-select")
        .onClick(() => void summarizeSelection(services, titleOf(info), selection)),
    );
  }
}

function titleOf(info: MarkdownView | MarkdownFileInfo): string {
  return info.file?.basename ?? "Selection";
}
