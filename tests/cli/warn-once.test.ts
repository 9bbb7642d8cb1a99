import { createOutput } from "../../src/cli/output";
import { WarnOnce } from "../../src/cli/warn-once";

function stream() {
  const chunks: string[] = [];
  return { text: () => chunks.join(""), write: (t: string) => chunks.push(t), isTTY: false };
}

describe("WarnOnce", () => {
  it("says a message once per run, through warn() and through its output alike; a different message is said", () => {
    const err = stream();
    const once = new WarnOnce(createOutput(stream(), err));
    once.warn("the embedder is down");
    once.output.warn("the embedder is down");
    once.warn(null);
    once.warn("");
    once.output.warn("the index is read-only");
    once.warn("the index is read-only");
    expect(err.text()).toBe("krypton: warning: the embedder is down\nkrypton: warning: the index is read-only\n");
  });

  it("leaves the output's other channels as they are: info and errors are said every time", () => {
    const err = stream();
    const once = new WarnOnce(createOutput(stream(), err));
    once.output.info("hint");
    once.output.info("hint");
    once.output.error("failed");
    once.output.error("failed");
    expect(err.text()).toBe("hint\nhint\nkrypton: failed\nkrypton: failed\n");
  });
});
