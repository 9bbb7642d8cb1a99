/**
 * Retrieval quality on a real embedding model: MRR@10 of keyword-only, vector-only and hybrid ranking over
 * a hand-written set of paraphrased questions about the example vault (bench/quality/demo-vault-questions.json),
 * all in one run on the same index. The model is Universal Sentence Encoder Lite (tests/support/use-embedder.ts),
 * run offline in this process; the ~50-note vault embeds in well under a minute, so nothing is cached.
 */
import { cpSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { VaultIndex } from "../src/core/indexing/vault-index";
import { silentLogger } from "../src/core/ports/logger";
import type { FusionMethod, SearchOptions } from "../src/core/search/search-types";
import { DEFAULT_SETTINGS } from "../src/core/settings";
import { createNodeHost } from "../src/node/node-host";
import { UseEmbedder } from "../tests/support/use-embedder";
import { type Figures, type Measurement, now, round, target } from "./bench-kit";

interface Question {
  q: string;
  expect: string;
  lang: string;
}

/** Queries about nothing in the vault: their best score should stay well below a real match's. */
const IRRELEVANT = ["quarterly tax filing deadline for llamas", "submarine propeller cavitation", "how to knit a scarf", "volcanic eruption on Jupiter's moon Io"];

interface Method {
  name: string;
  options: SearchOptions;
}

const METHODS: Method[] = [
  { name: "keyword", options: { semanticWeight: 0 } },
  { name: "vector", options: { semanticWeight: 1 } },
  { name: "hybrid", options: {} },
  { name: "hybridRaw", options: { fusion: "raw" as FusionMethod, semanticWeight: 0.7 } },
  { name: "hybridMinmax", options: { fusion: "minmax" as FusionMethod, semanticWeight: 0.5 } },
  { name: "hybridRrf", options: { fusion: "rrf" as FusionMethod, semanticWeight: 0.5 } },
  { name: "hybridW05", options: { semanticWeight: 0.5 } },
  { name: "hybridW03", options: { semanticWeight: 0.3 } },
  // Notes scored by their best chunk alone (before note-level keyword evidence).
  { name: "keywordBestChunk", options: { semanticWeight: 0, noteKeywordShare: 0 } },
  { name: "hybridBestChunk", options: { noteKeywordShare: 0 } },
];

/** The values of the tuned parameter (NOTE_KEYWORD_SHARE) that cross-validation chooses from. */
const SHARES = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];

