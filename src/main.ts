import { Plugin } from "obsidian";

// STUB: the Obsidian host work (issue 2/4) replaces this with the real lifecycle wiring.
export default class KryptonPlugin extends Plugin {
  override onload(): void {}
}
