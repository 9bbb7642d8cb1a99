/**
 * `krypton ask` when a search finds nothing while meaning could not be used: "No notes match" is the answer
 * (exit 0 for "find notes about X"), and why keywords alone were used is said once on stderr, as under found
 * notes (with --json: the agent result's keywordOnly). A paraphrase sharing no word with the notes finds
 * nothing by keywords: the empty result is when the user most needs to know. The vault is indexed while the
 * loopback Ollama embeds; then it answers 500 on /api/embed, or is not there at all.
 */
import { useCliTestBed } from "../support/cli-test-bed";
import { runCli } from "./cli-harness";

const NOTES: Record<string, string> = {
  "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n",
  "Travel/Lisbon.md": "# Lisbon\n\nTrams, custard tarts and steep hills.\n",
};
const FAILED = /^krypton: warning: Semantic search failed \(the embedding server failed [^\n]*\): notes were matched by keywords only\.\n$/;
const DEAD = "http://127.0.0.1:9";
const UNAVAILABLE = `Semantic search is unavailable (Ollama is not reachable at ${DEAD} (connection refused: is it running?)): notes were matched by keywords only.`;

interface AskJson {
  agent?: { kind: string; text: string; failed?: string; keywordOnly?: string };
  notices?: string[];
}

describe("krypton ask: a search that finds nothing", () => {
  const bed = useCliTestBed({ notes: NOTES });
  beforeEach(async () => {
    const indexed = await runCli(["index", bed.vault.root], { env: bed.env });
    expect(indexed.code).toBe(0);
  });
  const ask = (question: string, env: Record<string, string>, ...args: string[]) => runCli(["ask", bed.vault.root, question, "--mode", "none", ...args], { env });

  it("the query's vector fails (500 on /api/embed): 'No notes match' on stdout, why once on stderr; --json has it in the agent result", async () => {
    bed.ollama.setDefault({ route: "embed", status: 500 });
    const r = await ask("find notes about xyzzy", bed.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("No notes match 'xyzzy'\n");
    expect(r.stderr).toMatch(FAILED);

    const json = await ask("find notes about xyzzy", bed.env, "--json");
    expect(json.code).toBe(0);
    const { agent, notices } = JSON.parse(json.stdout) as AskJson;
    expect(agent).toMatchObject({ kind: "message", failed: "not-found", keywordOnly: expect.stringMatching(/^Semantic search failed/) });
    expect(agent!.text).toBe(`No notes match 'xyzzy'\n\n_${agent!.keywordOnly!}_`);
    expect(notices).toBeUndefined();
    expect(json.stderr).not.toContain("keywords only");
  });

  it("the embedder is not reachable: the same, in the words of every host; a failed summary says why as a warning, not in its error", async () => {
    const env = { KRYPTON_OLLAMA_URL: DEAD };
    const r = await ask("find notes about xyzzy", env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("No notes match 'xyzzy'\n");
    expect(r.stderr).toBe(`krypton: warning: ${UNAVAILABLE}\n`);

    const summary = await ask("summarize my notes on xyzzy", env);
    expect(summary.code).toBe(1);
    expect(summary.stdout).toBe("");
    expect(summary.stderr).toBe(`krypton: warning: ${UNAVAILABLE}\nkrypton: No notes match 'xyzzy'\n`);
  });

  it("with the embedder up, only 'No notes match'", async () => {
    const r = await ask("find notes about xyzzy", bed.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("No notes match 'xyzzy'\n");
    expect(r.stderr).toBe("");
  });
});
