import type { KryptonCore } from "../../core/krypton";
import type { KryptonSettings } from "../../core/settings";
import type { NoteRename } from "../../core/chat/citation-renames";

/**
 * Everything the chat view needs from the plugin host, in one small interface. The plugin provides it
 * (src/obsidian host wiring); tests and the browser harness provide their own.
 */
export interface ChatViewContext {
  readonly core: KryptonCore;
  /** Opens Krypton's settings tab. */
  openSettings(): void;
  /** Opens a note, scrolled to a 0-based line when given; newTab for Ctrl/Cmd-click. */
  openNote(path: string, line: number | undefined, newTab: boolean): void | Promise<void>;
  /** Follows a [[wikilink]] from a rendered answer (resolved like Obsidian resolves links). */
  openLinkText(linktext: string, sourcePath: string, newTab: boolean): void | Promise<void>;
  /** Opens a web page in the system browser. */
  openUrl(url: string): void;
  /** Inserts at the cursor of the last active Markdown editor; false when there is none. */
  insertAtCursor(text: string): boolean;
  /** Path of the note in the active (or last active) editor. */
  activeNotePath(): string | undefined;
  /** A short, transient message (Obsidian's Notice). */
  notify(message: string): void;
  /** Persists changed settings and applies them to the core (used by the model switcher). */
  saveSettings(patch: Partial<KryptonSettings>): Promise<void>;
  /** Chat model names the configured provider offers; [] when it cannot tell. */
  listChatModels(): Promise<string[]>;
  /** Calls the listener after settings change; returns a function that unsubscribes. */
  onSettingsChange(listener: () => void): () => void;
  /** Calls the listener when a note is renamed or moved (once per note of a renamed folder); returns a function that unsubscribes. */
  onNoteRenamed(listener: (rename: NoteRename) => void): () => void;
}
