/**
 * OllamaChatModel against the loopback Ollama server: streaming, every failure mapped to a ProviderError
 * with plain words, retries only before the first token, timeouts from a small requestTimeoutMs.
 */
import type { ChatModel } from "../../../src/core/ports/chat-model";
import { OllamaChatModel, listOllamaModels, ollamaHasModel } from "../../../src/core/providers/ollama/ollama-chat-model";
import { ProviderError } from "../../../src/core/providers/provider-error";
import { nodeClock } from "../../../src/node/node-clock";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { FAST_RETRY, collect, collectUntilError, nodeFetch, waitFor } from "./provider-fixtures";
import { closedPortUrl } from "../../support/servers/loopback-server";

const ask = [{ role: "user" as const, content: "What is the capital of France?" }];

describe("OllamaChatModel", () => {
  let server: OllamaTestServer;
  const model = (overrides: Partial<ConstructorParameters<typeof OllamaChatModel>[0]> = {}): ChatModel =>
    new OllamaChatModel({ baseUrl: server.url, model: "llama3.1:8b", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY, ...overrides });

  beforeEach(async () => {
    server = await startOllamaServer();
  });
  afterEach(() => server.close());

  it("streams the answer token by token and sends the messages, format and temperature", async () => {
    server.script({ route: "chat", reply: "Paris is the capital [1]." });
    const tokens = await collect(model().stream({ messages: [{ role: "system", content: "Be brief." }, ...ask], json: true, temperature: 0.2 }));
    expect(tokens.join("")).toBe("Paris is the capital [1].");
    expect(tokens.length).toBeGreaterThan(1);
    const body = server.requestsTo("chat")[0].body as Record<string, unknown>;
    expect(body).toMatchObject({ model: "llama3.1:8b", stream: true, format: "json", options: { temperature: 0.2 } });
    expect(body.messages).toEqual([{ role: "system", content: "Be brief." }, ...ask]);
    expect(model().id).toBe("ollama:llama3.1:8b");
  });

  it("complete() returns the whole answer", async () => {
    server.script({ route: "chat", reply: "Paris." });
    await expect(model().complete({ messages: ask })).resolves.toBe("Paris.");
  });

  it("a model that is not pulled says which command installs it", async () => {
    const err = await model({ model: "mistral:7b" }).complete({ messages: ask }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: "model-missing", status: 404 });
    expect((err as Error).message).toBe("Model 'mistral:7b' is not installed in Ollama: run `ollama pull mistral:7b`.");
  });

  it("an unreachable server is 'not reachable', not retried forever", async () => {
    const url = await closedPortUrl();
    const err = await model({ baseUrl: url }).complete({ messages: ask }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "unreachable" });
    expect((err as Error).message).toContain(`Ollama is not reachable at ${url}`);
  });

  it("a connection closed before any answer says so, not 'not reachable' (the server was reached)", async () => {
    server.script({ route: "chat", cutAfterTokens: 0, times: Infinity });
    const err = await model().complete({ messages: ask }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as Error).message).toBe(
      `Ollama at ${server.url} accepted the connection but closed it before sending any answer. ` +
        "Check the server's log (for Ollama, it often ran out of memory loading the model: see `ollama ps`), and any proxy, VPN or firewall in between.",
    );
    // Before the first token, like a 5xx: worth another try (each was accepted, then closed).
    expect(server.requestsTo("chat")).toHaveLength(3);
  });

  it("retries 429 and 5xx before the first token, then answers", async () => {
    server.script([{ route: "chat", status: 429 }, { route: "chat", status: 503 }, { route: "chat", reply: "ok now" }]);
    await expect(model().complete({ messages: ask })).resolves.toBe("ok now");
    expect(server.requestsTo("chat")).toHaveLength(3);
  });

  it("gives up after the retry budget with a server error in plain words", async () => {
    server.script({ route: "chat", status: 500, times: Infinity });
    const err = await model().complete({ messages: ask }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "server", status: 500 });
    expect((err as Error).message).toMatch(/^Ollama failed \(500\)/);
    expect(server.requestsTo("chat")).toHaveLength(FAST_RETRY.attempts);
  });

  it("401 from a proxy is 'unauthorized' and is not retried", async () => {
    server.script({ route: "chat", status: 401, times: Infinity });
    await expect(model().complete({ messages: ask })).rejects.toMatchObject({ kind: "unauthorized", status: 401 });
    expect(server.requestsTo("chat")).toHaveLength(1);
  });

  it("a stream cut mid-way keeps the tokens already streamed and fails as bad-response (no retry)", async () => {
    server.script({ route: "chat", reply: "one two three four five", cutAfterTokens: 2 });
    const { tokens, error } = await collectUntilError(model().stream({ messages: ask }));
    expect(tokens.join("")).toBe("one two ");
    expect(error).toMatchObject({ kind: "bad-response" });
    // What happened and what to do, without the fetch library's own word for it ("terminated").
    expect((error as Error).message).toBe(
      `The connection to Ollama broke off while its answer was arriving, so the answer is incomplete. Try again; if it keeps happening, check the server at ${server.url} (is it still running?) and any proxy or VPN in between, which may close long connections.`,
    );
    expect(server.requestsTo("chat")).toHaveLength(1);
  });

  it("malformed JSON in the stream fails as bad-response instead of a silent short answer", async () => {
    server.script({ route: "chat", reply: "alpha beta gamma", malformed: true });
    const warn = jest.spyOn(console, "warn").mockImplementation(() => undefined); // ollama-js logs the bad line
    const { error } = await collectUntilError(model().stream({ messages: ask }));
    warn.mockRestore();
    expect(error).toMatchObject({ kind: "bad-response" });
  });

  it("a server that never answers times out (time to first token)", async () => {
    server.script({ route: "chat", stall: true });
    const err = await model({ timeoutMs: 80 }).complete({ messages: ask }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "timeout" });
    expect((err as Error).message).toContain("did not answer within");
  });

  it("a stream that goes silent between tokens times out, keeping what arrived", async () => {
    server.script({ route: "chat", reply: "first second third", stallAfterTokens: 1 });
    const { tokens, error } = await collectUntilError(model({ timeoutMs: 80 }).stream({ messages: ask }));
    expect(tokens).toEqual(["first "]);
    expect(error).toMatchObject({ kind: "timeout" });
    expect((error as Error).message).toContain("stopped sending");
  });

  it("Stop aborts the HTTP request mid-stream and reports 'aborted'", async () => {
    server.script({ route: "chat", reply: "a b c d e f g h", tokenDelayMs: 30 });
    const controller = new AbortController();
    const tokens: string[] = [];
    let error: unknown;
    try {
      for await (const t of model().stream({ messages: ask, signal: controller.signal })) {
        tokens.push(t);
        if (tokens.length === 2) controller.abort();
      }
    } catch (err) {
      error = err;
    }
    expect(tokens).toHaveLength(2);
    expect(error).toMatchObject({ kind: "aborted" });
  });

  it("a consumer that stops reading closes the connection", async () => {
    server.script({ route: "chat", reply: "a b c d e f g h", tokenDelayMs: 20 });
    for await (const t of model().stream({ messages: ask })) {
      expect(t).toBe("a ");
      break;
    }
    await waitFor(() => server.requests[0].closedEarly);
    server.script({ route: "chat", reply: "next" });
    await expect(model().complete({ messages: ask })).resolves.toBe("next");
  });

  it("an already-aborted signal sends nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(model().complete({ messages: ask, signal: controller.signal })).rejects.toMatchObject({ kind: "aborted" });
    expect(server.requests).toHaveLength(0);
  });

  it("lists installed models for the settings dropdown", async () => {
    const names = await listOllamaModels({ baseUrl: `${server.url}/`, fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000 });
    expect(names).toEqual(["llama3.1:8b", "nomic-embed-text:latest"]);
    expect(ollamaHasModel(names, "nomic-embed-text")).toBe(true);
    expect(ollamaHasModel(names, "llama3.1")).toBe(false);
  });
});

