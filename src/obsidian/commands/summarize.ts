import { Notice } from "obsidian";
import { AgentError } from "../../core/notes/agent-error";
import type { Summary } from "../../core/notes/note-operations";
import { activateChatView } from "../chat-view/chat-commands";
import { VIEW_TYPE_KRYPTON_CHAT, type KryptonChatView } from "../chat-view/chat-view";
import type { KryptonServices } from "../plugin-services";
import { SummaryModal } from "./summary-modal";
import { errorMessage } from "../../core/util/errors";

/** Summarizes a note (long notes in parts) and shows it in the chat view when open, else in a dialog. */
export async function summarizeNote(services: KryptonServices, path: string | undefined): Promise<Summary | null> {
  if (!path) {
    new Notice("Open a note first.");
    return null;
  }
  return present(services, () => services.core.operations.summarizeNote(path), `Summarizing ${path}…`);
}

/** Summarizes the editor selection. */
export async function summarizeSelection(services: KryptonServices, title: string, text: string): Promise<Summary | null> {
  if (!text.trim()) {
    new Notice("Select some text first.");
    return null;
  }
  return present(services, () => services.core.operations.summarizeText(title, text), "Summarizing the selection…");
}

async function present(services: KryptonServices, run: () => Promise<Summary>, progress: string): Promise<Summary | null> {
  const notice = new Notice(progress, 0);
  try {
    const summary = await run();
    notice.hide();
    const chat = await revealedChatView(services);
    if (chat) await chat.showAgentResult(summary);
    else {
      new SummaryModal(services.app, summary, {
        insertAtCursor: (text) => {
          const editor = services.lastMarkdownView()?.editor;
          if (!editor) return false;
          editor.replaceSelection(text);
          return true;
        },
      }).open();
    }
    return summary;
  } catch (err) {
    notice.hide();
    new Notice(err instanceof AgentError ? err.message : `Could not summarize: ${errorMessage(err)}`);
    return null;
  }
}

/**
 * The chat view when the user has one (also in a collapsed sidebar, or not loaded yet: Obsidian defers
 * hidden views), brought into sight so the summary does not land where nobody sees it; else null.
 */
async function revealedChatView(services: KryptonServices): Promise<KryptonChatView | null> {
  if (services.app.workspace.getLeavesOfType(VIEW_TYPE_KRYPTON_CHAT).length === 0) return null;
  return activateChatView(services.app);
}
