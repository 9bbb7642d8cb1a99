import { probeTcp, withConnectTimeout } from "../../src/cli/connect-timeout-fetch";
import { closedPortUrl, startLoopbackServer, type LoopbackServer } from "../support/servers/loopback-server";

describe("withConnectTimeout", () => {
  let server: LoopbackServer;
  let url: string;
  beforeAll(async () => {
    server = await startLoopbackServer((_req, res) => res.end("ok"));
    url = server.url;
  });
  afterAll(() => server.close());

  it("passes requests through to a reachable server, probing each host:port once", async () => {
    const probes: string[] = [];
    const f = withConnectTimeout((input, init) => fetch(input, init), {
      timeoutMs: 1000,
      probe: async (host, port, ms) => {
        probes.push(`${host}:${port}`);
        await probeTcp(host, port, ms);
      },
    });
    expect(await (await f(`${url}/a`)).text()).toBe("ok");
    expect(await (await f(new URL(`${url}/b`))).text()).toBe("ok");
    expect(await (await f(new Request(`${url}/c`))).text()).toBe("ok");
    expect(probes).toHaveLength(1);
  });

  it("fails like a refused fetch when the host does not accept a connection in time", async () => {
    let calls = 0;
    const base = () => {
      calls++;
      return Promise.resolve(new Response("should not be called"));
    };
    const f = withConnectTimeout(base, {
      timeoutMs: 10,
      probe: () => Promise.reject(Object.assign(new Error("connect ETIMEDOUT 10.0.0.1:11434"), { code: "ETIMEDOUT" })),
    });
    const err = (await f("http://10.0.0.1:11434/api/embed").catch((e: unknown) => e)) as TypeError & { cause: { code: string } };
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe("fetch failed");
    expect(err.cause.code).toBe("ETIMEDOUT");
    expect(calls).toBe(0);
  });

  it("remembers a failure for a while, then probes again (the server may have come back)", async () => {
    let now = 0;
    let up = false;
    let probes = 0;
    const f = withConnectTimeout(() => Promise.resolve(new Response("ok")), {
      timeoutMs: 10,
      retryAfterMs: 1000,
      now: () => now,
      probe: () => {
        probes++;
        return up ? Promise.resolve() : Promise.reject(new Error("down"));
      },
    });
    await expect(f("http://host:1/x")).rejects.toThrow("fetch failed");
    await expect(f("http://host:1/x")).rejects.toThrow("fetch failed");
    expect(probes).toBe(1);
    up = true;
    now = 1500;
    expect(await (await f("http://host:1/x")).text()).toBe("ok");
    expect(probes).toBe(2);
  });

  it("probeTcp rejects at once for a closed port", async () => {
    const port = Number(new URL(await closedPortUrl()).port);
    await expect(probeTcp("127.0.0.1", port, 5000)).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});
