import { untilAborted } from "../../../src/core/ports/clock";

describe("untilAborted", () => {
  it("passes the work's result and error through", async () => {
    await expect(untilAborted(Promise.resolve(3), new AbortController().signal)).resolves.toBe(3);
    await expect(untilAborted(Promise.reject(new Error("boom")), new AbortController().signal)).rejects.toThrow("boom");
  });

  it("stops waiting for work that never settles when the signal aborts", async () => {
    const controller = new AbortController();
    const waiting = untilAborted(new Promise<never>(() => {}), controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
  });

  it("rejects at once when the signal was aborted before the call", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(untilAborted(new Promise<never>(() => {}), controller.signal)).rejects.toMatchObject({ name: "AbortError" });
  });
});
