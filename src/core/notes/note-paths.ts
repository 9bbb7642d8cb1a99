import { toVaultRelativePath, VaultPathError } from "./vault-path-policy";
import type { VaultPort } from "../ports/vault";
import { AgentError } from "./agent-error";
import { errorMessage } from "../util/errors";

/** Longest file-name stem a created note gets (before "-2" and ".md"). */
export const MAX_SLUG_CHARS = 60;

/**
 * A file-name stem for a topic: "Machine Learning Basics" → "machine-learning-basics". Letters of any
 * script survive (a Japanese or Greek topic keeps its name); accents are dropped; cut at a word boundary.
 */
export function slugify(text: string): string {
  const slug = text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "");
  // Windows refuses these names whatever the extension ("con.md").
  if (/^(?:con|prn|aux|nul|com\d|lpt\d)$/.test(slug)) return `${slug}-note`;
  if (slug.length <= MAX_SLUG_CHARS) return slug || "note";
  const cut = slug.slice(0, MAX_SLUG_CHARS + 1);
  const lastDash = cut.lastIndexOf("-");
  return (lastDash > 10 ? cut.slice(0, lastDash) : cut.slice(0, MAX_SLUG_CHARS)).replace(/-+$/, "");
}

/**
 * A user-given vault-relative path, normalized ("/Notes//AI/" → "Notes/AI") and checked by the shared
 * vault path policy (no "..", no absolute paths, nothing in the config folder, .krypton or other hidden
 * folders, no characters notes cannot have). A leading "/" or backslashes are accepted as a user's way
 * of writing a vault path. Throws AgentError("invalid-input") with the policy's plain reason.
 */
export function normalizeVaultPath(raw: string, configDir: string, what: "folder" | "note path"): string {
  const input = raw.trim().replace(/\\/g, "/").replace(/^\/+(?=[^/])/, "");
  if (input === "" || input === "/") return "";
  try {
    return toVaultRelativePath(input, { configDir }, what);
  } catch (err) {
    if (err instanceof VaultPathError) throw new AgentError(err.message, "invalid-input");
    throw err;
  }
}

/** "Notes/AI" + "ml" + 2 → "Notes/AI/ml-2.md"; suffix 0 means none. */
export function notePathFor(folder: string, slug: string, suffix: number): string {
  const name = suffix === 0 ? `${slug}.md` : `${slug}-${suffix}.md`;
  return folder ? `${folder}/${name}` : name;
}

/** "Notes/AI/ml.md" → "Notes/AI"; "" for the vault root. */
export function folderOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

/** "Notes/AI/ml.md" → "ml". */
export function baseNameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/i, "");
}

/** An Obsidian wiki link to a note, with its title as the label when it differs from the file name. */
export function noteLink(path: string, title?: string): string {
  const target = path.replace(/\.md$/i, "").replace(/[[\]|#^]/g, " ");
  const label = title?.replace(/[[\]|]/g, " ").replace(/\s+/g, " ").trim();
  return label && label !== baseNameOf(path) ? `[[${target}|${label}]]` : `[[${target}]]`;
}

/**
 * Saves content as a new note named folder/slug.md, or slug-1.md, slug-2.md, … when taken.
 * Never overwrites: VaultPort.createNote refuses, and a name taken meanwhile moves on to the next suffix.
 * Returns the path, or null when no free name was found within `attempts`.
 */
export async function createUniqueNote(vault: VaultPort, folder: string, slug: string, content: string, attempts = 1000): Promise<string | null> {
  for (let suffix = 0; suffix < attempts; suffix++) {
    const path = notePathFor(folder, slug, suffix);
    if (await vault.exists(path)) continue;
    try {
      await vault.createNote(path, content);
      return path;
    } catch (err) {
      if ((err as Error | null)?.name === "NoteExistsError") continue;
      throw new Error(`Could not save the note at ${path}: ${errorMessage(err)}`);
    }
  }
  return null;
}
