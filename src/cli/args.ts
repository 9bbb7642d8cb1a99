import { UsageError } from "./errors";

/** One command-line option. Names are long names without the dashes ("chat-model"). */
export interface OptionSpec {
  type: "boolean" | "string";
  /** Shown in --help. */
  description: string;
  /** Placeholder in --help ("URL", "N"). */
  value?: string;
  /** A string option that may be given several times (values are collected in order). */
  repeatable?: boolean;
  short?: string;
}

export type OptionSpecs = Record<string, OptionSpec>;

export interface ParsedArgs {
  positionals: string[];
  /** Booleans are true when present; strings hold the last value (or all values when repeatable). */
  options: Record<string, string | boolean | string[]>;
}

/**
 * Parses argv against a table of options, by hand (no dependency): `--name value`, `--name=value`,
 * boolean `--flag`, short `-h`, and `--` to end options. Unknown options are a UsageError naming them,
 * so a typo never silently changes what a command does.
 */
export function parseArgs(argv: readonly string[], specs: OptionSpecs): ParsedArgs {
  const positionals: string[] = [];
  const options: ParsedArgs["options"] = {};
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) if (spec.short) byShort.set(spec.short, name);

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string;
    let inlineValue: string | undefined;
    if (arg.startsWith("--") && arg.length > 2) {
      const eq = arg.indexOf("=");
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inlineValue = eq === -1 ? undefined : arg.slice(eq + 1);
    } else if (arg.startsWith("-") && arg.length === 2 && arg !== "-") {
      const long = byShort.get(arg.slice(1));
      if (!long) throw new UsageError(`unknown option ${arg}`);
      name = long;
    } else {
      positionals.push(arg);
      continue;
    }

    const spec = Object.prototype.hasOwnProperty.call(specs, name) ? specs[name] : undefined;
    if (!spec) throw new UsageError(`unknown option --${name}${suggestion(name, Object.keys(specs))}`);
    if (spec.type === "boolean") {
      if (inlineValue !== undefined) throw new UsageError(`option --${name} takes no value`);
      options[name] = true;
      continue;
    }
    let value = inlineValue;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith("--") && next.length > 2)) {
        throw new UsageError(`option --${name} needs a value${spec.value ? ` (${spec.value})` : ""}`);
      }
      value = next;
      i++;
    }
    if (spec.repeatable) {
      const prev = options[name];
      options[name] = Array.isArray(prev) ? [...prev, value] : [value];
    } else {
      options[name] = value;
    }
  }
  return { positionals, options };
}

export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const v = args.options[name];
  if (Array.isArray(v)) return v[v.length - 1];
  return typeof v === "string" ? v : undefined;
}

export function listOption(args: ParsedArgs, name: string): string[] {
  const v = args.options[name];
  if (Array.isArray(v)) return v;
  return typeof v === "string" ? [v] : [];
}

export function flag(args: ParsedArgs, name: string): boolean {
  return args.options[name] === true;
}

/** A whole number within bounds, or a UsageError that names the option. */
export function parseIntStrict(raw: string, what: string, min: number, max: number): number {
  const trimmed = raw.trim();
  if (/^-\d+$/.test(trimmed) && min >= 0) {
    throw new UsageError(`${what} must be ${min >= 1 ? "positive" : "zero or more"} (between ${min} and ${max}), got ${trimmed}`);
  }
  if (!/^\d+$/.test(trimmed)) throw new UsageError(`${what} must be a whole number, got "${raw}"`);
  const n = Number(trimmed);
  if (n < min || n > max) throw new UsageError(`${what} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** " (did you mean --x?)" for a near miss, so typos are quick to fix. */
function suggestion(name: string, known: string[]): string {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    const d = editDistance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best ? ` (did you mean --${best}?)` : "";
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}
