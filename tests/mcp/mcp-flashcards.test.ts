// generate_flashcards through the real bridge and the SDK client, on the real core and the loopback Ollama:
// the source note meets read_note's rules (paths, exclusions, config folder), decks land in the flashcards folder.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { KryptonCore } from "../../src/core/krypton";
import { generateMcpToken } from "../../src/core/mcp/mcp-token";
import type { McpHttpServerHandle } from "../../src/node/mcp-http-server";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import type { TempVault } from "../support/temp-vault";
import { snapshot, textOf } from "./support/mcp-test-kit";
import { closeRealCoreBridge, startRealCoreBridge } from "./support/real-core-bridge";

const token = generateMcpToken();
let ollama: OllamaTestServer;
let vault: TempVault;
let core: KryptonCore;
let bridge: McpHttpServerHandle;
let client: Client;

beforeEach(async () => {
  ollama = await startOllamaServer();
  ({ vault, core, bridge, client } = await startRealCoreBridge({
    ollama,
    token,
    notes: {
      "Bio/Cell.md": "# Cell\n\nMitochondria make ATP for the cell.\n",
      "Private/Secret.md": "# Secret\n\nDo not read.\n",
    },
    settings: { excludePatterns: ["Private/"] },
  }));
});

afterEach(async () => {
  await closeRealCoreBridge({ vault, core, bridge, client });
  await ollama.close();
});

it("makes cards from a note into a deck and reports them; a repeat adds none", async () => {
  ollama.setDefault({ route: "chat", reply: '{"cards":[{"type":"basic","front":"What makes ATP?","back":"Mitochondria","passage":1}]}' });
  const result = await client.callTool({ name: "generate_flashcards", arguments: { note_path: "Bio/Cell.md", max_cards: 5 } });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual({
    deckPath: "Flashcards/Cell.md",
    added: [{ type: "basic", front: "What makes ATP?", back: "Mitochondria", source: "Bio/Cell#Cell" }],
    duplicates: 0,
    ungrounded: 0,
    unusable: 0,
    createdDeck: true,
  });
  expect(await vault.read("Flashcards/Cell.md")).toContain("What makes ATP?::Mitochondria [[Bio/Cell#Cell]]\n\n");
  const again = await client.callTool({ name: "generate_flashcards", arguments: { note_path: `${vault.root}/Bio/Cell.md` } });
  expect(again.structuredContent).toMatchObject({ added: [], duplicates: 1, createdDeck: false });
});

it("follows the MCP path rules: outside the vault, excluded folders, the config folder, bad caps; nothing is written", async () => {
  const before = await snapshot(vault.root);
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ note_path: "../outside.md" }, /outside|\.\./i],
    [{ note_path: "/etc/passwd" }, /outside|vault|absolute/i],
    [{ note_path: "Private/Secret.md" }, /exclude patterns/],
    [{ note_path: ".obsidian/app.json" }, /config|\.obsidian|note/i],
    [{ note_path: "Bio/Cell.md", max_cards: 31 }, /max_cards/],
    [{}, /note_path or topic/],
  ];
  for (const [args, message] of cases) {
    const result = await client.callTool({ name: "generate_flashcards", arguments: args });
    expect({ args, isError: result.isError }).toEqual({ args, isError: true });
    expect(textOf(result)).toMatch(message);
  }
  expect(ollama.requestsTo("chat")).toHaveLength(0);
  expect(await snapshot(vault.root)).toEqual(before);
});

it("a deck name cannot lead out of the flashcards folder", async () => {
  ollama.setDefault({ route: "chat", reply: '{"cards":[{"type":"basic","front":"Q?","back":"A","passage":1}]}' });
  const result = await client.callTool({ name: "generate_flashcards", arguments: { note_path: "Bio/Cell.md", deck: "../../Bio/Cell" } });
  expect(result.isError).toBeFalsy();
  expect((result.structuredContent as { deckPath: string }).deckPath).toBe("Flashcards/Bio Cell.md");
  expect(await vault.read("Bio/Cell.md")).toBe("# Cell\n\nMitochondria make ATP for the cell.\n");
});

it("study_goals: create, log, progress, list; missing parameters are explained; goals stay in their folder", async () => {
  const call = (args: Record<string, unknown>) => client.callTool({ name: "study_goals", arguments: args });
  const created = await call({ action: "create", goal: "Pass AWS SAA", target_date: "2027-01-15" });
  expect(created.isError).toBeFalsy();
  expect(created.structuredContent).toEqual({
    goals: [{ goal: "Pass AWS SAA", path: "Study goals/Pass AWS SAA.md", target: "2027-01-15", status: "active", minutes: 0, sessions: 0, last7Days: 0, daysLeft: expect.any(Number) }],
  });
  expect((await call({ action: "log", goal: "aws", minutes: 25 })).structuredContent).toMatchObject({ goals: [{ minutes: 25, sessions: 1, last7Days: 25 }] });
  // Progress says what the chat says: the last 7 days and the days left, not only the totals a list gives.
  const progress = await call({ action: "progress", goal: "AWS" });
  expect(progress.structuredContent).toMatchObject({ goals: [{ goal: "Pass AWS SAA", minutes: 25, last7Days: 25 }] });
  const { daysLeft } = (progress.structuredContent as { goals: { daysLeft: number }[] }).goals[0];
  expect(textOf(progress)).toContain(`25 min in the last 7 days, target 2027-01-15 (${daysLeft >= 0 ? `${daysLeft} day` : "passed"}`);
  expect((await call({ action: "list" })).structuredContent).toMatchObject({ goals: [{ goal: "Pass AWS SAA" }] });
  const missing = await call({ action: "log", goal: "aws" });
  expect(missing.isError).toBe(true);
  expect(textOf(missing)).toMatch(/Missing required parameter: minutes/);
  const sneaky = await call({ action: "create", goal: "../../Bio/Cell" });
  expect((sneaky.structuredContent as { goals: { path: string }[] }).goals[0].path).toBe("Study goals/Bio Cell.md");
  expect(await vault.read("Bio/Cell.md")).toBe("# Cell\n\nMitochondria make ATP for the cell.\n");
});

// A client reading only structuredContent must learn too that SR will not show the cards (deck in a folder SR ignores).
it("reports the Spaced Repetition plugin's folder to ignore that holds the deck", async () => {
  await vault.write(".obsidian/plugins/obsidian-spaced-repetition/data.json", JSON.stringify({ settings: { noteFoldersToIgnore: ["Flash"] } }));
  ollama.setDefault({ route: "chat", reply: '{"cards":[{"type":"basic","front":"What makes ATP?","back":"Mitochondria","passage":1}]}' });
  const result = await client.callTool({ name: "generate_flashcards", arguments: { note_path: "Bio/Cell.md" } });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ deckPath: "Flashcards/Cell.md", createdDeck: true, srIgnoredFolder: "Flash" });
  expect(textOf(result)).toMatch(/will not review the cards of Flashcards\/Cell\.md: its path matches Flash, one of the Spaced Repetition plugin's "Folders to ignore"/);
});
