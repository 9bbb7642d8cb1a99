/**
 * A loopback server that speaks the Gemini API (generativelanguage.googleapis.com, v1beta), function
 * calls with thought signatures included (see README.md), closely enough
 * for the real `@google/genai/web` SDK (point `httpOptions.baseUrl` at `server.url`):
 *   POST /v1beta/models/{model}:streamGenerateContent?alt=sse  SSE `data: {candidates:[{content:{parts:[{text}],role:"model"},index:0}]}`
 *                                                               chunks, the last with finishReason "STOP" and usageMetadata
 *   POST /v1beta/models/{model}:generateContent                 one JSON (honours generationConfig.responseMimeType "application/json")
 *   Both honour generationConfig.maxOutputTokens (one chunk or part is one token, thinking included; cut:
 *   finishReason "MAX_TOKENS", thoughtsTokenCount and candidatesTokenCount adding up to it).
 *   POST /v1beta/models/{model}:embedContent                    {embedding:{values}}
 *   POST /v1beta/models/{model}:batchEmbedContents              {embeddings:[{values}]} (the SDK's embedContent uses this)
 *   GET  /v1beta/models, GET /v1beta/models/{model}
 * The API key comes from the `x-goog-api-key` header or `?key=`. Like Google: a missing key answers 403
 * PERMISSION_DENIED, a wrong one 400 INVALID_ARGUMENT with reason API_KEY_INVALID; errors are
 * `{error:{code,message,status,details?}}`. Unknown models answer 404 NOT_FOUND.
 *
 *   const gemini = await startGeminiServer({ apiKey: "test-key" });
 *   gemini.script({ route: "stream", reply: "Hi [1]" });
 *   gemini.script({ route: "stream", status: 429, times: 2 });
 *   gemini.script({ route: "batchEmbed", extra: { embed: (t) => [1, 0] } });
 * Routes: "stream", "generate", "embed", "batchEmbed", "models", "model". Scripting: see scripted-server.ts / README.md.
 */
import { hashEmbedding } from "../hash-embedder";
import {
  type Behaviour,
  type Exchange,
  type RecordedRequest,
  type ScriptedServer,
  replyText,
  splitTokens,
  startScriptedServer,
  streamChunks,
} from "./scripted-server";

export interface GeminiExtra {
  /** Vector for one input text (overrides hashEmbedding). */
  embed?: (text: string) => number[];
  /**
   * finishReason of the last chunk, said whatever was generated (e.g. "SAFETY"; "MAX_TOKENS" from a proxy's
   * own cap). Default: "MAX_TOKENS" when the answer did not fit maxOutputTokens, else "STOP".
   */
  finishReason?: string;
  /** With `status` (429): the RetryInfo.retryDelay Google adds to the error ("38s"). */
  retryDelay?: string;
  /** functionCall parts of the answer (after any text), one chunk each; `id` and `thoughtSignature` as Gemini sends them. */
  functionCalls?: { name: string; args: Record<string, unknown>; id?: string; thoughtSignature?: string }[];
  /** Thought-summary parts (`thought: true`) streamed before the answer, one token per word. */
  thoughts?: string;
  /**
   * Tokens the model thinks without sending them (Gemini sends thought parts only when asked), after any
   * `thoughts`: counted in thoughtsTokenCount and against maxOutputTokens.
   */
  thoughtTokens?: number;
  /**
   * A model stuck in a loop: streams this text as one token per chunk, again and again, until
   * maxOutputTokens (without it, the model's outputTokenLimit), then ends with MAX_TOKENS.
   */
  loop?: string;
  /** A thoughtSignature on the last chunk's empty text part (how Gemini ends some streamed turns). */
  lastChunkSignature?: string;
  /** The prompt itself was blocked ("SAFETY", "PROHIBITED_CONTENT"): one chunk with `promptFeedback.blockReason` and no candidates, as Gemini answers. */
  blockReason?: string;
  /** usageMetadata of the last chunk, overriding what was generated (defaults: 12 prompt tokens; one per chunk, thoughts apart). */
  usage?: { prompt?: number; candidates?: number; thoughts?: number };
}

