/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/tests"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.(t|j|mj)sx?$": "<rootDir>/tests/support/esbuild-transform.cjs" },
  // ESM-only packages must be transformed too; everything else in node_modules is plain CJS.
  transformIgnorePatterns: ["/node_modules/(?!(@google/genai|ollama|whatwg-fetch|pkce-challenge)/)"],
  moduleFileExtensions: ["ts", "tsx", "js", "mjs", "cjs", "json"],
  // Obsidian is not available outside the app: tests use a small stand-in for the parts Krypton touches.
  moduleNameMapper: { "^obsidian$": "<rootDir>/tests/support/obsidian-stub/index.ts" },
  reporters: ["default", "<rootDir>/tests/support/summary-reporter.cjs"],
  testTimeout: 30000,
  maxWorkers: 2,
};
