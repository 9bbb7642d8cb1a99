import { parseArgs, parseIntStrict } from "../../src/cli/args";
import { UsageError } from "../../src/cli/errors";

const specs = {
  json: { type: "boolean" as const, description: "" },
  limit: { type: "string" as const, short: "n", description: "" },
  exclude: { type: "string" as const, repeatable: true, description: "" },
  help: { type: "boolean" as const, short: "h", description: "" },
};

describe("CLI argument parsing", () => {
  it("separates positionals from options in any order", () => {
    const parsed = parseArgs(["vault", "--json", "gradient", "--limit", "3", "descent"], specs);
    expect(parsed.positionals).toEqual(["vault", "gradient", "descent"]);
    expect(parsed.options).toEqual({ json: true, limit: "3" });
  });

  it("accepts --name=value, short names and repeatable options", () => {
    const parsed = parseArgs(["--limit=5", "-h", "--exclude", "a/", "--exclude=b/"], specs);
    expect(parsed.options).toEqual({ limit: "5", help: true, exclude: ["a/", "b/"] });
    expect(parseArgs(["-n", "2"], specs).options.limit).toBe("2");
  });

  it("treats everything after -- as positional, so a query may start with a dash", () => {
    expect(parseArgs(["vault", "--", "--json", "-x"], specs).positionals).toEqual(["vault", "--json", "-x"]);
  });

  it("rejects unknown options with a suggestion", () => {
    expect(() => parseArgs(["--lmit", "3"], specs)).toThrow(UsageError);
    expect(() => parseArgs(["--lmit", "3"], specs)).toThrow("unknown option --lmit (did you mean --limit?)");
    expect(() => parseArgs(["-x"], specs)).toThrow("unknown option -x");
    expect(() => parseArgs(["--constructor"], specs)).toThrow("unknown option --constructor");
  });

  it("rejects a missing value and a value given to a boolean", () => {
    expect(() => parseArgs(["--limit"], specs)).toThrow("option --limit needs a value");
    expect(() => parseArgs(["--limit", "--json"], specs)).toThrow("option --limit needs a value");
    expect(() => parseArgs(["--json=yes"], specs)).toThrow("option --json takes no value");
  });

  it("parses whole numbers strictly", () => {
    expect(parseIntStrict("12", "--limit", 1, 100)).toBe(12);
    expect(() => parseIntStrict("1.5", "--limit", 1, 100)).toThrow("--limit must be a whole number");
    expect(() => parseIntStrict("0", "--limit", 1, 100)).toThrow("--limit must be between 1 and 100");
    expect(() => parseIntStrict("12abc", "--limit", 1, 100)).toThrow(UsageError);
  });
});