export type GeminiBehaviour = Behaviour<GeminiExtra>;

export interface GeminiServerOptions {
  /** The only key accepted (default "test-gemini-key"). */
  apiKey?: string;
  models?: string[];
  /** Dimension of default embeddings when the request sets no outputDimensionality. */
  embeddingDim?: number;
  defaultReply?: string | ((req: RecordedRequest) => string);
  /** Reject, like Gemini 3, a request whose echoed model turn has a functionCall without its thoughtSignature. */
  requireThoughtSignatures?: boolean;
  /** `inputTokenLimit` the models endpoint reports, per model (default 1,048,576; embedding models 2048). */
  inputTokenLimits?: Record<string, number>;
}

export interface GeminiTestServer extends ScriptedServer<GeminiExtra> {
  apiKey: string;
  /** See GeminiServerOptions.requireThoughtSignatures; assignable per test. */
  requireThoughtSignatures: boolean;
  models: string[];
  embeddingDim: number;
  /** See GeminiServerOptions.inputTokenLimits; assignable per test. */
  inputTokenLimits: Record<string, number>;
}

export const DEFAULT_GEMINI_KEY = "test-gemini-key";
export const DEFAULT_GEMINI_MODELS = ["gemini-2.5-flash", "gemini-2.0-flash", "gemini-embedding-001", "text-embedding-004"];
export const DEFAULT_GEMINI_REPLY = "This is the test Gemini answer.";

const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};
const DEFAULT_MESSAGES: Record<number, string> = {
  401: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
  403: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
  429: "Resource has been exhausted (e.g. check quota).",
  500: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
  503: "The model is overloaded. Please try again later.",
};

type Content = { role?: string; parts?: { text?: string; functionCall?: { name?: string }; thoughtSignature?: string }[] };

function textOf(content: Content | undefined): string {
  return (content?.parts ?? []).map((p) => p.text ?? "").join("");
}

export function googleError(status: number, message: string, details?: unknown[]) {
  return { error: { code: status, message, status: STATUS_NAMES[status] ?? "UNKNOWN", ...(details ? { details } : {}) } };
}

