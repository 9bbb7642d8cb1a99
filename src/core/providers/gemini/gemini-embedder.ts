import type { Embedder, EmbeddingVector } from "../../ports/embedder";
import { guardedCall } from "../guarded-stream";
import { ProviderError } from "../provider-error";
import type { GeminiOptions } from "./gemini-chat-model";
import { geminiClient, normalizeGeminiBaseUrl } from "./gemini-client";
import { geminiError } from "./gemini-errors";
import { countOf } from "../../util/text";

export const DEFAULT_GEMINI_EMBEDDING_MODEL = "gemini-embedding-001";
/**
 * gemini-embedding-001 returns 3,072 dimensions by default; 768 keeps the vector store 4× smaller with a
 * small loss (Google's own recommendation lists 768 among the supported sizes). Such truncated vectors are
 * not unit length; the vector store normalizes every vector it takes (and every query), so they are handed
 * on as decoded.
 */
export const GEMINI_EMBEDDING_DIM = 768;

/** Embeddings through batchEmbedContents (up to 100 texts per request). */
export class GeminiEmbedder implements Embedder {
  readonly id: string;
  readonly batchSize = 100;

  constructor(private readonly options: GeminiOptions & { model: string }) {
    this.id = `gemini:${options.model}`;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<EmbeddingVector[]> {
    if (texts.length === 0) return [];
    const { apiKey, model } = this.options;
    const baseUrl = normalizeGeminiBaseUrl(this.options.baseUrl);
    const reduce = /gemini-embedding/.test(model);
    const vectors = await guardedCall(this.options, {
      signal,
      call: async (guard) => {
        const res = await geminiClient(apiKey, baseUrl, guard.fetch).models.embedContent({
          model,
          contents: texts,
          config: { abortSignal: guard.signal, ...(reduce ? { outputDimensionality: GEMINI_EMBEDDING_DIM } : {}) },
        });
        return (res.embeddings ?? []).map((e) => e.values ?? []);
      },
      mapError: (err, guard) => geminiError(err, guard, baseUrl, apiKey, model),
    });
    if (vectors.length !== texts.length || vectors.some((v) => v.length === 0)) {
      throw new ProviderError("bad-response", `Gemini returned ${countOf(vectors.length, "embedding")} for ${countOf(texts.length, "text")}.`);
    }
    const dim = vectors[0].length;
    if (vectors.some((v) => v.length !== dim)) throw new ProviderError("bad-response", "Gemini returned embeddings of different lengths.");
    return vectors;
  }
}
