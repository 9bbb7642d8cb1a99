/** Every operation × value type, the nested forms, and variables of verify results. */
import type { Condition } from "../../../src/core/workflows/flow-schema";
import { conditionSchema } from "../../../src/core/workflows/flow-schema";
import { evaluateCondition, type FlowValue } from "../../../src/core/workflows/flow-values";

const int = (data: number): FlowValue => ({ type: "int", data });
const dbl = (data: number): FlowValue => ({ type: "double", data });
const str = (data: string): FlowValue => ({ type: "string", data });
const bool = (data: boolean): FlowValue => ({ type: "boolean", data });
const critique = (success: boolean, feedback: string, input: FlowValue = str("draft")): FlowValue => ({ type: "critique", success, feedback, input });
const cond = (operation: string, value: string | number | boolean, variable = "input.data"): Condition => conditionSchema.parse({ variable, operation, value });
const check = (value: FlowValue, operation: string, literal: string | number | boolean, variable?: string) => evaluateCondition(cond(operation, literal, variable), value);

describe("flow conditions", () => {
  it.each([
    // operation, literal, result for 42, result for 7
    ["equals", 42, true, false],
    ["not_equals", 42, false, true],
    ["more", 41, true, false],
    ["less", 43, true, true],
    ["more_or_equal", 42, true, false],
    ["less_or_equal", 42, true, true],
  ])("int %s %p", (op, literal, for42, for7) => {
    expect(check(int(42), op, literal)).toBe(for42);
    expect(check(int(7), op, literal)).toBe(for7);
  });

  it("compares numbers numerically across int and double (42 equals 42.0)", () => {
    expect(check(int(42), "equals", 42.0)).toBe(true);
    expect(check(dbl(42.0), "equals", 42)).toBe(true);
    expect(check(dbl(0.5), "less", 1)).toBe(true);
    expect(check(dbl(79.99), "more_or_equal", 80)).toBe(false);
    expect(check(dbl(80), "more_or_equal", 80)).toBe(true);
    expect(check(dbl(-3.5), "less_or_equal", -3.5)).toBe(true);
  });

  it("reads a number out of a text answer when the literal is a number", () => {
    expect(check(str("Score: 85/100"), "more_or_equal", 80)).toBe(true);
    expect(check(str("no number here"), "more", 1)).toBe(false);
    expect(check(str("no number here"), "not_equals", 1)).toBe(true);
  });

  it("strings: equals is exact (trimmed), more/less are case-insensitive", () => {
    expect(check(str(" en "), "equals", "en")).toBe(true);
    expect(check(str("EN"), "equals", "en")).toBe(false);
    expect(check(str("EN"), "not_equals", "en")).toBe(true);
    expect(check(str("banana"), "more", "Apple")).toBe(true);
    expect(check(str("apple"), "less", "Banana")).toBe(true);
    expect(check(str("Apple"), "more_or_equal", "apple")).toBe(true);
    expect(check(str("apple"), "less_or_equal", "APPLE")).toBe(true);
  });

  it("booleans: equals, not_equals, not, and, or", () => {
    expect(check(bool(true), "equals", true)).toBe(true);
    expect(check(bool(true), "not_equals", true)).toBe(false);
    expect(check(bool(false), "not", true)).toBe(true);
    expect(check(bool(true), "not", true)).toBe(false);
    expect(check(bool(true), "and", true)).toBe(true);
    expect(check(bool(true), "and", false)).toBe(false);
    expect(check(bool(false), "or", true)).toBe(true);
    expect(check(bool(false), "or", false)).toBe(false);
    expect(check(str("yes"), "equals", true)).toBe(true);
  });

  it("verify results: success, feedback and the checked input", () => {
    expect(check(critique(true, "fine"), "equals", true, "input.success")).toBe(true);
    expect(check(critique(false, "too long"), "equals", false, "input.success")).toBe(true);
    expect(check(critique(false, "too long"), "equals", "too long", "input.feedback")).toBe(true);
    expect(check(critique(false, "x", int(7)), "more", 5, "input.input")).toBe(true);
    expect(check(critique(false, "x", int(7)), "more", 5, "input.input.data")).toBe(true);
    expect(check(critique(true, "x"), "equals", true, "input.nonsense")).toBe(false);
  });

  it("upper-case operation names are accepted (Koog files)", () => {
    expect(check(int(90), "MORE_OR_EQUAL", 80)).toBe(true);
    expect(check(str("x"), "NOT_EQUALS", "y")).toBe(true);
  });

  it("composes and / or / not", () => {
    const between = conditionSchema.parse({
      operation: "AND",
      conditions: [
        { variable: "input.data", operation: "more_or_equal", value: 50 },
        { variable: "input.data", operation: "less", value: 80 },
      ],
    });
    expect(evaluateCondition(between, int(60))).toBe(true);
    expect(evaluateCondition(between, int(80))).toBe(false);
    const either = conditionSchema.parse({ operation: "or", conditions: [{ variable: "input", operation: "equals", value: "a" }, { variable: "input", operation: "equals", value: "b" }] });
    expect(evaluateCondition(either, str("b"))).toBe(true);
    expect(evaluateCondition(either, str("c"))).toBe(false);
    const notEither = conditionSchema.parse({ operation: "not", condition: either });
    expect(evaluateCondition(notEither, str("c"))).toBe(true);
    const nested = conditionSchema.parse({ operation: "and", conditions: [{ operation: "not", condition: { variable: "input.success", operation: "equals", value: true } }, { variable: "input.feedback", operation: "not_equals", value: "" }] });
    expect(evaluateCondition(nested, critique(false, "fix it"))).toBe(true);
    expect(evaluateCondition(nested, critique(true, "fine"))).toBe(false);
  });

  it("arrays compare as their joined text", () => {
    expect(check({ type: "string[]", data: ["a", "b"] }, "equals", "a, b")).toBe(true);
  });
});
