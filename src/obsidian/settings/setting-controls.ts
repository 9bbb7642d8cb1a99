import { Notice, Setting, type TextAreaComponent, type TextComponent } from "obsidian";
import type { ConnectionResult, ConnectionTarget, ModelListResult } from "../../core/providers/connection-test";
import type { KryptonSettings } from "../../core/settings";
import type { KryptonServices } from "../plugin-services";
import { isHttpUrl } from "../../core/util/http-url";
import { normalizeVaultPath } from "../../core/notes/note-paths";
import { errorMessage } from "../../core/util/errors";

/** What each settings section gets: where to draw, the services, and a way to redraw the tab. */
export interface SectionContext {
  containerEl: HTMLElement;
  services: KryptonServices;
  /** Redraws the whole tab (after a change that shows or hides other settings). */
  refresh(): void;
  /** Runs on hide (unsubscribe status listeners). */
  onHide(cleanup: () => void): void;
  /** Injected for tests; the real ones call core/providers/connection-test.ts. */
  testConnection(target: ConnectionTarget): Promise<ConnectionResult>;
  listModels(provider: "ollama" | "gemini", purpose: "chat" | "embedding"): Promise<ModelListResult>;
}

export function heading(ctx: SectionContext, name: string, desc?: string): Setting {
  const s = new Setting(ctx.containerEl).setName(name).setHeading();
  if (desc) s.setDesc(desc);
  return s;
}

type NumberKey = { [K in keyof KryptonSettings]: KryptonSettings[K] extends number ? K : never }[keyof KryptonSettings];
type StringKey = { [K in keyof KryptonSettings]: KryptonSettings[K] extends string ? K : never }[keyof KryptonSettings];
type BoolKey = { [K in keyof KryptonSettings]: KryptonSettings[K] extends boolean ? K : never }[keyof KryptonSettings];

/**
 * A number field that saves only valid values and says what is wrong otherwise. `onLeave`: saved when the
 * user leaves the field or presses Enter, for a value that restarts something (a half-typed port is valid).
 */
export function numberSetting(
  ctx: SectionContext,
  key: NumberKey,
  name: string,
  desc: string,
  range: { min: number; max: number; integer?: boolean; onLeave?: boolean },
): Setting {
  const setting = new Setting(ctx.containerEl).setName(name).setDesc(desc);
  setting.addText((text) => {
    text.inputEl.type = "number";
    text.inputEl.min = String(range.min);
    text.inputEl.max = String(range.max);
    text.setValue(String(ctx.services.settings()[key]));
    const save = async (raw: string) => {
      const value = Number(raw);
      const ok = raw.trim() !== "" && Number.isFinite(value) && value >= range.min && value <= range.max && (!range.integer || Number.isInteger(value));
      setting.setDesc(ok ? desc : `${desc} Enter ${range.integer ? "a whole number" : "a number"} from ${range.min} to ${range.max}.`);
      setting.descEl.toggleClass("mod-warning", !ok);
      if (ok) await ctx.services.saveSettings({ [key]: value });
    };
    if (range.onLeave) commitText(text, save);
    else text.onChange(save);
  });
  return setting;
}

export function toggleSetting(ctx: SectionContext, key: BoolKey, name: string, desc: string, after?: () => void): Setting {
  return new Setting(ctx.containerEl)
    .setName(name)
    .setDesc(desc)
    .addToggle((t) =>
      t.setValue(ctx.services.settings()[key]).onChange(async (on) => {
        await ctx.services.saveSettings({ [key]: on });
        after?.();
      }),
    );
}

/**
 * A text field that saves when the user leaves it or presses Enter, not on every keystroke (model names
 * and URLs would otherwise rebuild clients, or re-embed, for each half-typed value).
 */
export function commitText<T extends TextComponent | TextAreaComponent>(text: T, commit: (value: string) => Promise<void> | void): T {
  let last = text.getValue();
  const fire = () => {
    const value = text.getValue().trim();
    if (value === last) return;
    last = value;
    void commit(value);
  };

  const input: HTMLElement = text.inputEl;
  input.addEventListener("change", fire);
  input.addEventListener("keydown", (evt: KeyboardEvent) => {
    // Enter commits a one-line field; in a text area it starts a new line.
    if (evt.key === "Enter" && input.tagName === "INPUT") fire();
  });
  return text;
}

export function textSetting(ctx: SectionContext, key: StringKey, name: string, desc: string, placeholder = ""): Setting {
  return new Setting(ctx.containerEl)
    .setName(name)
    .setDesc(desc)
    .addText((t) => {
      t.setPlaceholder(placeholder).setValue(ctx.services.settings()[key]);
      commitText(t, (value) => ctx.services.saveSettings({ [key]: value }));
    });
}

/**
 * A folder Krypton writes notes into: saved only when the one path rule for writes (normalizeVaultPath, as
 * each write applies it) allows it, so "../Notes" or the config folder is refused here rather than at the
 * first note; otherwise the description says why and the folder in use stays.
 */
export function folderSetting(ctx: SectionContext, key: "newNoteFolder" | "flashcardsFolder" | "studyGoalsFolder", name: string, desc: string, placeholder: string): Setting {
  return checkedTextSetting(ctx, key, name, desc, placeholder, (value) => {
    try {
      normalizeVaultPath(value, ctx.services.host.vault.configDir, "folder", "write");
      return null;
    } catch (err) {
      const current = ctx.services.settings()[key];
      return `Not saved: ${errorMessage(err)}; ${current ? `"${current}"` : "the vault's root"} stays in use.`;
    }
  });
}

