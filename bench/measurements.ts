/**
 * The measurements. Each runs alone in a fresh process (`--only <name>`), prepares what it needs (vaults,
 * indexes) and reports figures, targets (measured value, pass/fail) and failures (e.g. naive Orama's).
 */
import { agentLoop } from "./agent-bench";
import { historySearch } from "./history-search-bench";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { silentLogger } from "../src/core/ports/logger";
import { createKrypton } from "../src/core/krypton";
import { createNodeHost } from "../src/node/node-host";
import { startOllamaServer } from "../tests/support/servers/ollama-server";
import { mcpStdio } from "./mcp-client-bench";
import { bruteForceTopK } from "./baseline-brute-force";
import { buildNaiveOrama, naiveOramaHybrid, persistNaiveOrama, restoreNaiveOrama } from "./baseline-orama";
import {
  type BenchContext,
  collectGarbage,
  DIM,
  errorText,
  type FailureRecord,
  type Figures,
  type Measurement,
  now,
  round,
  rssMb,
  SIZES,
  STALL_LIMIT_MS,
  stats,
  target,
  timedRuns,
  type TargetResult,
} from "./bench-kit";
import { denseEmbedding } from "./dense-embedding";
import {
  benchSettings,
  OffThreadEmbedder,
  ensureVault,
  markIndexReady,
  openIndex,
  openUnderProbe,
  prepareIndex,
  removeIndex,
  vaultInMemory,
  zeroLatencyEmbedder,
} from "./bench-vaults";
import { buildOramaText, oramaTextSearch } from "./baseline-orama-text";
import { buildCorpus, corpusChunks } from "./corpus";
import { TextIndex } from "../src/core/indexing/text-index";
import { workflowMeasurement } from "./workflow-bench";
import { hostile } from "./measure-hostile";
import { coldStart } from "./measure-cold-start";
import { quality } from "./retrieval-quality";
import { flashcardsMeasurement } from "./flashcards-bench";

const WARMUP = 10;
const QUERIES = 100;

/** Full build from nothing with the zero-latency embedder: throughput, stalls, peak memory. */
const build: Measurement = {
  name: "build",
  describe: "full index build (zero-latency embedder): chunks/s, longest stall, peak RSS",
  async run(ctx) {
    const v = ensureVault(ctx, { chunks: SIZES[ctx.scale].queryChunks });
    removeIndex(v);
    collectGarbage();
    // Its arithmetic off this thread, like a real embedder's (OffThreadEmbedder): the stalls are Krypton's.
    const embedder = new OffThreadEmbedder(ctx.script);
    const index = openIndex(v.dir, embedder);
    const { status, ms, lag } = await openUnderProbe(index, { idle: true });
    const seconds = ms / 1000;
    const final = index.status();
    await index.close();
    await embedder.close();
    markIndexReady(v, final.chunks);
    const throughput = final.chunks / seconds;
    const figures: Figures = {
      notes: final.notes,
      chunks: final.chunks,
      embedded: final.embedded,
      seconds: round(seconds),
      chunksPerSecond: round(throughput, 0),
      embedCalls: embedder.calls,
      maxStallMs: lag.maxStallMs,
      p99GapMs: lag.p99GapMs,
      peakRssMb: lag.peakRssMb,
      stateAfterOpen: status.state,
    };
    const complete = final.embedded === final.chunks && final.chunks >= v.chunks * 0.99;
    return {
      figures,
      targets: [
        target("build-throughput", `full build of ${final.chunks.toLocaleString("en")} chunks ≥ 2,000 chunks/s`, throughput, "chunks/s", complete && throughput >= 2000,
          complete ? undefined : `index incomplete: ${final.embedded}/${final.chunks} embedded, ${v.chunks} expected`),
        target("build-stall", "longest main-thread stall while building < 100 ms", lag.maxStallMs, "ms", lag.maxStallMs < STALL_LIMIT_MS),
        target("build-peak-rss", `peak RSS while building ${final.chunks.toLocaleString("en")} chunks < 1 GB`, lag.peakRssMb, "MB", lag.peakRssMb < 1024),
      ],
      failures: [],
    };
  },
};