describe("reasoning models", () => {
  let server: OllamaTestServer;
  beforeEach(async () => {
    server = await startOllamaServer({ models: ["qwen3:8b"] });
  });
  afterEach(() => server.close());

  it("drops the leading <think> block, even when its tags are split across tokens", async () => {
    server.script({ route: "chat", tokens: ["<thi", "nk>\nLet me", " think about", " it.</th", "ink>\n\n", "Paris", " [1]."] });
    const model = new OllamaChatModel({ baseUrl: server.url, model: "qwen3:8b", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000 });
    expect(await collect(model.stream({ messages: ask }))).toEqual(["Paris", " [1]."]);
    server.script({ route: "chat", tokens: ["  I think ", "<think> is a tag"] });
    await expect(model.complete({ messages: ask })).resolves.toBe("  I think <think> is a tag");
  });

  it("long thinking counts as progress for the silence timeout", async () => {
    const thinking = Array.from({ length: 8 }, () => "hmm ");
    server.script({ route: "chat", tokens: ["<think>", ...thinking, "</think>", "Done."], tokenDelayMs: 30 });
    const model = new OllamaChatModel({ baseUrl: server.url, model: "qwen3:8b", fetch: nodeFetch, clock: nodeClock, timeoutMs: 150 });
    await expect(model.complete({ messages: ask })).resolves.toBe("Done.");
  });
});
