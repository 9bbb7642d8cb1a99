/**
 * Notes the agents create from the CLI reach the index at once. The CLI's FsVault does not watch the
 * folder (no vault events), so before NoteOperations told the index itself, a note created in
 * `krypton chat` stayed unsearchable for the rest of the session. The bundled CLI, a temp vault and the
 * loopback Ollama server (chat and embeddings).
 */
import { buildCli, runCli } from "../cli/cli-harness";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import { makeTempVault, type TempVault } from "../support/temp-vault";

describe("notes created from the CLI", () => {
  let ollama: OllamaTestServer;
  let vault: TempVault;

  beforeAll(async () => {
    await buildCli();
    ollama = await startOllamaServer();
  }, 120_000);
  afterAll(() => ollama.close());
  beforeEach(async () => {
    ollama.reset();
    vault = await makeTempVault({ "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n" });
  });
  afterEach(() => vault.cleanup());

  it("`npx krypton ask <vault> \"create a note on X\"` saves the note with the index before it exits", async () => {
    const env = { KRYPTON_OLLAMA_URL: ollama.url };
    ollama.script({ route: "chat", reply: "# Tide pools\n\nTide pools shelter anemones and crabs at low water.\n" });

    const created = await runCli(["ask", vault.root, "create a note on tide pools"], { env, viaBin: true });

    expect(created.code).toBe(0);
    expect(created.stdout).toContain("Krypton/tide-pools.md");
    expect(await vault.read("Krypton/tide-pools.md")).toContain("anemones");

    // The next run finds the note in the saved index: its sync has nothing left to embed.
    ollama.reset();
    const found = await runCli(["search", vault.root, "anemones", "--json"], { env });
    expect(found.code).toBe(0);
    expect((JSON.parse(found.stdout) as { path: string }[]).map((h) => h.path)).toEqual(["Krypton/tide-pools.md"]);
    const embedded = ollama.requestsTo("embed").flatMap((r) => (r.body as { input: string[] }).input);
    expect(embedded.some((text) => text.includes("shelter anemones"))).toBe(false);
  });

  it("`krypton chat`: a note created by one message is found by the next", async () => {
    ollama.script({ route: "chat", reply: "# Tide pools\n\nTide pools shelter anemones and crabs at low water.\n" });
    const input = ["create a note on tide pools", "find notes about anemones", "/quit"].join("\n") + "\n";

    const r = await runCli(["chat", vault.root], { env: { KRYPTON_OLLAMA_URL: ollama.url }, input });

    expect(r.code).toBe(0);
    expect(await vault.read("Krypton/tide-pools.md")).toContain("anemones");
    const afterSearch = r.stdout.slice(r.stdout.indexOf("Krypton/tide-pools.md") + 1);
    expect(afterSearch).toMatch(/1\. Tide pools +Krypton\/tide-pools\.md/);
    expect(ollama.requestsTo("chat")).toHaveLength(1); // the search was the agent's, not the model's
  });
});
