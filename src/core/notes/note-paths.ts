import { isReservedFileName, toVaultRelativePath, VaultPathError, type VaultPathRules } from "./vault-path-policy";
import type { VaultPort } from "../ports/vault";
import { AgentError } from "./agent-error";
import { errorMessage } from "../util/errors";
import { cutAt } from "../util/text";

/** Longest file-name stem a created note gets (before "-2" and ".md"). */
export const MAX_SLUG_CHARS = 60;

/**
 * Longest readable note name (goals, decks; before " 2" and ".md"). 80 UTF-16 code units are at most 240
 * bytes of UTF-8, so with its suffix the file name stays within the 255 bytes file systems allow.
 */
export const MAX_NAME_CHARS = 80;

/**
 * A file-name stem for a topic: "Machine Learning Basics" → "machine-learning-basics". Letters of any
 * script survive (a Japanese or Greek topic keeps its name); accents are dropped from Latin and Greek letters;
 * cut at a word boundary.
 */
export function slugify(text: string): string {
  const slug = text
    .normalize("NFKD")
    // Accents go from Latin and Greek letters only: elsewhere a mark makes another letter (ド is not ト, й is
    // not и, a Devanagari vowel sign is the vowel), and Hangul must come back together from its parts (NFC).
    .replace(/([\p{Script=Latin}\p{Script=Greek}])\p{M}+/gu, "$1")
    .normalize("NFC")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, "-")
    .replace(/(^|-)\p{M}+/gu, "$1") // a mark with no letter left to sit on
    .replace(/^-+|-+$/g, "");
  if (isReservedFileName(slug)) return `${slug}-note`;
  if (slug.length <= MAX_SLUG_CHARS) return slug || "note";
  const cut = cutAt(slug, MAX_SLUG_CHARS + 1);
  const lastDash = cut.lastIndexOf("-");
  return (lastDash > 10 ? cut.slice(0, lastDash) : cutAt(slug, MAX_SLUG_CHARS)).replace(/-+$/, "");
}

/**
 * A readable file-name stem for a name the user gave (a study goal, a flashcard deck): "Tides: part 1?" →
 * "Tides part 1". The one rule for them on every host: characters notes cannot have ([[links]], #tags and
 * ^blocks included) and control characters become spaces, invisible ones (zero-width, bidi overrides) go,
 * no leading or trailing dots and spaces (hidden files; Windows drops trailing ones), no name Windows
 * reserves, whole characters within MAX_NAME_CHARS. "" when nothing is left: the caller names the fallback.
 */
export function noteNameFor(name: string): string {
  const clean = (text: string) => text.replace(/\s+/g, " ").replace(/^[.\s]+|[.\s]+$/g, "");
  const stem = clean(
    cutAt(
      clean(
        name
          .normalize("NFC")
          .replace(/\p{Cf}+/gu, "")
          .replace(/[\p{Cc}\\/:*?"<>|#^[\]]/gu, " "),
      ),
      MAX_NAME_CHARS,
    ),
  );
  // Windows reserves the part before the first dot ("nul.txt" is "nul"): that part gets the word.
  return isReservedFileName(stem) ? stem.replace(/^[^.]*/, (head) => `${head.trim()} note`) : stem;
}

/**
 * What two user-given names (or note paths) share when they name the same thing: case and spacing aside,
 * in one Unicode form. A disk that ignores case (macOS, Windows) holds one file for "Tides" and "tides",
 * a case-sensitive one two; goals and decks are found by this key so both hosts behave alike.
 */
export function nameKey(name: string): string {
  return name.normalize("NFC").replace(/\s+/g, " ").trim().toLowerCase();
}

/**
 * A folder as the vault spells it, found level by level among the vault's folders (VaultPort.listFolders, empty
 * ones included), case aside: on a disk that ignores case (macOS, Windows) a setting's "Flashcards" is the folder
 * "flashcards", and Obsidian, which knows a folder only by its real spelling, fails to create it again. A level
 * spelled exactly as given, not found, or found in two spellings (a case-sensitive disk holds both) stays as
 * given; below a level not found, the rest stays as given too. One listFolders call per level, no walk.
 */
export async function folderAsSpelled(folder: string, vault: Pick<VaultPort, "listFolders">): Promise<string> {
  if (!folder) return folder;
  const lower = (s: string) => s.normalize("NFC").toLowerCase();
  const wanted = folder.split("/");
  const parts: string[] = [];
  for (const [depth, name] of wanted.entries()) {
    const spellings = (await vault.listFolders(parts.join("/"))).filter((n) => lower(n) === lower(name));
    if (!spellings.length) return [...parts, ...wanted.slice(depth)].join("/");
    parts.push(spellings.length === 1 ? spellings[0] : name);
  }
  return parts.join("/");
}

/**
 * Whether a note path is `folder` or below it, by exact text; "" holds nothing. Pass the folder a setting names
 * through folderAsSpelled first: then what Krypton reads from a folder (goals, decks) is where it writes new
 * notes, whatever the case of the setting.
 */
export function isInFolder(path: string, folder: string): boolean {
  return folder !== "" && (path === folder || path.startsWith(`${folder}/`));
}

/**
 * A user-given vault-relative path, normalized ("/Notes//AI/" → "Notes/AI") and checked by the shared
 * vault path policy (no "..", no absolute paths, nothing in the config folder, .krypton or other hidden
 * folders, no characters notes cannot have; for a write, no name Windows reserves). A leading "/" or
 * backslashes are accepted as a user's way of writing a vault path. Throws AgentError("invalid-input") with
 * the policy's plain reason.
 */
export function normalizeVaultPath(raw: string, configDir: string, what: "folder" | "note path", access: VaultPathRules["access"]): string {
  const input = raw.trim().replace(/\\/g, "/").replace(/^\/+(?=[^/])/, "");
  if (input === "" || input === "/") return "";
  try {
    return toVaultRelativePath(input, { configDir, access }, what);
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
 * Saves content as a new note named folder/slug.md, or slug-1.md, slug-2.md, … when taken, in the folder as the
 * vault spells it (folderAsSpelled: Obsidian cannot create it again in another case on macOS or Windows).
 * Never overwrites: VaultPort.createNote refuses, and a name taken meanwhile moves on to the next suffix.
 * Returns the path, or null when no free name was found within `attempts`.
 */
export async function createUniqueNote(vault: VaultPort, folder: string, slug: string, content: string, attempts = 1000): Promise<string | null> {
  for await (const path of freeNotePaths(vault, folder, slug, attempts)) {
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

/**
 * Where createUniqueNote would save folder/slug now (a preview asking the user's approval names it), or null
 * when no name within `attempts` is free. The creation's own walk, so they agree unless a note takes the name
 * in between (then the creation moves on to the next, never over it).
 */
export async function nextFreeNotePath(vault: Pick<VaultPort, "listFolders" | "exists">, folder: string, slug: string, attempts = 1000): Promise<string | null> {
  for await (const path of freeNotePaths(vault, folder, slug, attempts)) return path;
  return null;
}

/** folder/slug.md, slug-1.md, … in the folder as the vault spells it, each when it does not exist yet. */
async function* freeNotePaths(vault: Pick<VaultPort, "listFolders" | "exists">, folder: string, slug: string, attempts: number): AsyncGenerator<string> {
  const spelled = await folderAsSpelled(folder, vault);
  for (let suffix = 0; suffix < attempts; suffix++) {
    const path = notePathFor(spelled, slug, suffix);
    if (!(await vault.exists(path))) yield path;
  }
}
