// A small, honest stand-in for the parts of Obsidian's API that Krypton uses (Obsidian cannot run in tests).
// dom.ts and workspace.ts: DOM helpers, Component, ItemView, MarkdownRenderer, setIcon (chat-view work).
// app.ts: App, Plugin, Vault, TFile, Notice, Modal, Setting, requestUrl, Platform, ... (plugin-host work).
export * from "./dom";
export * from "./workspace";
export * from "./app";