/** Hybrid top-10 query latency at the big size: Krypton vs brute force vs naive Orama, same corpus and queries. */
const query: Measurement = {
  name: "query",
  describe: "hybrid top-10 query p50: Krypton vs brute-force Float32Array scan vs naive Orama",
  async run(ctx) {
    const v = ensureVault(ctx, { chunks: SIZES[ctx.scale].queryChunks });
    prepareIndex(ctx, v);
    const queries = v.queries.slice(0, WARMUP + QUERIES);
    const queryVectors = queries.map((q) => denseEmbedding(q));
    const failures: FailureRecord[] = [];

    // (b) Brute force over one Float32Array.
    ctx.log("query: brute force");
    let corpus: ReturnType<typeof buildCorpus> | null = buildCorpus(vaultInMemory(v));
    const chunkCount = corpus.chunks.length;
    const brute = stats(await timedRuns(queryVectors.length, WARMUP, (i) => bruteForceTopK(corpus!.vectors, DIM, queryVectors[i], 10)));

    // Krypton: the real index, loaded from disk, searched through the one search API.
    ctx.log("query: Krypton");
    const index = openIndex(v.dir, zeroLatencyEmbedder());
    await index.open();
    let emptyResults = 0;
    const kryptonTimes = await timedRuns(queries.length, WARMUP, async (i) => {
      const hits = await index.searchChunks(queries[i], { limit: 10 });
      if (hits.length === 0) emptyResults++;
    });
    const indexed = index.status();
    await index.close();
    const krypton = stats(kryptonTimes);

    // (a) Naive Orama: vectors inside Orama, Orama's hybrid search.
    ctx.log("query: naive Orama (insert takes a while)");
    let orama: ReturnType<typeof stats> | null = null;
    let oramaInsertS: number | null = null;
    try {
      const t0 = now();
      const db = await buildNaiveOrama(corpus);
      oramaInsertS = round((now() - t0) / 1000);
      corpus = null;
      collectGarbage();
      orama = stats(await timedRuns(queries.length, WARMUP, (i) => naiveOramaHybrid(db, queries[i], queryVectors[i])));
    } catch (err) {
      failures.push({ what: `naive Orama at ${chunkCount} chunks`, error: errorText(err) });
    }

    const vsBrute = krypton.p50 / brute.p50;
    const speedup = orama ? orama.p50 / krypton.p50 : null;
    const n = indexed.chunks.toLocaleString("en");
    return {
      figures: {
        chunks: indexed.chunks,
        embedded: indexed.embedded,
        queries: QUERIES,
        kryptonP50Ms: krypton.p50,
        kryptonP95Ms: krypton.p95,
        bruteForceP50Ms: brute.p50,
        bruteForceP95Ms: brute.p95,
        naiveOramaP50Ms: orama?.p50 ?? null,
        naiveOramaP95Ms: orama?.p95 ?? null,
        naiveOramaInsertSeconds: oramaInsertS,
        kryptonEmptyResults: emptyResults,
      },
      targets: [
        target("query-vs-brute-force", `hybrid top-10 p50 at ${n} chunks ≤ 1.3× brute-force scan`, vsBrute, "×", vsBrute <= 1.3,
          `Krypton ${krypton.p50} ms vs brute force ${brute.p50} ms`),
        target("query-vs-orama", `hybrid top-10 p50 at ${n} chunks ≥ 3× faster than naive Orama`, speedup, "×", speedup === null ? null : speedup >= 3,
          orama ? `naive Orama ${orama.p50} ms vs Krypton ${krypton.p50} ms` : "naive Orama failed"),
      ],
      failures,
    };
  },
};

