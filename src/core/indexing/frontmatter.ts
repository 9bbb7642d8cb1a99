/**
 * Note frontmatter: the YAML block between "---" lines at the very top of a note.
 *
 * A small hand-written parser for the subset notes use (top-level keys with scalars, inline lists
 * "[a, b]" and block lists "- a"), so Obsidian and the CLI read frontmatter identically without a YAML
 * dependency. It never throws: lines it does not understand are skipped.
 */

export type FrontmatterValue = string | string[] | null;

export interface Frontmatter {
  /** Top-level keys in source order. Nested maps are not represented (their key maps to null). */
  fields: Record<string, FrontmatterValue>;
  /** 0-based index of the closing "---" line; the body starts on the line after it. */
  endLine: number;
}

export interface NoteMetadata {
  title: string | null;
  aliases: string[];
  tags: string[];
}

const OPEN = /^---[ \t]*$/;
const CLOSE = /^(?:---|\.\.\.)[ \t]*$/;
const KEY_LINE = /^([^\s#:-][^:]*?|"[^"]*"|'[^']*'):(?:[ \t]+(.*))?[ \t]*$/;
const LIST_ITEM = /^[ \t]*-(?:[ \t]+(.*))?$/;

/**
 * Finds and parses frontmatter in a note's lines (BOM already removed). Returns null when the note has
 * none: the first line must be "---" and a closing "---" (or "...") must follow.
 */
export function readFrontmatter(lines: readonly string[]): Frontmatter | null {
  if (lines.length < 2 || !OPEN.test(lines[0])) return null;
  let end = -1;
  for (let i = 1; i < lines.length; i++) {
    if (CLOSE.test(lines[i])) {
      end = i;
      break;
    }
  }
  if (end < 0) return null;
  return { fields: parseYamlSubset(lines.slice(1, end)), endLine: end };
}

/** Parses top-level "key: value" pairs; see the module comment for the supported subset. */
export function parseYamlSubset(lines: readonly string[]): Record<string, FrontmatterValue> {
  const fields: Record<string, FrontmatterValue> = Object.create(null) as Record<string, FrontmatterValue>;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const match = /^\S/.test(line) ? KEY_LINE.exec(line) : null;
    i++;
    if (!match) continue;
    const key = unquote(match[1].trim());
    const raw = (match[2] ?? "").trim();

    if (raw === "" || raw === "|" || raw === ">" || /^[|>][+-]?$/.test(raw)) {
      // Either a block list, a block scalar, a nested map, or nothing: look at the indented lines below.
      const block: string[] = [];
      while (i < lines.length && (lines[i].trim() === "" || /^[ \t]/.test(lines[i]) || LIST_ITEM.test(lines[i]))) {
        block.push(lines[i]);
        i++;
      }
      fields[key] = blockValue(raw, block);
    } else if (raw.startsWith("[")) {
      fields[key] = parseInlineList(raw);
    } else {
      fields[key] = parseScalar(raw);
    }
  }
  return fields;
}

function blockValue(indicator: string, block: string[]): FrontmatterValue {
  const content = block.filter((l) => l.trim() !== "");
  if (content.length === 0) return null;
  if (indicator.startsWith("|") || indicator.startsWith(">")) {
    const joiner = indicator.startsWith("|") ? "\n" : " ";
    return content.map((l) => l.trim()).join(joiner);
  }
  if (content.every((l) => LIST_ITEM.test(l))) {
    const items: string[] = [];
    for (const l of content) {
      const m = LIST_ITEM.exec(l);
      const value = m?.[1] === undefined ? null : parseScalar(m[1].trim());
      if (value !== null && value !== "") items.push(value);
    }
    return items;
  }
  return null; // a nested map or something else this subset does not represent
}

/** "[a, 'b, c', "d"]" → ["a", "b, c", "d"]. Tolerates a missing closing bracket. */
function parseInlineList(raw: string): string[] {
  const body = raw.slice(1, raw.lastIndexOf("]") > 0 ? raw.lastIndexOf("]") : raw.length);
  const items: string[] = [];
  let current = "";
  let quote: string | null = null;
  for (const ch of body) {
    if (quote) {
      if (ch === quote) quote = null;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
    } else if (ch === ",") {
      items.push(current.trim());
      current = "";
    } else {
      current += ch;
    }
  }
  items.push(current.trim());
  return items.filter((s) => s !== "");
}

/** Quoted or plain scalar. " # comment" ends a plain scalar; "#tag" does not (users write tags: #idea). */
function parseScalar(raw: string): string | null {
  const quoted = raw[0] === '"' ? /^"((?:[^"\\]|\\.)*)"/.exec(raw) : raw[0] === "'" ? /^'((?:[^']|'')*)'/.exec(raw) : null;
  if (quoted) return raw[0] === '"' ? unescapeDouble(quoted[1]) : quoted[1].replace(/''/g, "'");
  const comment = raw.search(/[ \t]#(?:[ \t]|$)/);
  const value = (comment >= 0 ? raw.slice(0, comment) : raw).trim();
  if (value === "" || value === "~" || value === "null") return null;
  return value;
}

function unescapeDouble(s: string): string {
  return s.replace(/\\(["\\nt])/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));
}

function unquote(s: string): string {
  if (s.length >= 2 && (s[0] === '"' || s[0] === "'") && s[s.length - 1] === s[0]) return s.slice(1, -1);
  return s;
}

/**
 * The fields Krypton indexes. Accepts Obsidian's legacy singular keys ("tag", "alias"), tags with or
 * without "#", and tags written as one string ("a, b" or "a b").
 */
export function noteMetadata(fields: Record<string, FrontmatterValue> | null): NoteMetadata {
  if (!fields) return { title: null, aliases: [], tags: [] };
  const title = fields["title"];
  const titleText = typeof title === "string" ? title.trim() : Array.isArray(title) ? title.join(" ").trim() : "";

  const aliases = uniq([...asList(fields["aliases"]), ...asList(fields["alias"])].map((a) => a.trim()).filter(Boolean));

  const tags: string[] = [];
  for (const value of [fields["tags"], fields["tag"]]) {
    for (const item of asList(value)) {
      for (const piece of item.split(/[,\s]+/)) {
        const tag = normalizeTag(piece);
        if (tag) tags.push(tag);
      }
    }
  }
  return { title: titleText || null, aliases, tags: uniq(tags) };
}

/** "#Area/ML" → "Area/ML"; empty when nothing is left. */
export function normalizeTag(raw: string): string {
  return raw.trim().replace(/^#+/, "").trim();
}

function asList(value: FrontmatterValue | undefined): string[] {
  if (value === null || value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function uniq(values: string[]): string[] {
  return [...new Set(values)];
}
