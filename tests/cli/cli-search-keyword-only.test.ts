/**
 * `krypton search` when meaning could not be used: it says why once on stderr, in the words every host uses
 * beside results (the search's own reason: core/search/keyword-only.ts), whether it found notes or not, and
 * whether the saved index answered in place or was loaded (a note added since). --json prints the bare list
 * of results and leaves the reason on stderr. The vault is indexed while the loopback Ollama embeds; then it
 * answers 500 on /api/embed, or is not there at all.
 */
import { useCliTestBed } from "../support/cli-test-bed";
import { runCli } from "./cli-harness";

const NOTES: Record<string, string> = {
  "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n",
  "Travel/Lisbon.md": "# Lisbon\n\nTrams, custard tarts and steep hills.\n",
};
const FAILED = /^Semantic search failed \(the embedding server failed [^\n]*\): notes were matched by keywords only\.$/;
const DEAD = "http://127.0.0.1:9";
const UNAVAILABLE = `Semantic search is unavailable (Ollama is not reachable at ${DEAD} (connection refused: is it running?)): notes were matched by keywords only.`;

/** stderr's lines (warnings without their prefix; "No notes match" is said there too). */
const warnings = (stderr: string) => stderr.split("\n").filter(Boolean).map((line) => line.replace(/^krypton: warning: /, ""));

describe("krypton search without meaning", () => {
  const bed = useCliTestBed({ notes: NOTES });
  beforeEach(async () => {
    const indexed = await runCli(["index", bed.vault.root], { env: bed.env });
    expect(indexed.code).toBe(0);
  });
  const search = (query: string, env: Record<string, string>, ...args: string[]) => runCli(["search", bed.vault.root, query, ...args], { env });

  it("the query's vector fails (500 on /api/embed): the keyword matches, and why once on stderr", async () => {
    bed.ollama.setDefault({ route: "embed", status: 500 });
    const r = await search("sourdough", bed.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ 1\. Sourdough bread {2}Cooking\/Bread\.md:3/);
    expect(warnings(r.stderr)).toEqual([expect.stringMatching(FAILED)]);

    const none = await search("xyzzy", bed.env);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe("");
    expect(warnings(none.stderr)).toEqual([expect.stringMatching(FAILED), 'No notes match "xyzzy".']);

    const json = await search("sourdough", bed.env, "--json");
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as { path: string }[]).map((h) => h.path)).toEqual(["Cooking/Bread.md"]);
    expect(warnings(json.stderr)).toEqual([expect.stringMatching(FAILED)]);
  });

  it("the query's vector fails on a loaded index (a note added since it was saved): the same remark, once", async () => {
    await bed.vault.write("Cooking/Rye.md", "# Rye\n\nA dense sourdough loaf.\n");
    bed.ollama.setDefault({ route: "embed", status: 500 });
    const r = await search("sourdough", bed.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Cooking/Bread.md");
    // The new note's chunk has no vector until `krypton index`: that is said too, as a fact of its own.
    expect(warnings(r.stderr)).toEqual(["1 of 3 chunks changed since the last `krypton index` and is searched by keywords only", expect.stringMatching(FAILED)]);
  });

  it("the embedder is not reachable: why once on stderr, in the words of every host, found or not, with --json too", async () => {
    const env = { KRYPTON_OLLAMA_URL: DEAD };
    const r = await search("sourdough", env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ 1\. Sourdough bread/);
    expect(warnings(r.stderr)).toEqual([UNAVAILABLE]);

    const none = await search("xyzzy", env);
    expect(none.stdout).toBe("");
    expect(warnings(none.stderr)).toEqual([UNAVAILABLE, 'No notes match "xyzzy".']);

    const json = await search("sourdough", env, "--json");
    expect((JSON.parse(json.stdout) as { path: string }[]).map((h) => h.path)).toEqual(["Cooking/Bread.md"]);
    expect(warnings(json.stderr)).toEqual([UNAVAILABLE]);
  });

  it("with the embedder up, nothing about keywords", async () => {
    const r = await search("sourdough", bed.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Cooking/Bread.md");
    expect(r.stderr).toBe("");
  });
});