/** Reload of a persisted index: Krypton's binary shards vs naive Orama's JSON persistence. */
const reload: Measurement = {
  name: "reload",
  describe: "reload of the persisted index at 30k chunks (and at a size naive Orama can still persist)",
  async run(ctx) {
    const sizes = SIZES[ctx.scale];
    const failures: FailureRecord[] = [];
    const figures: Figures = {};
    const targets: TargetResult[] = [];

    const kryptonReload = async (chunks: number) => {
      const v = ensureVault(ctx, { chunks });
      prepareIndex(ctx, v);
      collectGarbage();
      const embedder = zeroLatencyEmbedder();
      const index = openIndex(v.dir, embedder);
      const { status, ms, lag } = await openUnderProbe(index);
      await index.close();
      return { v, ms, lag, status, embedCalls: embedder.calls };
    };

    const oramaReload = async (chunks: number) => {
      const v = ensureVault(ctx, { chunks });
      const corpus = buildCorpus(vaultInMemory(v));
      const db = await buildNaiveOrama(corpus);
      const file = join(ctx.workDir, `orama-${chunks}.json`);
      const t0 = now();
      const data = await persistNaiveOrama(db);
      writeFileSync(file, data);
      const saveMs = now() - t0;
      collectGarbage();
      const t1 = now();
      const restored = await restoreNaiveOrama(readFileSync(file, "utf8"));
      const loadMs = now() - t1;
      const hits = await naiveOramaHybrid(restored, v.queries[0], denseEmbedding(v.queries[0]));
      return { saveMs, loadMs, bytes: data.length, hits };
    };

    // The size from the target.
    const big = await kryptonReload(sizes.reloadChunks);
    figures.kryptonReloadMs = round(big.ms);
    figures.kryptonReloadChunks = big.status.chunks;
    figures.kryptonReloadEmbedCalls = big.embedCalls;
    figures.kryptonReloadMaxStallMs = big.lag.maxStallMs;
    ctx.log(`reload: naive Orama at ${sizes.reloadChunks} chunks`);
    let oramaBig: Awaited<ReturnType<typeof oramaReload>> | null = null;
    try {
      oramaBig = await oramaReload(sizes.reloadChunks);
      figures.naiveOramaReloadMs = round(oramaBig.loadMs);
      figures.naiveOramaSaveMs = round(oramaBig.saveMs);
    } catch (err) {
      failures.push({ what: `naive Orama persist/restore (json) at ${sizes.reloadChunks} chunks`, error: errorText(err) });
      figures.naiveOramaReloadMs = null;
    }
    collectGarbage();

    // A size naive Orama can still persist, for a like-for-like ratio.
    const small = await kryptonReload(sizes.oramaPersistChunks);
    figures.kryptonReloadSmallMs = round(small.ms);
    figures.kryptonReloadSmallChunks = small.status.chunks;
    let oramaSmall: Awaited<ReturnType<typeof oramaReload>> | null = null;
    try {
      oramaSmall = await oramaReload(sizes.oramaPersistChunks);
      figures.naiveOramaReloadSmallMs = round(oramaSmall.loadMs);
      figures.naiveOramaSaveSmallMs = round(oramaSmall.saveMs);
      figures.naiveOramaFileSmallMb = round(oramaSmall.bytes / 1_048_576, 1);
    } catch (err) {
      failures.push({ what: `naive Orama persist/restore (json) at ${sizes.oramaPersistChunks} chunks`, error: errorText(err) });
    }

    const okBig = big.status.chunks > 0 && big.embedCalls === 0;
    const n = big.status.chunks.toLocaleString("en");
    if (oramaBig) {
      const ratio = oramaBig.loadMs / big.ms;
      targets.push(target("reload-vs-orama", `reload at ${n} chunks ≥ 5× faster than naive Orama`, ratio, "×", okBig && ratio >= 5,
        `Krypton ${round(big.ms)} ms vs naive Orama ${round(oramaBig.loadMs)} ms`));
    } else {
      targets.push(target("reload-vs-orama", `reload at ${n} chunks ≥ 5× faster than naive Orama`, null, "×", okBig,
        `naive Orama cannot persist ${sizes.reloadChunks.toLocaleString("en")} chunks (${failures[0]?.error ?? "failed"}); Krypton reloads them in ${round(big.ms)} ms`));
    }
    if (oramaSmall) {
      const ratio = oramaSmall.loadMs / small.ms;
      targets.push(target("reload-vs-orama-small", `reload at ${small.status.chunks.toLocaleString("en")} chunks (where naive Orama still works) ≥ 5× faster`, ratio, "×", ratio >= 5,
        `Krypton ${round(small.ms)} ms vs naive Orama ${round(oramaSmall.loadMs)} ms`));
    }
    const stall = Math.max(big.lag.maxStallMs, small.lag.maxStallMs);
    targets.push(target("reload-stall", "longest main-thread stall while loading < 100 ms", stall, "ms", stall < STALL_LIMIT_MS));
    return { figures, targets, failures };
  },
};

