// Jest environment for plugin-host tests: jsdom (Obsidian's window has a DOM) plus the web globals that
// Obsidian's Chromium window has and jsdom lacks (fetch, Response, TextEncoder, streams, ...), taken from
// Node, which implements the same standards. Use with: /** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
const { TestEnvironment } = require("jest-environment-jsdom");

const WEB_GLOBALS = [
  "fetch",
  "Request",
  "Response",
  "Headers",
  "FormData",
  "Blob",
  "TextEncoder",
  "TextDecoder",
  "ReadableStream",
  "WritableStream",
  "TransformStream",
  "TextDecoderStream",
  "structuredClone",
  "setImmediate",
  "clearImmediate",
  "AbortSignal",
  "AbortController",
];

class ObsidianWindowEnvironment extends TestEnvironment {
  constructor(config, context) {
    const projectConfig = {
      ...config.projectConfig,
      testEnvironmentOptions: { ...config.projectConfig.testEnvironmentOptions, customExportConditions: ["node", "require", "default"] },
    };
    super({ ...config, projectConfig }, context);
    for (const name of WEB_GLOBALS) {
      // Node's AbortController replaces jsdom's: Node's fetch only accepts its own signals (one realm, as in Chromium).
      const replace = name === "AbortSignal" || name === "AbortController";
      if ((replace || this.global[name] === undefined) && globalThis[name] !== undefined) this.global[name] = globalThis[name];
    }
    if (this.global.crypto && !this.global.crypto.subtle) this.global.crypto = globalThis.crypto;
  }
}

module.exports = ObsidianWindowEnvironment;
