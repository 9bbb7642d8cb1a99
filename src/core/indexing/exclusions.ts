/**
 * Which notes the index skips: the user's exclude patterns plus, always, Obsidian's config folder and
 * Krypton's own ".krypton" folder. Patterns are folder prefixes ("Templates/", "Archive") or globs where
 * `*` stays inside one path segment and `**` spans folders ("**\/*.excalidraw.md", "Daily/2023-*").
 *
 * The pattern compiler only: callers decide through core/notes/read-policy.ts, which folds case for paths and
 * patterns alike (one rule for the index and the tools).
 */
export type PathFilter = (path: string) => boolean;

/** Returns a predicate that is true for paths the index must skip. */
export function createExclusionFilter(patterns: readonly string[], configDir: string): PathFilter {
  const config = trimSlashes(configDir);
  const always = config ? [".krypton/", `${config}/`] : [".krypton/"];
  const matchers = [...always, ...patterns].map((p) => p.trim()).filter((p) => p.length > 0).map(compilePattern);
  return (path) => matchers.some((m) => m(path));
}

function compilePattern(raw: string): PathFilter {
  const pattern = raw.replace(/\\/g, "/").replace(/^\.?\//, "");
  if (!pattern.includes("*") && !pattern.includes("?")) {
    // A folder ("Templates/" or "Templates") or one exact file.
    const folder = trimSlashes(pattern);
    return (path) => path === folder || path.startsWith(folder + "/");
  }
  const re = globToRegExp(pattern.endsWith("/") ? pattern + "**" : pattern);
  return (path) => re.test(path);
}

/** `**` spans folders (and "**\/" may match no folder at all), `*` and `?` stay within one segment. */
export function globToRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const slashAfter = glob[i + 2] === "/";
        out += slashAfter ? "(?:.*/)?" : ".*";
        i += slashAfter ? 2 : 1;
      } else {
        out += "[^/]*";
      }
    } else if (c === "?") {
      out += "[^/]";
    } else {
      out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    }
  }
  return new RegExp(`^${out}$`, "u");
}

function trimSlashes(s: string): string {
  return s.replace(/^\/+|\/+$/g, "");
}