/**
 * Why Krypton has its own BM25 index instead of Orama as the full-text engine: both engines index the same
 * chunks (text fields only, same field boosts) in this process, one after the other. Informational rows.
 */
const fulltext: Measurement = {
  name: "fulltext",
  describe: "full-text engine only: Krypton's BM25 index vs Orama (text fields, same chunks and boosts): insert, query p50, memory",
  async run(ctx) {
    const v = ensureVault(ctx, { chunks: SIZES[ctx.scale].reloadChunks });
    const chunks = corpusChunks(vaultInMemory(v));
    // Realistic queries: topic keywords as typed in the search box, and the same as chat questions (common words).
    const keywordQueries = v.queries.slice(0, 3 + 20);
    const questions = v.queries.slice(20, 20 + 3 + 10).map((q) => `what did I write about ${q}`);
    const failures: FailureRecord[] = [];
    const timeQueries = async (queries: string[], run: (q: string) => unknown) => stats(await timedRuns(queries.length, 3, (i) => run(queries[i])));
    // JS heap plus typed-array memory (Krypton's posting lists live in ArrayBuffers, outside heapUsed).
    const heapMb = () => {
      const m = process.memoryUsage();
      return round((m.heapUsed + m.external) / 1_048_576, 1);
    };

    collectGarbage();
    const rss0 = rssMb();
    const heap0 = heapMb();
    ctx.log(`fulltext: Krypton's text index, ${chunks.length} chunks`);
    let t0 = now();
    let text: TextIndex<string> | null = new TextIndex<string>();
    for (const chunk of chunks) text.add(chunk, chunk.id);
    const kInsertMs = now() - t0;
    collectGarbage();
    const kRss = round(rssMb() - rss0, 1);
    const kHeap = round(heapMb() - heap0, 1);
    const kKeywords = await timeQueries(keywordQueries, (q) => text!.searchNow(q, 10));
    const kQuestions = await timeQueries(questions, (q) => text!.searchNow(q, 10));
    text = null;
    collectGarbage();

    ctx.log("fulltext: Orama (text fields only); inserting takes a while");
    const rss1 = rssMb();
    const heap1 = heapMb();
    let orama: { insertMs: number; rss: number; heap: number; keywords: ReturnType<typeof stats>; questions: ReturnType<typeof stats> } | null = null;
    try {
      t0 = now();
      const db = await buildOramaText(chunks);
      const insertMs = now() - t0;
      collectGarbage();
      const rss = round(rssMb() - rss1, 1);
      const heap = round(heapMb() - heap1, 1);
      const keywords = await timeQueries(keywordQueries, (q) => oramaTextSearch(db, q));
      const qs = await timeQueries(questions, (q) => oramaTextSearch(db, q));
      orama = { insertMs, rss, heap, keywords, questions: qs };
    } catch (err) {
      failures.push({ what: `Orama (text only) at ${chunks.length} chunks`, error: errorText(err) });
    }

    const n = chunks.length.toLocaleString("en");
    const info = (id: string, what: string, k: number, o: number | undefined, unit: string) =>
      target(id, `${what} at ${n} chunks: Orama ÷ Krypton (informational)`, o === undefined ? null : o / k, "×", null,
        o === undefined ? "Orama failed" : `Orama ${round(o)} ${unit} vs Krypton ${round(k)} ${unit}`);
    return {
      figures: {
        chunks: chunks.length,
        kryptonInsertMs: round(kInsertMs),
        kryptonMemoryMb: kHeap,
        kryptonRssMb: kRss,
        kryptonKeywordP50Ms: kKeywords.p50,
        kryptonQuestionP50Ms: kQuestions.p50,
        oramaTextInsertMs: orama ? round(orama.insertMs) : null,
        oramaTextMemoryMb: orama?.heap ?? null,
        oramaTextRssMb: orama?.rss ?? null,
        oramaTextKeywordP50Ms: orama?.keywords.p50 ?? null,
        oramaTextKeywordMaxMs: orama?.keywords.max ?? null,
        oramaTextQuestionP50Ms: orama?.questions.p50 ?? null,
        oramaTextQuestionMaxMs: orama?.questions.max ?? null,
        keywordQueries: keywordQueries.length - 3,
        questionQueries: questions.length - 3,
      },
      targets: [
        info("fulltext-insert", "full-text only, insert", kInsertMs, orama?.insertMs, "ms"),
        info("fulltext-query-keywords", "full-text only, query p50 (2–3 keywords)", kKeywords.p50, orama?.keywords.p50, "ms"),
        info("fulltext-query-questions", "full-text only, query p50 (questions)", kQuestions.p50, orama?.questions.p50, "ms"),
        info("fulltext-heap", "full-text only, memory (heap + typed arrays) after insert", Math.max(kHeap, 0.1), orama?.heap, "MB"),
      ],
      failures,
    };
  },
};

