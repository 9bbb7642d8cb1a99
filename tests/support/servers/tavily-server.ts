/**
 * A loopback server that speaks Tavily's search API:
 *   POST /search  {query, max_results?, search_depth?, ...} with `Authorization: Bearer <key>` (or `api_key`
 *                 in the body) → {query, follow_up_questions, answer, images, results:[{title,url,content,score,raw_content}], response_time, request_id}
 * A missing or wrong key answers 401 {"detail":{"error":"Unauthorized: missing or invalid API key."}};
 * scripted errors use the same {"detail":{"error"}} shape.
 *
 *   const tavily = await startTavilyServer({ apiKey: "tvly-test" });
 *   tavily.script({ extra: { results: [{ title: "A", url: "https://a.example", content: "…" }] } });
 *   tavily.script({ status: 429 });
 * Default results: min(max_results, 5) deterministic results derived from the query.
 * Route: "search". Scripting: see scripted-server.ts / README.md.
 */
import { type Behaviour, type ScriptedServer, startScriptedServer } from "./scripted-server";

export interface TavilyResult {
  title: string;
  url: string;
  content: string;
  score?: number;
  raw_content?: string | null;
}

export interface TavilyExtra {
  results?: TavilyResult[] | ((query: string, maxResults: number) => TavilyResult[]);
}

export type TavilyBehaviour = Behaviour<TavilyExtra>;

export interface TavilyServerOptions {
  /** The only key accepted (default "tvly-test-key"). */
  apiKey?: string;
  /** Results for every query unless a behaviour scripts others. */
  results?: TavilyExtra["results"];
}

export interface TavilyTestServer extends ScriptedServer<TavilyExtra> {
  apiKey: string;
}

export const DEFAULT_TAVILY_KEY = "tvly-test-key";

const MESSAGES: Record<number, string> = {
  400: "Invalid request: query is required.",
  401: "Unauthorized: missing or invalid API key.",
  429: "Your request has been blocked due to excessive requests. Please reduce the rate of requests.",
  432: "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com",
  500: "Internal Server Error",
};

/** Deterministic results for a query: "Result 1 for <query>" at https://example.com/<slug>/1, ... */
export function defaultTavilyResults(query: string, maxResults: number): TavilyResult[] {
  const slug = query.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "q";
  const count = Math.max(0, Math.min(maxResults, 5));
  return Array.from({ length: count }, (_, i) => ({
    title: `Result ${i + 1} for ${query}`,
    url: `https://example.com/${slug}/${i + 1}`,
    content: `Snippet ${i + 1} about ${query}.`,
    score: Number((0.9 - i * 0.1).toFixed(2)),
    raw_content: null,
  }));
}

export async function startTavilyServer(options: TavilyServerOptions = {}): Promise<TavilyTestServer> {
  const state = { apiKey: options.apiKey ?? DEFAULT_TAVILY_KEY };
  const server = await startScriptedServer<TavilyExtra>({
    route: (method, path) => (method === "POST" && path === "/search" ? "search" : null),
    describe(req) {
      const body = (req.body ?? {}) as { query?: string };
      req.userText = typeof body.query === "string" ? body.query : "";
    },
    guard(ex) {
      const auth = ex.req.headers.authorization ?? "";
      const bearer = auth.toLowerCase().startsWith("bearer ") ? auth.slice(7).trim() : "";
      const bodyKey = (ex.req.body as { api_key?: string } | undefined)?.api_key ?? "";
      if ((bearer || bodyKey) !== state.apiKey) {
        ex.json(401, { detail: { error: MESSAGES[401] } });
        return true;
      }
      if (typeof ex.req.body !== "object" || !ex.req.userText) {
        ex.json(400, { detail: { error: MESSAGES[400] } });
        return true;
      }
      return false;
    },
    error(ex, status, message) {
      ex.json(status, { detail: { error: message ?? MESSAGES[status] ?? `Error ${status}` } });
    },
    async answer(ex) {
      if (ex.behaviour.malformed) return ex.json(200, '{"query":"x","results":[{"title":"A","url":');
      const body = ex.req.body as { query: string; max_results?: number };
      const max = typeof body.max_results === "number" ? body.max_results : 5;
      const source = ex.behaviour.extra?.results ?? options.results ?? defaultTavilyResults;
      const results = (typeof source === "function" ? source(body.query, max) : source).slice(0, max).map((r) => ({
        score: 0.5,
        raw_content: null,
        ...r,
      }));
      if (ex.behaviour.cutAfterTokens !== undefined || ex.behaviour.stallAfterTokens !== undefined) {
        ex.res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "4096" });
        ex.res.write('{"query":');
        if (ex.behaviour.stallAfterTokens !== undefined) return ex.hold();
        return ex.cut();
      }
      ex.json(200, {
        query: body.query,
        follow_up_questions: null,
        answer: null,
        images: [],
        results,
        response_time: 0.42,
        request_id: `test-${ex.req.firstByteAt.toFixed(0)}`,
      });
    },
  });
  Object.defineProperty(server, "apiKey", { get: () => state.apiKey, set: (v: string) => (state.apiKey = v), enumerable: true });
  return server as TavilyTestServer;
}
