// Lint: eslint-plugin-obsidianmd's recommended config (Obsidian's guideline rules) over the plugin source,
// plus the rule that keeps src/core host-neutral (tests/architecture.test.ts checks the same thing).
import { defineConfig, globalIgnores } from "eslint/config";
import obsidianmd from "eslint-plugin-obsidianmd";
import { DEFAULT_ACRONYMS } from "eslint-plugin-obsidianmd/dist/lib/rules/ui/acronyms.js";
import { DEFAULT_BRANDS } from "eslint-plugin-obsidianmd/dist/lib/rules/ui/brands.js";
import { builtinModules } from "node:module";
import globals from "globals";

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default defineConfig([
  globalIgnores(["node_modules/", "main.js", "dist/", "tests/", "bench/", "examples/", "coverage/", "test-artifacts/", "bin/", "scripts/", "*.cjs", "*.mjs"]),
  ...obsidianmd.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["eslint.config.*"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  {
    files: ["src/**/*.ts"],
    rules: {
      // "MCP" (Model Context Protocol) is an acronym like "API" and "URL": "Start/stop MCP bridge".
      // In a note editor "cursor" is the text cursor, not the Cursor editor brand: "Insert at cursor".
      "obsidianmd/ui/sentence-case": [
        "warn",
        { enforceCamelCaseLower: true, acronyms: [...DEFAULT_ACRONYMS, "MCP"], brands: DEFAULT_BRANDS.filter((b) => b !== "Cursor") },
      ],
      // Obsidian 1.13's declarative settings replace display() entirely and cannot express masked key
      // fields, "Test connection" buttons or live status lines; minAppVersion is below 1.13, so display() stays.
      "obsidianmd/settings-tab/prefer-setting-definitions": "off",
    },
  },
  {
    // Node hosts: the CLI and the Node-only code the desktop plugin loads lazily (MCP bridge).
    files: ["src/cli/**/*.ts", "src/node/**/*.ts"],
    languageOptions: { globals: { ...globals.node } },
    // Node-only code: it never runs in an Obsidian window or on mobile (the desktop plugin loads
    // src/node lazily, behind Platform.isDesktopApp), so the browser/mobile rules do not apply here.
    rules: {
      "obsidianmd/prefer-window-timers": "off",
      "obsidianmd/no-global-this": "off",
      "obsidianmd/no-nodejs-modules": "off",
      "no-restricted-globals": "off",
      // There is no Vault#configDir outside Obsidian: the Node host defaults to the standard name.
      "obsidianmd/hardcoded-config-path": "off",
    },
  },
  {
    files: ["src/core/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "obsidian", message: "src/core is host-neutral: reach Obsidian through a port in src/core/ports." },
            { name: "ollama", message: "Use 'ollama/browser': the main entry imports node:fs." },
            { name: "@google/genai", message: "Use '@google/genai/web': the Node entry pulls in Node-only modules." },
            ...nodeBuiltins.map((name) => ({ name, message: "src/core is host-neutral: no Node builtins (use a port)." })),
          ],
        },
      ],
    },
  },
]);
