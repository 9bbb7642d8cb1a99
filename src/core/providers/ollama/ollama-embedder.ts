import { Ollama } from "ollama/browser";
import type { Clock } from "../../ports/clock";
import type { Embedder, EmbeddingVector } from "../../ports/embedder";
import type { Host } from "../../ports/host";
import type { FetchLike } from "../../ports/http";
import type { KryptonSettings } from "../../settings";
import { ProviderError } from "../provider-error";
import { createRequestGuard } from "../request-guard";
import { normalizeBaseUrl } from "./ollama-chat-model";
import { ollamaError, ollamaFetch, pullCommand } from "./ollama-errors";
import { countOf } from "../../util/text";

export interface OllamaEmbedderOptions {
  /** "http://localhost:11434" */
  baseUrl: string;
  /** "nomic-embed-text" */
  model: string;
  fetch: FetchLike;
  clock: Clock;
  /** Per embed() call. */
  timeoutMs: number;
  /** Texts per request. Default 32. */
  batchSize?: number;
}

export const DEFAULT_OLLAMA_EMBED_BATCH = 32;
/** Ollama's "input length exceeds the context length": the text is cut to this share and retried once. */
const TRUNCATE_SHARE = 0.5;
const CONTEXT_LENGTH = /context length|input length|too long/i;

/**
 * Embeddings through Ollama's /api/embed (`ollama/browser` over the host's fetch). No retries here: the
 * index's embedding queue retries with backoff, so a failure is reported at once as a ProviderError.
 */
export function createOllamaEmbedder(options: OllamaEmbedderOptions): Embedder;
export function createOllamaEmbedder(settings: KryptonSettings, host: Host): Embedder;
export function createOllamaEmbedder(first: OllamaEmbedderOptions | KryptonSettings, host?: Host): Embedder {
  if (host) {
    const settings = first as KryptonSettings;
    return new OllamaEmbedder({
      baseUrl: settings.ollamaUrl,
      model: settings.embeddingModel.trim(),
      fetch: host.fetch,
      clock: host.clock,
      timeoutMs: settings.requestTimeoutMs,
    });
  }
  return new OllamaEmbedder(first as OllamaEmbedderOptions);
}

class OllamaEmbedder implements Embedder {
  readonly id: string;
  readonly batchSize: number;
  private readonly baseUrl: string;

  constructor(private readonly options: OllamaEmbedderOptions) {
    this.id = `ollama:${options.model}`;
    this.batchSize = Math.max(1, options.batchSize ?? DEFAULT_OLLAMA_EMBED_BATCH);
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<EmbeddingVector[]> {
    if (texts.length === 0) return [];
    try {
      return await this.request(texts, signal);
    } catch (err) {
      if (!(err instanceof ProviderError) || (err.kind !== "bad-response" && err.kind !== "server") || !CONTEXT_LENGTH.test(err.message)) throw err;
      // Some Ollama versions refuse over-long input instead of truncating: cut the long ones and retry once.
      const longest = Math.max(...texts.map((t) => t.length));
      const limit = Math.max(256, Math.floor(longest * TRUNCATE_SHARE));
      return this.request(texts.map((t) => (t.length > limit ? t.slice(0, limit) : t)), signal);
    }
  }

  private async request(texts: string[], signal?: AbortSignal): Promise<EmbeddingVector[]> {
    const { model, clock, fetch, timeoutMs } = this.options;
    const guard = createRequestGuard({ clock, fetch, timeoutMs, signal });
    try {
      const client = new Ollama({ host: this.baseUrl, fetch: ollamaFetch(guard.fetch, this.baseUrl) });
      const response = await client.embed({ model, input: texts, truncate: true });
      const embeddings = (response as { embeddings?: unknown }).embeddings;
      if (!Array.isArray(embeddings) || embeddings.length !== texts.length) {
        throw new ProviderError(
          "bad-response",
          `Ollama returned ${Array.isArray(embeddings) ? countOf(embeddings.length, "embedding") : "no embeddings"} for ${countOf(texts.length, "text")}.`,
        );
      }
      let dim = -1;
      for (const row of embeddings as unknown[]) {
        if (!Array.isArray(row) || row.length === 0 || (dim >= 0 && row.length !== dim) || !row.every((x) => typeof x === "number" && Number.isFinite(x))) {
          throw new ProviderError("bad-response", "Ollama returned a malformed embedding.");
        }
        dim = row.length;
      }
      return embeddings as number[][];
    } catch (err) {
      if ((err as { name?: string })?.name === "SyntaxError" && !guard.stopped() && !guard.timedOut()) {
        throw new ProviderError("bad-response", `Ollama sent an unreadable answer (${(err as Error).message}).`);
      }
      const mapped = ollamaError(err, guard, this.baseUrl, model);
      if (mapped.kind === "model-missing") {
        throw new ProviderError("model-missing", `Embedding model '${model}' is not installed: run \`${pullCommand(model)}\``, 404);
      }
      throw mapped;
    } finally {
      guard.dispose();
    }
  }
}