export async function startGeminiServer(options: GeminiServerOptions = {}): Promise<GeminiTestServer> {
  const state = {
    apiKey: options.apiKey ?? DEFAULT_GEMINI_KEY,
    models: [...(options.models ?? DEFAULT_GEMINI_MODELS)],
    embeddingDim: options.embeddingDim ?? 768,
    requireThoughtSignatures: options.requireThoughtSignatures ?? false,
    inputTokenLimits: { ...options.inputTokenLimits },
  };
  const modelPath = /^\/v1(?:beta|alpha)?\/models\/([^/:]+)(?::([A-Za-z]+))?$/;
  const known = (model: string) => state.models.includes(model.replace(/^models\//, ""));

  const server = await startScriptedServer<GeminiExtra>({
    route(method, path) {
      if (method === "GET" && /^\/v1(?:beta|alpha)?\/models$/.test(path)) return "models";
      const m = modelPath.exec(path);
      if (!m) return null;
      const action = m[2];
      if (method === "GET" && !action) return "model";
      if (method !== "POST") return null;
      if (action === "streamGenerateContent") return "stream";
      if (action === "generateContent") return "generate";
      if (action === "embedContent") return "embed";
      if (action === "batchEmbedContents") return "batchEmbed";
      return null;
    },
    describe(req) {
      const m = modelPath.exec(req.path);
      req.model = m ? decodeURIComponent(m[1]!) : "";
      const body = (req.body ?? {}) as { contents?: Content[] };
      if (Array.isArray(body.contents)) {
        const users = body.contents.filter((c) => (c.role ?? "user") === "user");
        req.userText = textOf(users[users.length - 1]);
      }
    },
    guard(ex) {
      const key = ex.req.headers["x-goog-api-key"] || ex.req.query.key || "";
      if (!key) {
        ex.json(403, googleError(403, DEFAULT_MESSAGES[403]!, [
          { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_SERVICE_BLOCKED", domain: "googleapis.com" },
        ]));
        return true;
      }
      if (key !== state.apiKey) {
        ex.json(400, googleError(400, "API key not valid. Please pass a valid API key.", [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "API_KEY_INVALID",
            domain: "googleapis.com",
            metadata: { service: "generativelanguage.googleapis.com" },
          },
          { "@type": "type.googleapis.com/google.rpc.LocalizedMessage", locale: "en-US", message: "API key not valid. Please pass a valid API key." },
        ]));
        return true;
      }
      return false;
    },
    error(ex, status, message) {
      const retryDelay = ex.behaviour.extra?.retryDelay;
      const details = retryDelay ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay }] : undefined;
      ex.json(status, googleError(status, message ?? DEFAULT_MESSAGES[status] ?? `Error ${status}`, details));
    },
    async answer(ex) {
      const { req } = ex;
      if (req.route === "models") {
        return ex.json(200, { models: state.models.map(describeModel) });
      }
      if (!known(req.model)) {
        const method = req.route === "stream" || req.route === "generate" ? "generateContent" : "embedContent";
        return ex.json(404, googleError(404, `models/${req.model} is not found for API version v1beta, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`));
      }
      if (req.route === "model") return ex.json(200, describeModel(req.model));
      if (req.route === "embed" || req.route === "batchEmbed") return embed(ex);
      const unsigned = state.requireThoughtSignatures ? unsignedCall(req.body as { contents?: Content[] }) : null;
      if (unsigned) {
        return ex.json(400, googleError(400, `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${unsigned.name}\` , position ${unsigned.position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`));
      }
      return generate(ex);
    },
  });

  function describeModel(name: string) {
    const embedding = /embedding/.test(name);
    return {
      name: `models/${name}`,
      version: "001",
      displayName: name,
      description: `Test stand-in for ${name}`,
      inputTokenLimit: state.inputTokenLimits[name] ?? (embedding ? 2048 : 1_048_576),
      outputTokenLimit: embedding ? 1 : 65_536,
      supportedGenerationMethods: embedding ? ["embedContent", "countTextTokens", "countTokens"] : ["generateContent", "countTokens"],
    };
  }

  function embed(ex: Exchange<GeminiExtra>) {
    if (ex.behaviour.malformed) return ex.json(200, '{"embeddings":[{"values":[0.1,');
    const vector = (text: string, dim: number | undefined) =>
      ex.behaviour.extra?.embed?.(text) ?? Array.from(hashEmbedding(text, dim ?? state.embeddingDim));
    if (ex.req.route === "embed") {
      const body = ex.req.body as { content?: Content; outputDimensionality?: number };
      return ex.json(200, { embedding: { values: vector(textOf(body.content), body.outputDimensionality) } });
    }
    const body = ex.req.body as { requests?: { content?: Content; outputDimensionality?: number }[] };
    if (!Array.isArray(body.requests)) return ex.json(400, googleError(400, "Invalid JSON payload received. Unknown name \"requests\"."));
    return ex.json(200, { embeddings: body.requests.map((r) => ({ values: vector(textOf(r.content), r.outputDimensionality) })) });
  }

  /**
   * Google's 400 for a thinkingConfig the model does not take: a level and a budget together, a level for a
   * model before Gemini 3, budget 0 for 2.5 Pro (it cannot stop thinking); null when the model takes it.
   */
  function refusedThinking(model: string, config: { thinkingBudget?: number; thinkingLevel?: string } | undefined): string | null {
    if (!config) return null;
    if (config.thinkingLevel !== undefined && config.thinkingBudget !== undefined) return "You can only set one of thinking budget and thinking level.";
    if (config.thinkingLevel !== undefined && !/^gemini-3/.test(model)) return "Thinking level is not supported for this model.";
    if (config.thinkingBudget === 0 && /^gemini-2\.5-pro/.test(model)) return "Budget 0 is invalid. This model only works in thinking mode.";
    return null;
  }

  /** The first model turn whose first functionCall part has no thoughtSignature (Gemini 3's rule), 1-based. */
  function unsignedCall(body: { contents?: Content[] }): { name: string; position: number } | null {
    const contents = Array.isArray(body.contents) ? body.contents : [];
    for (let i = 0; i < contents.length; i++) {
      const c = contents[i];
      if (c.role !== "model") continue;
      const first = (c.parts ?? []).find((p) => p.functionCall);
      if (first && !first.thoughtSignature) return { name: first.functionCall?.name ?? "", position: i + 1 };
    }
    return null;
  }

  async function generate(ex: Exchange<GeminiExtra>) {
    const { req, behaviour } = ex;
    const extra = behaviour.extra ?? {};
    const body = req.body as { generationConfig?: { responseMimeType?: string; maxOutputTokens?: number; thinkingConfig?: { thinkingBudget?: number; thinkingLevel?: string } } };
    const refused = refusedThinking(req.model, body.generationConfig?.thinkingConfig);
    if (refused) return ex.json(400, googleError(400, refused));
    // thinkingBudget 0 (2.5 Flash, Flash-Lite): the model answers without thinking.
    const thinks = body.generationConfig?.thinkingConfig?.thinkingBudget !== 0;
    const fallback = options.defaultReply ?? DEFAULT_GEMINI_REPLY;
    const scriptedCalls = extra.functionCalls ?? [];
    let text = replyText(behaviour, req, typeof fallback === "function" ? fallback(req) : fallback);
    if (scriptedCalls.length > 0 && behaviour.reply === undefined && behaviour.tokens === undefined) text = "";
    if (body.generationConfig?.responseMimeType === "application/json" && behaviour.reply === undefined && behaviour.tokens === undefined && scriptedCalls.length === 0) {
      text = JSON.stringify({ answer: text });
    }
    // Like Gemini 2.5+, maxOutputTokens (else the model's outputTokenLimit) bounds every token generated,
    // thinking included. One token here is one thought part, one text chunk or one functionCall part, plus
    // `thoughtTokens` of thinking never sent (Gemini sends thought parts only when asked).
    const cap = body.generationConfig?.maxOutputTokens ?? describeModel(req.model).outputTokenLimit;
    // A looping model runs one token past any cap.
    const written = extra.loop !== undefined ? Array<string>(cap + 1).fill(extra.loop) : (behaviour.tokens ?? splitTokens(text));
    const shownThoughts = extra.thoughts && thinks ? splitTokens(extra.thoughts) : [];
    const thinking = shownThoughts.length + (thinks ? (extra.thoughtTokens ?? 0) : 0);
    const cut = thinking + written.length + scriptedCalls.length > cap;
    const thoughts = shownThoughts.slice(0, cap);
    const thoughtCount = Math.min(thinking, cap);
    const tokens = cut ? written.slice(0, cap - thoughtCount) : written;
    // An answer cut at its cap never finishes its function calls.
    const calls = cut ? [] : scriptedCalls;
    type WirePart = { text?: string; thought?: boolean; thoughtSignature?: string; functionCall?: { id?: string; name: string; args: Record<string, unknown> } };
    const callParts: WirePart[] = calls.map((c) => ({
      functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: c.args },
      ...(c.thoughtSignature ? { thoughtSignature: c.thoughtSignature } : {}),
    }));
    const partChunks: WirePart[][] = [
      ...thoughts.map((t) => [{ text: t, thought: true }]),
      ...tokens.map((t) => [{ text: t }]),
      ...callParts.map((p) => [p]),
    ];
    const responseId = `test-${ex.req.firstByteAt.toFixed(0)}`;
    const prompt = extra.usage?.prompt ?? 12;
    const candidatesCount = extra.usage?.candidates ?? tokens.length + calls.length;
    const thoughtsCount = extra.usage?.thoughts ?? thoughtCount;
    // Zero counts are left out, as Google's JSON leaves out every zero field (a cut spent thinking has no candidatesTokenCount).
    const usage = {
      promptTokenCount: prompt,
      ...(candidatesCount || extra.usage?.candidates !== undefined ? { candidatesTokenCount: candidatesCount } : {}),
      ...(thoughtsCount || extra.usage?.thoughts !== undefined ? { thoughtsTokenCount: thoughtsCount } : {}),
      totalTokenCount: prompt + candidatesCount + thoughtsCount,
    };
    const finishReason = extra.finishReason ?? (cut ? "MAX_TOKENS" : "STOP");
    // A candidate with no parts is `content: {role: "model"}`, as Gemini sends an answer cut before it wrote any.
    const chunk = (parts: WirePart[], last: boolean) => ({
      candidates: [{ content: { ...(parts.length ? { parts } : {}), role: "model" }, ...(last ? { finishReason } : {}), index: 0 }],
      usageMetadata: last ? usage : { promptTokenCount: prompt, totalTokenCount: prompt },
      modelVersion: req.model,
      responseId,
    });

    if (extra.blockReason) {
      const blocked = { promptFeedback: { blockReason: extra.blockReason }, usageMetadata: { promptTokenCount: prompt, totalTokenCount: prompt }, modelVersion: req.model, responseId };
      if (req.route === "generate") return ex.json(200, blocked);
      ex.res.writeHead(200, { "Content-Type": "text/event-stream", ...behaviour.headers });
      ex.res.end(`data: ${JSON.stringify(blocked)}\r\n\r\n`);
      return;
    }

    if (req.route === "generate") {
      if (behaviour.malformed) return ex.json(200, '{"candidates":[{"content":{"parts":[{"text":"He');
      if (behaviour.stallAfterTokens !== undefined) return ex.hold();
      if (behaviour.cutAfterTokens !== undefined) {
        ex.res.writeHead(200, { "Content-Type": "application/json; charset=UTF-8", "Content-Length": "4096" });
        ex.res.write('{"candidates":[{"content":{"parts":[{"text":"');
        return ex.cut();
      }
      const thoughtParts = thoughts.length ? [{ text: thoughts.join(""), thought: true }] : [];
      const textPart = { text: tokens.join(""), ...(extra.lastChunkSignature ? { thoughtSignature: extra.lastChunkSignature } : {}) };
      const answerParts = textPart.text || (!callParts.length && !cut) ? [textPart] : [];
      return ex.json(200, chunk([...thoughtParts, ...answerParts, ...callParts], true));
    }

    ex.res.writeHead(200, { "Content-Type": "text/event-stream", ...behaviour.headers });
    const events = partChunks.map((parts) => `data: ${JSON.stringify(chunk(parts, false))}\r\n\r\n`);
    const finished = await streamChunks(ex, events, { malformedLine: 'data: {"candidates":[{"content":{"parts":[{"te\r\n\r\n' });
    if (!finished || ex.gone()) return;
    // The last chunk has an empty text part (carrying a thoughtSignature when there is one); a cut's has no
    // part, like Gemini's answer cut before it wrote any (`content: {role: "model"}`).
    const lastParts: WirePart[] = extra.lastChunkSignature ? [{ text: "", thoughtSignature: extra.lastChunkSignature }] : cut ? [] : [{ text: "" }];
    ex.res.end(`data: ${JSON.stringify(chunk(lastParts, true))}\r\n\r\n`);
  }

  Object.defineProperties(server, {
    apiKey: { get: () => state.apiKey, set: (v: string) => (state.apiKey = v), enumerable: true },
    models: { get: () => state.models, set: (v: string[]) => (state.models = v), enumerable: true },
    embeddingDim: { get: () => state.embeddingDim, set: (v: number) => (state.embeddingDim = v), enumerable: true },
    requireThoughtSignatures: { get: () => state.requireThoughtSignatures, set: (v: boolean) => (state.requireThoughtSignatures = v), enumerable: true },
    inputTokenLimits: { get: () => state.inputTokenLimits, set: (v: Record<string, number>) => (state.inputTokenLimits = v), enumerable: true },
  });
  return server as GeminiTestServer;
}