/** Memory of a process holding the big index (loaded from disk, after queries). */
const memory: Measurement = {
  name: "memory",
  describe: "process RSS with the 100k-chunk index loaded and queried",
  async run(ctx) {
    const v = ensureVault(ctx, { chunks: SIZES[ctx.scale].queryChunks });
    prepareIndex(ctx, v);
    collectGarbage();
    const before = rssMb();
    const index = openIndex(v.dir, zeroLatencyEmbedder());
    const { ms: openMs, lag } = await openUnderProbe(index);
    collectGarbage();
    const afterLoad = rssMb();
    for (const q of v.queries.slice(0, 30)) await index.searchNotes(q, { limit: 10 });
    collectGarbage();
    const afterQueries = rssMb();
    const heap = round(process.memoryUsage().heapUsed / 1_048_576, 1);
    const status = index.status();
    await index.close();
    const worst = Math.max(afterLoad, afterQueries, lag.peakRssMb);
    return {
      figures: { chunks: status.chunks, rssBeforeMb: before, rssAfterLoadMb: afterLoad, rssAfterQueriesMb: afterQueries, peakRssWhileLoadingMb: lag.peakRssMb, heapUsedMb: heap, openMs: round(openMs), maxStallMs: lag.maxStallMs },
      targets: [
        target("memory-rss", `process RSS at ${status.chunks.toLocaleString("en")} chunks < 1 GB (loaded, queried; peak while loading)`, worst, "MB", worst < 1024),
        target("load-stall", `longest main-thread stall while loading ${status.chunks.toLocaleString("en")} chunks < 100 ms`, lag.maxStallMs, "ms", lag.maxStallMs < STALL_LIMIT_MS),
      ],
      failures: [],
    };
  },
};

/** Restart on an unchanged vault: nothing to embed. */
const restart: Measurement = {
  name: "restart",
  describe: "restart on an unchanged 10k-note vault: embedding calls and time to ready",
  async run(ctx) {
    const v = ensureVault(ctx, { notes: SIZES[ctx.scale].restartNotes });
    prepareIndex(ctx, v);
    collectGarbage();
    const embedder = zeroLatencyEmbedder();
    const index = openIndex(v.dir, embedder);
    const { status, ms, lag } = await openUnderProbe(index, { idle: true });
    await index.sync();
    const callsAfterSecondSync = embedder.calls;
    await index.close();
    return {
      figures: { notes: status.notes, chunks: status.chunks, restartMs: round(ms), embedCalls: embedder.calls, embeddedTexts: embedder.embeddedTexts, callsAfterSecondSync, maxStallMs: lag.maxStallMs },
      targets: [
        target("restart-embed-calls", `restart on an unchanged ${status.notes.toLocaleString("en")}-note vault makes 0 embedding calls`, embedder.calls, "calls", embedder.calls === 0 && status.notes >= v.notes),
        target("restart-stall", "longest main-thread stall during restart < 100 ms", lag.maxStallMs, "ms", lag.maxStallMs < STALL_LIMIT_MS),
      ],
      failures: [],
    };
  },
};

