/**
 * A vault with nothing to embed (no notes, or only empty ones) and the embedding server up: the index lacks
 * no vector, so no command warns that no embedder is reachable or that it searches by keywords only.
 */
import { useCliTestBed } from "../support/cli-test-bed";
import { runCli } from "./cli-harness";

describe.each([
  ["no notes", { ".obsidian/app.json": "{}" }],
  ["only empty notes", { "Empty.md": "", "Blank.md": "\n\n" }],
])("a vault with %s, the embedding server up", (_name, notes) => {
  const bed = useCliTestBed({ notes });
  const krypton = (...args: string[]) => runCli([args[0], bed.vault.root, ...args.slice(1)], { env: bed.env });

  it("index, search (before and after indexing) and ask say nothing about keywords or a missing embedder", async () => {
    for (const args of [["search", "bread"], ["index"], ["search", "bread"], ["ask", "what is bread?", "--mode", "rag"]]) {
      const r = await krypton(...args);
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
      expect(r.stderr).not.toMatch(/keywords only|embedder/);
      expect(r.stdout).not.toMatch(/keyword-only/); // index's summary said "keyword-only (no embeddings)"
    }
  });
});
