// The chat's commands and ribbon icon. The view is always looked up by type (Obsidian's guidelines:
// never keep a reference to a view). No default hotkeys; every command can be bound by the user.
import type { App, Plugin, WorkspaceLeaf } from "obsidian";
import type { AgentResult } from "../../core/agents/agent";
import type { ChatViewContext } from "./chat-view-context";
import { KryptonChatView, VIEW_TYPE_KRYPTON_CHAT } from "./chat-view";

/** The open chat view, if any (a deferred, not yet loaded view does not count). */
export function getChatView(app: App): KryptonChatView | null {
  for (const leaf of app.workspace.getLeavesOfType(VIEW_TYPE_KRYPTON_CHAT)) {
    if (leaf.view instanceof KryptonChatView) return leaf.view;
  }
  return null;
}

/** revealLeaf returns a promise and leaves may be deferred from Obsidian 1.7.2; older versions lack both. */
interface WorkspaceCompat {
  revealLeaf(leaf: WorkspaceLeaf): Promise<void> | void;
}
interface LeafCompat {
  loadIfDeferred?: () => Promise<void>;
}

/** Opens the chat in the right sidebar (or reveals the existing one) and returns it. */
export async function activateChatView(app: App): Promise<KryptonChatView | null> {
  const { workspace } = app;
  let leaf: WorkspaceLeaf | null = workspace.getLeavesOfType(VIEW_TYPE_KRYPTON_CHAT)[0] ?? null;
  if (!leaf) {
    leaf = workspace.getRightLeaf(false);
    if (!leaf) return null;
    await leaf.setViewState({ type: VIEW_TYPE_KRYPTON_CHAT, active: true });
  }
  await (workspace as unknown as WorkspaceCompat).revealLeaf(leaf);
  await (leaf as unknown as LeafCompat).loadIfDeferred?.();
  return leaf.view instanceof KryptonChatView ? leaf.view : null;
}

/**
 * Shows an agent result (e.g. from a "Summarize note" command) in the open chat view, saved in its
 * conversation. False when no chat view is open, so the caller can show it another way.
 */
export function showAgentResultInChat(app: App, result: AgentResult): boolean {
  const view = getChatView(app);
  if (!view) return false;
  void view.showAgentResult(result);
  return true;
}

/** Registers "Open chat", "New chat", "Ask about current note", "Stop generating" and the ribbon icon. */
export function registerChatCommands(plugin: Plugin, context: ChatViewContext): void {
  const app = plugin.app;
  plugin.addRibbonIcon("messages-square", "Open chat", () => void activateChatView(app));

  plugin.addCommand({
    id: "open-chat",
    name: "Open chat",
    callback: async () => {
      (await activateChatView(app))?.focusInput();
    },
  });

  plugin.addCommand({
    id: "new-chat",
    name: "New chat",
    callback: async () => {
      (await activateChatView(app))?.newChat();
    },
  });

  plugin.addCommand({
    id: "ask-about-current-note",
    name: "Ask about current note",
    checkCallback: (checking) => {
      if (!context.activeNotePath()) return false;
      if (!checking) void activateChatView(app).then((view) => view?.askAboutNote());
      return true;
    },
  });

  plugin.addCommand({
    id: "stop-generating",
    name: "Stop generating",
    checkCallback: (checking) => {
      const view = getChatView(app);
      if (!view?.isStreaming) return false;
      if (!checking) view.stop();
      return true;
    },
  });
}
