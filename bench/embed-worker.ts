/**
 * The worker thread of OffThreadEmbedder (bench-vaults.ts), bundled on its own as dist/bench-embed-worker.cjs:
 * computes denseEmbedding for each request and hands the batch back through the shared ring (embed-ring.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { denseEmbedding } from "./dense-embedding";
import { type EmbedRing, writeToRing } from "./embed-ring";

const port = parentPort;
if (!port) throw new Error("bench-embed-worker runs in a worker thread only");
const ring = workerData as EmbedRing;
port.on("message", ({ id, texts }: { id: number; texts: string[] }) => {
  const slot = writeToRing(ring, texts.map(denseEmbedding));
  port.postMessage({ id, slot, count: texts.length });
});
