import { redactingLogger, type Logger } from "../../../src/core/ports/logger";
import { redact } from "../../../src/core/util/redact";

describe("redact (the one rule)", () => {
  it("masks a secret whole even when a shorter secret sits inside it, and its URL-encoded form", () => {
    const header = "Bearer sk-live/abc+def==";
    const token = "sk-live/abc+def==";
    expect(redact(`sent ${header}`, [token, header])).toBe("sent ***");
    expect(redact(`GET /x?auth=${encodeURIComponent(token)}`, [token])).toBe("GET /x?auth=***");
  });

  it("masks key-like query parameters of any value and leaves short values alone", () => {
    expect(redact("https://h/v1?alt=sse&key=AIzaUnknown&x=1", [])).toBe("https://h/v1?alt=sse&key=***&x=1");
    expect(redact("mode dev is on", ["dev"])).toBe("mode dev is on");
  });

  it("redactingLogger cleans the data as well as the message", () => {
    const lines: string[] = [];
    const sink: Logger = { debug: (m, d) => lines.push(`${m} ${JSON.stringify(d)}`), info() {}, warn() {}, error: (m, d) => lines.push(`${m} ${(d as Error).message}`) };
    const logger = redactingLogger(sink, () => ["tok-1234567890"]);
    logger.debug("header tok-1234567890", { headers: { authorization: "Bearer tok-1234567890" } });
    logger.error("failed", new Error("echoed tok-1234567890"));
    expect(lines.join("\n")).not.toContain("tok-1234567890");
    expect(lines).toEqual(['header *** {"headers":{"authorization":"Bearer ***"}}', "failed echoed ***"]);
  });
});
