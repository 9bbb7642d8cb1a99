import type { Plugin } from "obsidian";
import type { IndexStatus } from "../../core/indexing/index-status";
import type { KryptonServices } from "../plugin-services";
import { statusBarText, statusBarTooltip } from "./index-status-text";

/** The status bar item: progress while indexing, the note count when ready, a hint when keyword-only. */
export function addIndexStatusBar(plugin: Plugin, services: KryptonServices, onClick: () => void): HTMLElement {
  const el = plugin.addStatusBarItem();
  el.addClass("krypton-status-bar", "mod-clickable");
  const render = (status: IndexStatus) => {
    el.setText(statusBarText(status));
    el.setAttr("aria-label", statusBarTooltip(status));
    el.setAttr("data-tooltip-position", "top");
  };
  render(services.core.index.status());
  plugin.register(services.core.index.onStatus(render));
  plugin.registerDomEvent(el, "click", onClick);
  return el;
}