/** Chat latency: ChatService.send → first byte at the loopback Ollama server, RAG mode. */
const chat: Measurement = {
  name: "chat",
  describe: "RAG chat: time from ChatService.send to the first byte the loopback Ollama server receives",
  async run(ctx) {
    const v = ensureVault(ctx, { notes: SIZES[ctx.scale].chatNotes });
    prepareIndex(ctx, v);
    const server = await startOllamaServer({ embeddingDim: DIM, defaultReply: "A short answer [1]." });
    const settings = benchSettings({ ollamaUrl: server.url, defaultMode: "rag" });
    const core = createKrypton(createNodeHost(v.dir, { logger: silentLogger }), settings);
    const failures: FailureRecord[] = [];
    const times: number[] = [];
    const anyRequestTimes: number[] = [];
    let errors = 0;
    try {
      const status = await core.index.open();
      if (status.embedded === 0) failures.push({ what: "chat index", error: "no vectors: the run is keyword-only" });
      const questions = v.queries.slice(0, WARMUP + 40).map((q) => `What do my notes say about ${q}?`);
      for (let i = 0; i < questions.length; i++) {
        const before = server.requestsTo("chat").length;
        const beforeAny = server.requests.length;
        const t0 = now();
        for await (const event of core.chat.send(questions[i], { mode: "rag" })) {
          if (event.type === "error") errors++;
        }
        const req = server.requestsTo("chat")[before];
        if (!req) {
          failures.push({ what: `chat question ${i}`, error: "the chat model was never called" });
          continue;
        }
        if (i >= WARMUP) {
          times.push(req.firstByteAt - t0);
          anyRequestTimes.push(server.requests[beforeAny].firstByteAt - t0);
        }
      }
    } catch (err) {
      failures.push({ what: "chat run", error: errorText(err) });
    } finally {
      await core.close();
      await server.close();
    }
    const s = times.length > 0 ? stats(times) : null;
    const first = anyRequestTimes.length > 0 ? stats(anyRequestTimes) : null;
    return {
      // p50Ms: until the chat (LLM) request arrives; firstRequestP50Ms: until any request (usually the query embedding).
      figures: { notes: v.notes, questions: times.length, p50Ms: s?.p50 ?? null, p95Ms: s?.p95 ?? null, maxMs: s?.max ?? null, firstRequestP50Ms: first?.p50 ?? null, errors },
      targets: [
        target("chat-first-byte", `RAG chat on a ${v.notes.toLocaleString("en")}-note vault: send → first byte at Ollama p50 < 100 ms`, s?.p50 ?? null, "ms", s ? s.p50 < 100 && errors === 0 : null,
          errors ? `${errors} error events` : undefined),
      ],
      failures,
    };
  },
};

/** The synthetic vault generator itself: size and determinism (cheap; a sanity check of the corpus). */
const generator: Measurement = {
  name: "generator",
  describe: "synthetic vault generator: notes, chunks, bytes, determinism",
  async run(ctx) {
    const { generateVault } = await import("./synthetic-vault");
    const t0 = now();
    const a = generateVault({ seed: ctx.seed, notes: 500 });
    const ms = now() - t0;
    const b = generateVault({ seed: ctx.seed, notes: 500 });
    const same = JSON.stringify(a.notes) === JSON.stringify(b.notes);
    const bytes = a.notes.reduce((n, note) => n + note.content.length, 0);
    return {
      figures: { notes: a.notes.length, chunks: a.chunkCount, chunksPerNote: round(a.chunkCount / a.notes.length), kilobytes: round(bytes / 1024, 0), ms: round(ms), deterministic: same },
      targets: [target("generator-deterministic", "same seed, same vault", same ? 1 : 0, "", same)],
      failures: [],
    };
  },
};

export const MEASUREMENTS: Measurement[] = [generator, quality, build, query, reload, fulltext, memory, restart, chat, hostile, coldStart, workflowMeasurement, mcpStdio, agentLoop, flashcardsMeasurement, historySearch];

export function findMeasurement(name: string): Measurement | undefined {
  return MEASUREMENTS.find((m) => m.name === name);
}

export type { BenchContext };
