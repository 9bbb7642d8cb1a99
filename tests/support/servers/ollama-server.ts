/**
 * A loopback server that speaks Ollama's HTTP API closely enough for the real `ollama/browser` client
 * (tool calls, thinking, usage, /api/show capabilities: see README.md):
 *   POST /api/chat   NDJSON stream ({model, created_at, message:{role,content}, done:false} … final done:true
 *                    with done_reason and durations) unless `stream: false` (one JSON); honours `format: "json"`
 *                    and `options.num_predict` (one chunk is one token, thinking included; cut: done_reason "length");
 *                    `think: false` drops message.thinking, any `think` for a model without "thinking" is a 400.
 *   POST /api/embed  {model, embeddings: number[][]} — hashEmbedding(text, embeddingDim) by default.
 *   GET  /api/tags   {models: [{name, model, modified_at, size, digest, details}]}
 *   GET  /api/version {version}
 * An unknown model answers 404 {"error":"model \"x\" not found, try pulling it first"} like real Ollama.
 *
 *   const ollama = await startOllamaServer({ models: ["llama3.1:8b", "nomic-embed-text"] });
 *   ollama.script({ route: "chat", reply: "Paris [1]", tokenDelayMs: 2 });
 *   ollama.script({ route: "chat", cutAfterTokens: 2 });
 *   ollama.script({ route: "embed", status: 500, times: 3 });
 *   ollama.script({ route: "embed", extra: { embed: (text) => [1, 0, 0] } });
 *   ... ollama.requestsTo("chat")[0].body.messages ...
 *   await ollama.close();
 * Routes: "chat", "embed", "tags", "version", "show". Scripting fields: see scripted-server.ts / README.md.
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

export interface OllamaExtra {
  /** Vector for one input text (overrides hashEmbedding). */
  embed?: (text: string) => number[];
  /** Tool calls the answer makes (after any text), each streamed in its own chunk like real Ollama. */
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  /** Split each tool call across two chunks (name and first argument, then the rest) under one `function.index`. */
  splitToolCalls?: boolean;
  /** Reasoning streamed as `message.thinking` chunks (word by word) before the answer. */
  thinking?: string;
  /**
   * A model stuck in a loop: streams this text as one token per chunk, again and again, until the request's
   * `options.num_predict` (without it, until its `num_ctx` is full, as Ollama does), then ends with
   * done_reason "length".
   */
  loop?: string;
  /** done_reason of the final chunk (default "stop"). */
  doneReason?: string;
  /** prompt_eval_count / eval_count of the final chunk (default 26 / number of chunks, thinking included). */
  usage?: { prompt?: number; completion?: number };
  /**
   * Vectors a broken embedding server sends: "out-of-range" (1e39, beyond float32), "nan" (a literal NaN
   * in the JSON, as some servers write it) or "zero" (all zeros).
   */
  badVectors?: "out-of-range" | "nan" | "zero";
}

export type OllamaBehaviour = Behaviour<OllamaExtra>;

export interface OllamaModelInfo {
  /** `/api/show` capabilities (default ["completion", "tools"]; embedding models ["embedding"]). */
  capabilities?: string[];
  /** `model_info["<arch>.context_length"]` (default 131072). */
  contextLength?: number;
  /** `model_info["general.architecture"]` (default "llama"). */
  architecture?: string;
}

export interface OllamaServerOptions {
  /** Installed model names; a name without a tag means ":latest". */
  models?: string[];
  /** Per model (name as requested or with its tag): what `/api/show` reports; a model without "tools" answers a request with tools 400 "does not support tools". */
  modelInfo?: Record<string, OllamaModelInfo>;
  /** Dimension of the default hash embeddings (768 like nomic-embed-text). */
  embeddingDim?: number;
  /** Answer when a chat behaviour scripts no reply. */
  defaultReply?: string | ((req: RecordedRequest) => string);
  version?: string;
}