export const quality: Measurement = {
  name: "quality",
  describe: "retrieval quality with a real embedding model (USE Lite): MRR@10 keyword vs vector vs hybrid",
  async run(ctx) {
    const repo = resolve(__dirname, "..");
    const questions = (JSON.parse(readFileSync(join(repo, "bench", "quality", "demo-vault-questions.json"), "utf8")) as { questions: Question[] }).questions;
    const dir = join(ctx.workDir, "quality-vault");
    rmSync(dir, { recursive: true, force: true });
    cpSync(join(repo, "examples", "demo-vault"), dir, { recursive: true });
    rmSync(join(dir, ".krypton"), { recursive: true, force: true });

    const embedder = new UseEmbedder();
    const settings = { ...DEFAULT_SETTINGS };
    const index = new VaultIndex({ host: createNodeHost(dir, { logger: silentLogger }), settings: () => settings, embedder: () => embedder });
    const figures: Figures = {};
    try {
      const t0 = now();
      const status = await index.open();
      figures.notes = status.notes;
      figures.chunks = status.chunks;
      figures.embedded = status.embedded;
      figures.buildSeconds = round((now() - t0) / 1000);
      figures.indexKilobytes = round(folderBytes(join(dir, ".krypton", "index")) / 1024, 1);
      figures.questions = questions.length;

      const mrr: Record<string, number> = {};
      const ranksOf: Record<string, number[]> = {};
      for (const method of METHODS) {
        const ranks: number[] = [];
        for (const question of questions) {
          const hits = await index.searchNotes(question.q, { limit: 10, ...method.options });
          ranks.push(hits.findIndex((h) => h.path === question.expect) + 1);
        }
        ranksOf[method.name] = ranks;
        mrr[method.name] = meanReciprocalRank(ranks);
        figures[`mrr10_${method.name}`] = round(mrr[method.name], 3);
        figures[`top1_${method.name}`] = ranks.filter((r) => r === 1).length;
        ctx.log(`quality: ${method.name} MRR@10 ${mrr[method.name].toFixed(3)}`);
      }
      // The non-English questions (keyword side: stemming, accents, CJK bigrams; the model is English-only).
      const other = questions.map((q, i) => (q.lang === "en" ? -1 : i)).filter((i) => i >= 0);
      figures.questionsNotEnglish = other.length;
      figures.mrr10_keyword_notEnglish = round(meanReciprocalRank(other.map((i) => ranksOf.keyword[i])), 3);
      figures.mrr10_hybrid_notEnglish = round(meanReciprocalRank(other.map((i) => ranksOf.hybrid[i])), 3);
      // The ceiling for any fusion that picks one of the two rankings per question.
      const oracle = meanReciprocalRank(questions.map((_, i) => bestRank(ranksOf.keyword[i], ranksOf.vector[i])));
      figures.mrr10_bestOfKeywordAndVector = round(oracle, 3);
      // Questions hybrid ranks better / worse than keyword-only.
      figures.hybridBetterThanKeyword = questions.filter((_, i) => better(ranksOf.hybrid[i], ranksOf.keyword[i])).length;
      figures.hybridWorseThanKeyword = questions.filter((_, i) => better(ranksOf.keyword[i], ranksOf.hybrid[i])).length;

      // 2-fold cross-validation of the one tuned parameter: each half of the questions (odd / even
      // positions) picks the share that ranks best on it, and is scored with the other half's pick.
      const rankAll = async (options: SearchOptions) => {
        const ranks: number[] = [];
        for (const question of questions) ranks.push((await index.searchNotes(question.q, { limit: 10, ...options })).findIndex((h) => h.path === question.expect) + 1);
        return ranks;
      };
      const crossValidate = async (semanticWeight: number | undefined) => {
        const bySharing = new Map<number, number[]>();
        for (const share of SHARES) bySharing.set(share, await rankAll({ semanticWeight, noteKeywordShare: share }));
        const fold = (parity: number) => questions.map((_, i) => i).filter((i) => i % 2 === parity);
        const mrrOn = (share: number, idx: number[]) => meanReciprocalRank(idx.map((i) => (bySharing.get(share) as number[])[i]));
        const pick = (idx: number[]) => SHARES.reduce((best, share) => (mrrOn(share, idx) > mrrOn(best, idx) + 1e-12 ? share : best), SHARES[0]);
        const [even, odd] = [fold(0), fold(1)];
        const pickOdd = pick(odd);
        const pickEven = pick(even);
        const heldOut = (mrrOn(pickOdd, even) * even.length + mrrOn(pickEven, odd) * odd.length) / questions.length;
        return { heldOut, pickOdd, pickEven };
      };
      const cvHybrid = await crossValidate(undefined);
      const cvKeyword = await crossValidate(0);
      figures.cv_mrr10_hybrid = round(cvHybrid.heldOut, 3);
      figures.cv_mrr10_keyword = round(cvKeyword.heldOut, 3);
      figures.cv_shareChosen_hybrid = `${cvHybrid.pickOdd} (odd half) / ${cvHybrid.pickEven} (even half)`;
      figures.cv_shareChosen_keyword = `${cvKeyword.pickOdd} / ${cvKeyword.pickEven}`;
      ctx.log(`quality: cross-validated MRR@10 hybrid ${cvHybrid.heldOut.toFixed(3)}, keyword-only ${cvKeyword.heldOut.toFixed(3)}`);

      // Chat retrieval drops excerpts below the similarity threshold: how many right answers would it keep?
      let kept = 0;
      for (const question of questions) {
        const hit = (await index.searchNotes(question.q, { limit: 10 })).find((h) => h.path === question.expect);
        if (hit && hit.score >= settings.similarityThreshold) kept++;
      }
      figures.similarityThreshold = settings.similarityThreshold;
      figures.expectedNoteAboveThreshold = kept;
      let worstIrrelevant = 0;
      for (const q of IRRELEVANT) worstIrrelevant = Math.max(worstIrrelevant, (await index.searchNotes(q, { limit: 1 }))[0]?.score ?? 0);
      const relevantTop = await Promise.all(questions.map(async (q) => (await index.searchNotes(q.q, { limit: 1 }))[0]?.score ?? 0));
      figures.irrelevantTopScoreMax = round(worstIrrelevant, 3);
      figures.relevantTopScoreMedian = round([...relevantTop].sort((a, b) => a - b)[Math.floor(relevantTop.length / 2)], 3);

      const complete = status.embedded === status.chunks && status.chunks > 0;
      const kw = mrr.keyword;
      const vec = mrr.vector;
      const hy = mrr.hybrid;
      return {
        figures,
        targets: [
          target("quality-hybrid-vs-keyword", `MRR@10 on ${questions.length} paraphrased questions (USE Lite): hybrid ≥ 1.1 × keyword-only`, round(hy / kw, 3), "×",
            complete && hy >= 1.1 * kw, `hybrid ${hy.toFixed(3)}, keyword-only ${kw.toFixed(3)}, vector-only ${vec.toFixed(3)}; first version's raw mix ${mrr.hybridRaw.toFixed(3)}, RRF ${mrr.hybridRrf.toFixed(3)}`),
          target("quality-hybrid-vs-keyword-cv", "MRR@10, 2-fold cross-validated (tuned on one half of the questions, scored on the other): hybrid ≥ 1.1 × keyword-only",
            round(cvHybrid.heldOut / cvKeyword.heldOut, 3), "×", complete && cvHybrid.heldOut >= 1.1 * cvKeyword.heldOut,
            `hybrid ${cvHybrid.heldOut.toFixed(3)}, keyword-only ${cvKeyword.heldOut.toFixed(3)}; notes by best chunk only: hybrid ${mrr.hybridBestChunk.toFixed(3)}, keyword-only ${mrr.keywordBestChunk.toFixed(3)}`),
          target("quality-hybrid-vs-vector", "MRR@10 (same run): hybrid ≥ 1.5 × vector-only", round(hy / vec, 3), "×", complete && hy >= 1.5 * vec),
          target("quality-irrelevant-score", "best score of queries about nothing in the vault < 0.5 (a real match's median is in Details)", round(worstIrrelevant, 3), "",
            worstIrrelevant < 0.5, `median top score of the real questions ${figures.relevantTopScoreMedian}`),
        ],
        failures: complete ? [] : [{ what: "quality index", error: `only ${status.embedded}/${status.chunks} chunks embedded` }],
      };
    } finally {
      await index.close();
    }
  },
};

function meanReciprocalRank(ranks: number[]): number {
  return ranks.reduce((sum, r) => sum + (r > 0 ? 1 / r : 0), 0) / Math.max(1, ranks.length);
}

function bestRank(a: number, b: number): number {
  return better(a, b) ? a : b;
}

/** Rank a is better than rank b (0 = not in the top 10). */
function better(a: number, b: number): boolean {
  return a > 0 && (b === 0 || a < b);
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) total += statSync(join(dir, name)).size;
  return total;
}
