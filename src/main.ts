import { Plugin } from "obsidian";
import { registerChatCommands } from "./obsidian/chat-view/chat-commands";
import { KryptonChatView, VIEW_TYPE_KRYPTON_CHAT } from "./obsidian/chat-view/chat-view";
import { registerCommands } from "./obsidian/commands/register-commands";
import { KryptonServices } from "./obsidian/plugin-services";
import { registerSearch } from "./obsidian/search/register-search";
import { KryptonSettingTab } from "./obsidian/settings/settings-tab";
import { IndexStatusModal } from "./obsidian/status/index-status-modal";
import { addIndexStatusBar } from "./obsidian/status/index-status-bar";
import { registerWorkflows } from "./obsidian/workflows/register-workflows";

/** The plugin lifecycle only: build the services, hand them to each feature, clean up on unload. */
export default class KryptonPlugin extends Plugin {
  private services: KryptonServices | null = null;

  async onload(): Promise<void> {
    const services = await KryptonServices.load(this);
    this.services = services;
    const settingTab = new KryptonSettingTab(this.app, this, services);
    this.addSettingTab(settingTab);
    addIndexStatusBar(this, services, () => new IndexStatusModal(this.app, services).open());
    registerSearch(this, services);
    registerCommands(this, services);
    registerWorkflows(this, services);
    const chatContext = services.chatViewContext(() => this.openSettings());
    this.registerView(VIEW_TYPE_KRYPTON_CHAT, (leaf) => new KryptonChatView(leaf, chatContext));
    registerChatCommands(this, chatContext);
    services.trackActiveNote();
    // Indexing starts once Obsidian has restored the workspace, in the background.
    this.app.workspace.onLayoutReady(() => services.startIndexing());
  }

  /** Obsidian 1.5.7+: data.json changed on disk from outside Obsidian (a sync tool). */
  async onExternalSettingsChange(): Promise<void> {
    await this.services?.reloadSettings();
  }

  onunload(): void {
    void this.services?.close();
    this.services = null;
  }

  private openSettings(): void {
    // app.setting is not in the public API; opening the tab is a convenience, not a requirement.
    const setting = (this.app as unknown as { setting?: { open(): void; openTabById(id: string): void } }).setting;
    setting?.open();
    setting?.openTabById(this.manifest.id);
  }
}