export interface OllamaTestServer extends ScriptedServer<OllamaExtra> {
  /** Installed models; change it to simulate `ollama pull` / `ollama rm`. */
  models: string[];
  /** What `/api/show` says per model; assign entries to change a model's capabilities. */
  modelInfo: Record<string, OllamaModelInfo>;
  embeddingDim: number;
}

export const DEFAULT_OLLAMA_MODELS = ["llama3.1:8b", "nomic-embed-text:latest"];
export const DEFAULT_OLLAMA_REPLY = "This is the test model's answer.";

/** "llama3.1" and "llama3.1:latest" are the same model to Ollama. */
export function normalizeOllamaModel(name: string): string {
  return name.includes(":") ? name : `${name}:latest`;
}

function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: string; content?: string };
    if (m?.role === "user") return String(m.content ?? "");
  }
  return "";
}

function fakeDigest(name: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0").repeat(8);
}

export async function startOllamaServer(options: OllamaServerOptions = {}): Promise<OllamaTestServer> {
  const state = {
    models: [...(options.models ?? DEFAULT_OLLAMA_MODELS)],
    embeddingDim: options.embeddingDim ?? 768,
    modelInfo: { ...options.modelInfo } as Record<string, OllamaModelInfo>,
  };
  const infoOf = (model: string): Required<OllamaModelInfo> => {
    const info = state.modelInfo[model] ?? state.modelInfo[normalizeOllamaModel(model)] ?? {};
    return {
      capabilities: info.capabilities ?? (/embed/.test(model) ? ["embedding"] : ["completion", "tools"]),
      contextLength: info.contextLength ?? 131_072,
      architecture: info.architecture ?? "llama",
    };
  };
  const installed = (model: string) => state.models.some((m) => normalizeOllamaModel(m) === normalizeOllamaModel(model));
  const notFound = (ex: Exchange<OllamaExtra>, model: string) =>
    ex.json(404, { error: `model "${model}" not found, try pulling it first` });
  const createdAt = () => new Date().toISOString();

  const server = await startScriptedServer<OllamaExtra>({
    route(method, path) {
      if (method === "POST" && path === "/api/chat") return "chat";
      if (method === "POST" && path === "/api/embed") return "embed";
      if (method === "POST" && path === "/api/show") return "show";
      if (method === "GET" && path === "/api/tags") return "tags";
      if (method === "GET" && path === "/api/version") return "version";
      return null;
    },
    describe(req) {
      const body = (req.body ?? {}) as { model?: string; messages?: unknown };
      req.model = typeof body.model === "string" ? body.model : "";
      if (req.route === "chat") req.userText = lastUserText(body.messages);
    },
    guard(ex) {
      const { route, model } = ex.req;
      if ((route === "chat" || route === "embed" || route === "show") && typeof ex.req.body !== "object") {
        ex.json(400, { error: "invalid request body" });
        return true;
      }
      if ((route === "chat" || route === "embed" || route === "show") && !model) {
        ex.json(400, { error: "model is required" });
        return true;
      }
      // Missing models are checked after scripting so a test can still script a delay or a 500 for them.
      return false;
    },
    error(ex, status, message) {
      const defaults: Record<number, string> = {
        401: "unauthorized",
        404: `model "${ex.req.model}" not found, try pulling it first`,
        429: "too many requests",
        500: "llama runner process has terminated: exit status 2",
        503: "server busy, please try again.  maximum pending requests exceeded",
      };
      ex.json(status, { error: message ?? defaults[status] ?? `error ${status}` });
    },
    async answer(ex) {
      const { req, behaviour } = ex;
      switch (req.route) {
        case "version":
          return ex.json(200, { version: options.version ?? "0.9.0" });
        case "tags":
          return ex.json(200, {
            models: state.models.map((name) => ({
              name: normalizeOllamaModel(name),
              model: normalizeOllamaModel(name),
              modified_at: "2025-05-10T08:06:48.639712648-07:00",
              size: 4_683_075_271,
              digest: fakeDigest(name),
              details: {
                parent_model: "",
                format: "gguf",
                family: "llama",
                families: ["llama"],
                parameter_size: "8.0B",
                quantization_level: "Q4_K_M",
              },
            })),
          });
        case "show": {
          if (!installed(req.model)) return notFound(ex, req.model);
          const info = infoOf(req.model);
          return ex.json(200, {
            modelfile: "",
            parameters: "",
            template: info.capabilities.includes("tools") ? "{{- if .Tools }}tools{{ end }}{{ .Prompt }}" : "{{ .Prompt }}",
            details: { format: "gguf", family: info.architecture },
            model_info: { "general.architecture": info.architecture, [`${info.architecture}.context_length`]: info.contextLength },
            capabilities: info.capabilities,
          });
        }
        case "embed":
          return embed(ex);
        case "chat":
          return chat(ex);
      }
    },
  });

  async function embed(ex: Exchange<OllamaExtra>) {
    const body = ex.req.body as { model: string; input?: string | string[]; truncate?: boolean; dimensions?: number };
    if (!installed(body.model)) return notFound(ex, body.model);
    if (ex.behaviour.malformed) return ex.json(200, '{"model":"x","embeddings":[[0.1,0.2');
    const inputs = body.input === undefined ? [] : Array.isArray(body.input) ? body.input : [body.input];
    const dim = body.dimensions ?? state.embeddingDim;
    const vector = ex.behaviour.extra?.embed ?? ((text: string) => Array.from(hashEmbedding(text, dim)));
    const bad = ex.behaviour.extra?.badVectors;
    if (bad) {
      const value = bad === "out-of-range" ? "1e39" : bad === "nan" ? "NaN" : "0";
      const row = `[${Array.from({ length: dim }, (_, i) => (i === 0 || bad === "zero" ? value : "0.01")).join(",")}]`;
      return ex.json(200, `{"model":${JSON.stringify(body.model)},"embeddings":[${inputs.map(() => row).join(",")}]}`);
    }
    return ex.json(200, {
      model: body.model,
      embeddings: inputs.map((t) => vector(String(t))),
      total_duration: 14_143_917,
      load_duration: 1_019_500,
      prompt_eval_count: inputs.reduce((n, t) => n + String(t).split(/\s+/).length, 0),
    });
  }

  async function chat(ex: Exchange<OllamaExtra>) {
    const { req, behaviour } = ex;
    const body = req.body as { model: string; stream?: boolean; format?: unknown; tools?: unknown[]; think?: unknown; options?: { num_predict?: number; num_ctx?: number } };
    if (!installed(body.model)) return notFound(ex, body.model);
    // Ollama 0.9 to 0.12.4 refuse any `think` (false too) for a model without "thinking"; later ones only `think: true`.
    if (body.think !== undefined && body.think !== null && !infoOf(body.model).capabilities.includes("thinking")) {
      return ex.json(400, { error: `"${body.model}" does not support thinking` });
    }
    if (Array.isArray(body.tools) && body.tools.length > 0 && !infoOf(body.model).capabilities.includes("tools")) {
      // Real Ollama names the model by its full registry path.
      return ex.json(400, { error: `registry.ollama.ai/library/${normalizeOllamaModel(body.model)} does not support tools` });
    }
    const extra = behaviour.extra ?? {};
    const fallback = options.defaultReply ?? DEFAULT_OLLAMA_REPLY;
    let text = replyText(behaviour, req, typeof fallback === "function" ? fallback(req) : fallback);
    // format "json" (or a JSON schema) makes real Ollama answer with JSON only.
    const scriptedCalls = extra.toolCalls ?? [];
    if (scriptedCalls.length > 0 && behaviour.reply === undefined && behaviour.tokens === undefined) text = "";
    if (body.format !== undefined && body.format !== "" && behaviour.reply === undefined && behaviour.tokens === undefined && scriptedCalls.length === 0) {
      text = JSON.stringify({ answer: text });
    }
    // num_predict bounds every token the model generates, its thinking included (-1 or none: no bound).
    const numPredict = body.options?.num_predict !== undefined && body.options.num_predict >= 0 ? body.options.num_predict : undefined;
    const loopFor = extra.loop === undefined ? 0 : (numPredict ?? body.options?.num_ctx ?? 4096);
    const written = extra.loop !== undefined ? Array<string>(loopFor).fill(extra.loop) : (behaviour.tokens ?? splitTokens(text));
    // `think: false` turns a thinking model's `message.thinking` off (a <think> block scripted in `tokens` stays: its model thinks in its content).
    const thoughtOut = extra.thinking && body.think !== false ? splitTokens(extra.thinking) : [];
    const cut = numPredict !== undefined && thoughtOut.length + written.length > numPredict;
    const thoughts = cut ? thoughtOut.slice(0, numPredict) : thoughtOut;
    const tokens = cut ? written.slice(0, numPredict - thoughts.length) : written;
    // An answer cut at num_predict never finishes its tool calls.
    const calls = cut ? [] : (extra.toolCalls ?? []);
    const model = body.model;
    const final = (content: string) => ({
      model,
      created_at: createdAt(),
      message: { role: "assistant", content },
      done: true,
      done_reason: extra.doneReason ?? (cut || extra.loop !== undefined ? "length" : "stop"),
      total_duration: 4_883_583_458,
      load_duration: 1_334_875,
      prompt_eval_count: extra.usage?.prompt ?? 26,
      prompt_eval_duration: 342_546_000,
      eval_count: extra.usage?.completion ?? thoughts.length + tokens.length,
      eval_duration: 4_535_599_000,
    });

    if (body.stream === false) {
      if (behaviour.malformed) return ex.json(200, '{"model":"' + model + '","message":{"role":"assistant","content":"He');
      if (behaviour.stallAfterTokens !== undefined) return ex.hold();
      if (behaviour.cutAfterTokens !== undefined) {
        ex.res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": "4096" });
        ex.res.write('{"model":"' + model + '","message":{"role":"assistant","content":"');
        return ex.cut();
      }
      const whole = final(tokens.join(""));
      return ex.json(200, {
        ...whole,
        message: {
          ...whole.message,
          ...(thoughts.length ? { thinking: thoughts.join("") } : {}),
          ...(calls.length ? { tool_calls: calls.map((c) => ({ function: { name: c.name, arguments: c.arguments } })) } : {}),
        },
      });
    }

    ex.res.writeHead(200, { "Content-Type": "application/x-ndjson", ...behaviour.headers });
    const line = (message: Record<string, unknown>) =>
      JSON.stringify({ model, created_at: createdAt(), message: { role: "assistant", content: "", ...message }, done: false }) + "\n";
    const lines = [
      ...thoughts.map((thinking) => line({ thinking })),
      ...tokens.map((content) => line({ content })),
      ...calls.flatMap((call, index) => {
        if (!extra.splitToolCalls) return [line({ tool_calls: [{ function: { name: call.name, arguments: call.arguments } }] })];
        const [first, ...rest] = Object.entries(call.arguments);
        return [
          line({ tool_calls: [{ function: { index, name: call.name, arguments: first ? { [first[0]]: first[1] } : {} } }] }),
          line({ tool_calls: [{ function: { index, arguments: Object.fromEntries(rest) } }] }),
        ];
      }),
    ];
    const finished = await streamChunks(ex, lines, { malformedLine: '{"model":"' + model + '","created_at":\n' });
    if (!finished || ex.gone()) return;
    ex.res.end(JSON.stringify(final("")) + "\n");
  }

  Object.defineProperties(server, {
    models: { get: () => state.models, set: (value: string[]) => (state.models = value), enumerable: true },
    embeddingDim: { get: () => state.embeddingDim, set: (value: number) => (state.embeddingDim = value), enumerable: true },
    modelInfo: { get: () => state.modelInfo, set: (value: Record<string, OllamaModelInfo>) => (state.modelInfo = value), enumerable: true },
  });
  return server as OllamaTestServer;
}
