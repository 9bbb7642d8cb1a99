import { AbortedError, errorMessage, isAbortError, throwIfAborted } from "../../../src/core/util/errors";
import { SerialQueue } from "../../../src/core/util/serial-queue";
import { ProviderError } from "../../../src/core/providers/provider-error";

describe("errors", () => {
  it("recognises every form of abort and nothing else", () => {
    expect(isAbortError(new AbortedError())).toBe(true);
    expect(isAbortError(new ProviderError("aborted", "Stopped"))).toBe(true);
    expect(isAbortError(Object.assign(new Error("x"), { name: "AbortError" }))).toBe(true);
    expect(isAbortError(new ProviderError("timeout", "slow"))).toBe(false);
    expect(isAbortError(new Error("AbortError"))).toBe(false);
    expect(isAbortError(null)).toBe(false);
  });
  it("throwIfAborted throws only for a fired signal", () => {
    const c = new AbortController();
    expect(() => throwIfAborted(c.signal)).not.toThrow();
    c.abort();
    expect(() => throwIfAborted(c.signal)).toThrow(AbortedError);
  });
  it("errorMessage is readable for every thrown value", () => {
    expect(errorMessage(new Error("boom"))).toBe("boom");
    expect(errorMessage("plain")).toBe("plain");
    expect(errorMessage({ message: "obj" })).toBe("obj");
    expect(errorMessage({ code: 1 })).toBe('{"code":1}');
    expect(errorMessage(undefined)).toBe("undefined");
  });
});

describe("SerialQueue", () => {
  it("runs tasks one at a time in order, and a failure does not stop the next", async () => {
    const q = new SerialQueue();
    const log: string[] = [];
    let running = 0;
    const task = (name: string, fail = false) => async () => {
      running++;
      expect(running).toBe(1);
      log.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`end ${name}`);
      running--;
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([q.run(task("a")), q.run(task("b", true)), q.run(task("c"))]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    await q.idle();
    expect(q.size).toBe(0);
  });
});
