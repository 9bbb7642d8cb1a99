import { Setting } from "obsidian";
import { everyNoteExcludedText } from "../../core/indexing/index-status";
import { patternsTakingEveryNote } from "../../core/notes/read-policy";
import { statusBarText } from "../status/index-status-text";
import { commitText, folderSetting, heading, toggleSetting, type SectionContext } from "./setting-controls";

/** Index: exclusions, status, rebuild. */
export function renderIndexSection(ctx: SectionContext): void {
  const { services } = ctx;
  heading(ctx, "Index", "Stored in the .krypton folder of this vault. Your notes are only read, never changed.");
  const excludeDesc = "One folder or glob per line, e.g. Templates/. The config folder and .krypton are always skipped.";
  const exclude = new Setting(ctx.containerEl).setName("Excluded folders and patterns").setDesc(excludeDesc);
  exclude.addTextArea((t) => {
    t.setPlaceholder("Templates/").setValue(services.settings().excludePatterns.join("\n"));
    t.inputEl.rows = 4;
    commitText(t, async (value) => {
      const excludePatterns = value.split("\n").map((l) => l.trim()).filter((l) => l.length > 0);
      await services.saveSettings({ excludePatterns });
      // Saved all the same (the user may mean it), but said here: otherwise the only sign is an empty index.
      const notes = await services.host.vault.listNotes();
      const takers = patternsTakingEveryNote(notes.map((n) => n.path), { excludePatterns }, services.host.vault.configDir);
      exclude.setDesc(takers ? `${excludeDesc} ${everyNoteExcludedText(takers)}.` : excludeDesc);
      exclude.descEl.toggleClass("mod-warning", takers !== null);
    });
  });
  const status = new Setting(ctx.containerEl).setName("Index status");
  const render = () => {
    status.setDesc(statusBarText(services.core.index.status()));
  };
  render();
  ctx.onHide(services.core.index.onStatus(render));
  status.addButton((b) =>
    b
      .setButtonText("Rebuild index")
      .setWarning()
      .onClick(() => void services.rebuildIndex()),
  );
}

/** Agents: create, find and summarize notes from the chat. */
export function renderAgentsSection(ctx: SectionContext): void {
  heading(ctx, "Agents", "Let the chat create, find and summarize notes when you ask it to.");
  toggleSetting(ctx, "agentsEnabled", "Enable agents", "Off: every message goes to the chat model.");
  toggleSetting(ctx, "intentClassifier", "Model-based intent detection", "Extra model call per message: catches requests the built-in patterns miss.");
  folderSetting(ctx, "newNoteFolder", "Folder for new notes", "Where created notes are saved (empty: the vault's root).", "Krypton");
  toggleSetting(ctx, "openCreatedNote", "Open created notes", "Open a note right after Krypton creates it.");
  folderSetting(
    ctx,
    "flashcardsFolder",
    "Folder for flashcard decks",
    "One note per deck, in the Spaced Repetition plugin's format. Krypton only appends to decks it created.",
    "Flashcards",
  );
  folderSetting(ctx, "studyGoalsFolder", "Folder for study goals", "One note per goal, with its sessions; you can edit them by hand.", "Study goals");
}
