import { PluginSettingTab, type App, type Plugin } from "obsidian";
import { listModels, testConnection } from "../../core/providers/connection-test";
import type { KryptonServices } from "../plugin-services";
import { renderAgentsSection, renderIndexSection } from "./index-agents-section";
import { renderMcpSection } from "./mcp-section";
import { renderAgentModeSection } from "./agent-mode-section";
import { renderMcpServersSection } from "./mcp-servers-section";
import { renderModelsSection, renderWebSection } from "./models-section";
import { renderMemorySection, renderRetrievalSection } from "./retrieval-section";
import type { SectionContext } from "./setting-controls";

/** Krypton's settings: one section per concern, each with a Setting heading (no top-level heading). */
export class KryptonSettingTab extends PluginSettingTab {
  private cleanups: (() => void)[] = [];

  constructor(
    app: App,
    plugin: Plugin,
    private readonly services: KryptonServices,
    private readonly overrides: Partial<Pick<SectionContext, "testConnection" | "listModels">> = {},
  ) {
    super(app, plugin);
  }

  display(): void {
    this.render();
  }

  hide(): void {
    this.runCleanups();
    super.hide();
  }

  private render(): void {
    this.runCleanups();
    const { containerEl, services } = this;
    containerEl.empty();
    containerEl.addClass("krypton-settings");
    const ctx: SectionContext = {
      containerEl,
      services,
      refresh: () => this.render(),
      onHide: (cleanup) => this.cleanups.push(cleanup),
      testConnection: this.overrides.testConnection ?? ((target) => testConnection(services.settings(), services.host, target)),
      listModels:
        this.overrides.listModels ?? ((provider, purpose) => listModels(services.settings(), services.host, provider, purpose)),
    };
    renderModelsSection(ctx);
    renderWebSection(ctx);
    renderRetrievalSection(ctx);
    renderMemorySection(ctx);
    renderIndexSection(ctx);
    renderAgentsSection(ctx);
    renderAgentModeSection(ctx);
    renderMcpServersSection(ctx);
    renderMcpSection(ctx);
    this.cleanups.push(services.onSettingsReloaded(() => this.render()));
  }

  private runCleanups(): void {
    for (const fn of this.cleanups.splice(0)) fn();
  }
}
