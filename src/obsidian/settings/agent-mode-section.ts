import { Setting } from "obsidian";
import { parseModelRef } from "../../core/providers/model-ref";
import type { AgentPreset } from "../../core/settings";
import { commitText, heading, numberSetting, toggleSetting, type SectionContext } from "./setting-controls";

/** Agent mode: the tool loop's limits and the presets (persona, provider/model, allowed tools). */
export function renderAgentModeSection(ctx: SectionContext): void {
  const { services } = ctx;
  heading(
    ctx,
    "Agent mode",
    "The chat's Agent toggle: the model calls tools (search, read and list notes, web search, MCP servers) until it can answer. " +
      "Writing a note or appending to one always asks you first.",
  );
  toggleSetting(ctx, "agentMode", "Agent mode in the chat", "Requests the note agents do not recognise go to the tool loop. Also the Agent toggle under the chat box.");
  numberSetting(ctx, "agentMaxSteps", "Steps per answer", "Model calls before the agent must answer (default 8).", { min: 1, max: 50, integer: true });
  const seconds = new Setting(ctx.containerEl)
    .setName("Time limit per answer (seconds)")
    .setDesc("The agent stops and says so after this long (default 180).");
  seconds.addText((text) => {
    text.inputEl.type = "number";
    text.setValue(String(Math.round(services.settings().agentTimeoutMs / 1000))).onChange(async (raw) => {
      const value = Number(raw);
      const ok = Number.isInteger(value) && value >= 10 && value <= 3600;
      seconds.descEl.toggleClass("mod-warning", !ok);
      if (ok) await services.saveSettings({ agentTimeoutMs: value * 1000 });
    });
  });

  const presets = services.settings().agentPresets;
  new Setting(ctx.containerEl)
    .setName("Preset in use")
    .setDesc("Default: the chat model, the built-in persona and every available tool.")
    .addDropdown((d) => {
      d.addOption("", "Default");
      for (const p of presets) d.addOption(p.name, p.name);
      d.setValue(presets.some((p) => p.name === services.settings().agentPreset) ? services.settings().agentPreset : "");
      d.onChange(async (name) => services.saveSettings({ agentPreset: name }));
    });

  presets.forEach((preset, i) => renderPreset(ctx, preset, i));
  new Setting(ctx.containerEl).addButton((b) =>
    b.setButtonText("Add preset").onClick(async () => {
      await services.saveSettings(({ agentPresets }) => {
        const taken = new Set(agentPresets.map((p) => p.name));
        let n = agentPresets.length + 1;
        while (taken.has(`Preset ${n}`)) n++;
        return { agentPresets: [...agentPresets, { name: `Preset ${n}`, persona: "", model: "", tools: [] }] };
      });
      ctx.refresh();
    }),
  );
}

function renderPreset(ctx: SectionContext, preset: AgentPreset, index: number): void {
  const { services } = ctx;
  const update = async (patch: Partial<AgentPreset>) => {
    await services.saveSettings((current) => {
      const all = current.agentPresets.map((p, i) => (i === index ? { ...p, ...patch } : p));
      const renamed = patch.name !== undefined && current.agentPreset === preset.name;
      return { agentPresets: all, ...(renamed ? { agentPreset: patch.name } : {}) };
    });
  };
  new Setting(ctx.containerEl)
    .setName(`Preset: ${preset.name}`)
    .setDesc("Name")
    .addText((t) => {
      t.setValue(preset.name);
      commitText(t, async (value) => {
        if (!value || services.settings().agentPresets.some((p, i) => i !== index && p.name === value)) {
          t.setValue(preset.name);
          return;
        }
        await update({ name: value });
        ctx.refresh();
      });
    })
    .addExtraButton((b) =>
      b
        .setIcon("trash")
        .setTooltip("Remove preset")
        .onClick(async () => {
          await services.saveSettings((current) => ({
            agentPresets: current.agentPresets.filter((_, i) => i !== index),
            ...(current.agentPreset === preset.name ? { agentPreset: "" } : {}),
          }));
          ctx.refresh();
        }),
    );
  const modelHelp = "Provider and model, e.g. Ollama/llama3.1:8b (the provider is Ollama or Gemini). Empty: the chat model.";
  const model = new Setting(ctx.containerEl).setName("Model").setDesc(modelHelp);
  model.addText((t) => {
    t.setPlaceholder("Ollama/llama3.1:8b").setValue(preset.model);
    commitText(t, async (value) => {
      const parsed = value ? parseModelRef(value) : null;
      const problem = parsed && "error" in parsed ? parsed.error : "";
      model.setDesc(problem || modelHelp);
      model.descEl.toggleClass("mod-warning", Boolean(problem));
      if (!problem) await update({ model: value });
    });
  });
  new Setting(ctx.containerEl)
    .setName("Persona")
    .setDesc("The system prompt. Empty: Krypton's own.")
    .addTextArea((t) => {
      t.setValue(preset.persona);
      t.inputEl.rows = 3;
      commitText(t, (value) => update({ persona: value }));
    });
  const known = services.core.tools.list({ agent: true }).map((t) => t.name);
  new Setting(ctx.containerEl)
    .setName("Allowed tools")
    .setDesc(`Comma-separated; empty: every available tool. Built-in: ${known.filter((n) => !n.includes(":")).join(", ")}.`)
    .addText((t) => {
      t.setValue(preset.tools.join(", "));
      commitText(t, (value) =>
        update({
          tools: value
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
        }),
      );
    });
}
