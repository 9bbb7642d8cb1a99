// Obsidian DOM helpers (createEl, createDiv, empty, setText, addClass, ...) installed on HTMLElement.prototype.
export {};
