/**
 * The worker thread of OffThreadEmbedder (bench-vaults.ts), bundled on its own as dist/bench-embed-worker.cjs:
 * computes denseEmbedding for each request; the vectors are transferred, not copied.
 */
import { parentPort } from "node:worker_threads";
import { denseEmbedding } from "./dense-embedding";

const port = parentPort;
if (!port) throw new Error("bench-embed-worker runs in a worker thread only");
port.on("message", ({ id, texts }: { id: number; texts: string[] }) => {
  const vectors = texts.map((t) => denseEmbedding(t));
  port.postMessage({ id, vectors }, vectors.map((v) => v.buffer as ArrayBuffer));
});
