import { AbortedError, errorMessage, isAbortError, throwIfAborted } from "../../../src/core/util/errors";
import { SerialQueue } from "../../../src/core/util/serial-queue";
import { stripThinkBlocks, ThinkSplitter } from "../../../src/core/util/think-blocks";
import { ProviderError } from "../../../src/core/providers/provider-error";
import { resized } from "../../../src/core/util/typed-arrays";

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

describe("think blocks (one rule, whole and streamed)", () => {
  const streamed = (pieces: string[]) => {
    const splitter = new ThinkSplitter();
    const parts = [...pieces.map((p) => splitter.push(p)), splitter.end()];
    return { thinking: parts.map((p) => p.thinking).join(""), text: parts.map((p) => p.text).join("") };
  };

  it("splits a leading block from the answer, tags split anywhere across pieces", () => {
    expect(streamed(["  <thi", "nk>plan ", "it</th", "ink>\n\n", "Paris", "."])).toEqual({ thinking: "plan it", text: "Paris." });
    expect(streamed(["<THINK>x</THINK>y"])).toEqual({ thinking: "x", text: "y" });
  });

  it("keeps a later <think> as text and treats an unterminated block as all reasoning", () => {
    expect(streamed(["I think ", "<think> is a tag"])).toEqual({ thinking: "", text: "I think <think> is a tag" });
    expect(streamed(["<think>still going"])).toEqual({ thinking: "still going", text: "" });
    expect(streamed(["<thi"])).toEqual({ thinking: "", text: "<thi" });
  });

  it("the whole-text form gives the same answer", () => {
    expect(stripThinkBlocks("<think>{not this}</think> {\"a\":1}")).toBe('{"a":1}');
    expect(stripThinkBlocks("  <think>hmm</think>  ")).toBe("");
    expect(stripThinkBlocks("a <think>b</think>")).toBe("a <think>b</think>");
  });
});

describe("resized typed arrays", () => {
  it("keeps the kind and the first entries, zero-fills a longer copy, cuts a shorter one and leaves the original alone", () => {
    const original = new Int32Array([5, -6, 7]);
    const longer = resized(original, 5);
    expect(longer).toBeInstanceOf(Int32Array);
    expect(Array.from(longer)).toEqual([5, -6, 7, 0, 0]);
    longer[0] = 1;
    expect(original[0]).toBe(5);
    const shorter = resized(new Float32Array([0.5, 1.5, 2.5]), 2);
    expect(shorter).toBeInstanceOf(Float32Array);
    expect(Array.from(shorter)).toEqual([0.5, 1.5]);
    expect(resized(new Uint8Array([1]), 0).length).toBe(0);
  });
});