/**
 * A server address: saved only when it is an http(s) URL the requests can go to (the CLI refuses the same
 * ones); otherwise the description says what to type and the last good address stays in use.
 */
export function urlSetting(ctx: SectionContext, key: "ollamaUrl", name: string, desc: string, example: string): Setting {
  return checkedTextSetting(ctx, key, name, desc, example, (value) =>
    isHttpUrl(value) ? null : `Enter an address that starts with http:// or https://, e.g. ${example}; the one in use stays ${ctx.services.settings()[key]}.`,
  );
}

/** A text setting saved when the user leaves it, only if `problem` finds none; otherwise the description adds the problem. */
function checkedTextSetting(
  ctx: SectionContext,
  key: "newNoteFolder" | "flashcardsFolder" | "studyGoalsFolder" | "ollamaUrl",
  name: string,
  desc: string,
  placeholder: string,
  problem: (value: string) => string | null,
): Setting {
  const setting = new Setting(ctx.containerEl).setName(name).setDesc(desc);
  setting.addText((t) => {
    t.setPlaceholder(placeholder).setValue(ctx.services.settings()[key]);
    commitText(t, async (value) => {
      const why = problem(value);
      setting.setDesc(why === null ? desc : `${desc} ${why}`);
      setting.descEl.toggleClass("mod-warning", why !== null);
      if (why === null) await ctx.services.saveSettings({ [key]: value });
    });
  });
  return setting;
}

/** An API key field: masked, saved on leave, stored in secret storage when Obsidian has it. */
export function secretSetting(ctx: SectionContext, key: "geminiApiKey" | "tavilyApiKey", name: string, desc: string): Setting {
  const where = ctx.services.usesSecretStorage
    ? "Kept in Obsidian's secret storage, not in the plugin's data file."
    : "Kept in the plugin's data file (this Obsidian version has no secret storage).";
  return new Setting(ctx.containerEl)
    .setName(name)
    .setDesc(`${desc} ${where}`)
    .addText((t) => {
      t.inputEl.type = "password";
      t.inputEl.autocomplete = "off";
      t.setPlaceholder("Paste your key").setValue(ctx.services.settings()[key]);
      commitText(t, (value) => ctx.services.saveSettings({ [key]: value }));
    });
}

/** "Test connection": runs the check and shows its one-sentence verdict under the setting. */
export function connectionTestSetting(ctx: SectionContext, target: ConnectionTarget, name: string): Setting {
  // Tavily has no model to choose; Ollama has no key.
  const checks = { ollama: "Checks the address and the models you chose.", gemini: "Checks the key and the models you chose.", tavily: "Checks the key." };
  const setting = new Setting(ctx.containerEl).setName(name).setDesc(checks[target]);
  const resultEl = setting.descEl.createDiv({ cls: "krypton-connection-result" });
  setting.addButton((b) =>
    b.setButtonText("Test connection").onClick(async () => {
      b.setDisabled(true);
      resultEl.setText("Testing…");
      resultEl.removeClass("mod-success", "mod-warning");
      try {
        const result = await ctx.testConnection(target);
        resultEl.setText(result.message);
        resultEl.addClass(result.ok ? "mod-success" : "mod-warning");
      } finally {
        b.setDisabled(false);
      }
    }),
  );
  return setting;
}

/**
 * A model name typed by hand, saved only when not empty: a cleared field would save no model at all, so
 * every request would fail (and an embedding model's index would drop its vectors). `noteEl` shows `note`,
 * and says so when the name is refused; the model in use stays.
 */
export function modelNameText(t: TextComponent, noteEl: HTMLElement, note: string, current: string, save: (model: string) => Promise<void>): void {
  t.setValue(current).setPlaceholder("Model name");
  commitText(t, async (model) => {
    const kept = current ? ` ${current} stays in use.` : "";
    noteEl.setText(model ? note : `${note} A model name is needed;${kept ? kept : " none is saved."}`.trim());
    noteEl.toggleClass("mod-warning", !model || note !== "");
    if (model) {
      current = model;
      await save(model);
    }
  });
}

/**
 * A model picker: a dropdown of the models the provider offers (loaded in the background), always
 * including the current choice; when the list cannot be loaded, a text field and the reason.
 */
export function modelSetting(
  ctx: SectionContext,
  options: {
    name: string;
    desc: string;
    provider: "ollama" | "gemini";
    purpose: "chat" | "embedding";
    current: string;
    save: (model: string) => Promise<void>;
  },
): Setting {
  const setting = new Setting(ctx.containerEl).setName(options.name).setDesc(options.desc);
  const noteEl = setting.descEl.createDiv({ cls: "krypton-model-note" });
  setting.addDropdown((d) => {
    // With no model chosen yet the dropdown says so, rather than showing a model that is not saved.
    d.addOption(options.current, options.current || "Choose a model").setValue(options.current);
    d.onChange((value) => options.save(value));
    void ctx.listModels(options.provider, options.purpose).then((result) => {
      if (!result.ok) {
        const why = `Could not list models: ${result.message} Type the model name instead.`;
        noteEl.setText(why);
        noteEl.addClass("mod-warning");
        d.selectEl.hide();
        setting.addText((t) => modelNameText(t, noteEl, why, options.current, options.save));
        return;
      }
      for (const model of result.models) if (model !== options.current) d.addOption(model, model);
    });
  });
  return setting;
}

export async function copyToClipboard(text: string, what: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    new Notice(`${what} copied`);
  } catch {
    new Notice(`Could not copy the ${what.toLowerCase()}; select it and copy by hand.`);
  }
}
