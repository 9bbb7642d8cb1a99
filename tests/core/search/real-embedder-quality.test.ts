import { cp, mkdir } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { UseEmbedder } from "../../support/use-embedder";
import { makeHarness, type Harness } from "../indexing/index-harness";

/**
 * Retrieval quality with a real sentence-embedding model (USE Lite, offline) on a slice of the example
 * vault: the machine-learning notes and their paraphrased questions from the benchmark's question set.
 * Small on purpose (about 20 chunks, a few seconds); `npm run bench -- --only quality` runs the whole set.
 */
const REPO = join(__dirname, "..", "..", "..");
const FOLDER = "Machine Learning";

interface Question {
  q: string;
  expect: string;
}

jest.setTimeout(120_000);

describe("hybrid search with a real embedding model", () => {
  let h: Harness;
  const embedder = new UseEmbedder();
  const questions = (JSON.parse(readFileSync(join(REPO, "bench", "quality", "demo-vault-questions.json"), "utf8")) as { questions: Question[] }).questions.filter((q) =>
    q.expect.startsWith(`${FOLDER}/`),
  );

  beforeAll(async () => {
    h = await makeHarness({}, undefined);
    await mkdir(join(h.vault.root, FOLDER), { recursive: true });
    await cp(join(REPO, "examples", "demo-vault", FOLDER), join(h.vault.root, FOLDER), { recursive: true });
  });
  afterAll(async () => {
    await h.cleanup();
  });

  it("ranks the paraphrased questions' notes better than keywords alone or meaning alone", async () => {
    expect(questions.length).toBeGreaterThanOrEqual(15);
    const index = h.open({ embedder });
    const status = await index.open();
    expect(status.embedded).toBe(status.chunks);
    // Question by question, so the query's vector is embedded once for both methods that need it.
    const sums = { keyword: 0, vector: 0, hybrid: 0 };
    for (const q of questions) {
      for (const [method, semanticWeight] of [["keyword", 0], ["vector", 1], ["hybrid", undefined]] as const) {
        const rank = (await index.searchNotes(q.q, { limit: 10, semanticWeight })).findIndex((n) => n.path === q.expect) + 1;
        sums[method] += rank > 0 ? 1 / rank : 0;
      }
    }
    const [keyword, vector, hybrid] = [sums.keyword, sums.vector, sums.hybrid].map((s) => s / questions.length);
    // Measured: keyword 0.82, vector 0.67, hybrid 0.85. The model is deterministic, so this does not flake.
    expect(hybrid).toBeGreaterThan(keyword);
    expect(hybrid).toBeGreaterThan(vector);
  });
});
