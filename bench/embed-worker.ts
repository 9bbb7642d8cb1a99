/**
 * The worker thread of OffThreadEmbedder (bench-vaults.ts), bundled on its own as dist/bench-embed-worker.cjs:
 * computes denseEmbedding for each request and sends a batch's vectors back in one transferred buffer, as
 * the real embedders return a batch (vectorsInOneBuffer): a buffer per vector made the receiving thread
 * advance the collector's marking at every one of them.
 */
import { parentPort } from "node:worker_threads";
import { denseEmbedding } from "./dense-embedding";
import { DIM } from "./bench-kit";
import { packedVectors } from "../src/core/ports/embedder";

const port = parentPort;
if (!port) throw new Error("bench-embed-worker runs in a worker thread only");
port.on("message", ({ id, texts }: { id: number; texts: string[] }) => {
  const data = packedVectors(texts.map(denseEmbedding), DIM);
  port.postMessage({ id, data }, [data.buffer]);
});
