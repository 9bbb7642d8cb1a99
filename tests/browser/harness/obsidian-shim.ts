// What `obsidian` resolves to inside the browser-test page: the DOM helpers and workspace stand-ins
// (app.ts is Node-backed and not needed by the chat view).
export * from "../../support/obsidian-stub/dom";
export * from "../../support/obsidian-stub/workspace";
