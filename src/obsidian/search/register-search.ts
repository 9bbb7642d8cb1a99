import type { Plugin } from "obsidian";
import type { KryptonServices } from "../plugin-services";
import { SearchModal } from "./search-modal";

/** The ribbon icon and the command "Search vault", both opening the search dialog. */
export function registerSearch(plugin: Plugin, services: KryptonServices): void {
  const open = () => new SearchModal(plugin.app, services).open();
  plugin.addRibbonIcon("search", "Search vault", open);
  plugin.addCommand({ id: "search-vault", name: "Search vault", callback: open });
}
