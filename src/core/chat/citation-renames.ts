/**
 * Saved answers keep the vault path each cited note had when they were written. When a note is renamed
 * or moved (Obsidian fires one rename per note, each note of a renamed folder included), the conversation
 * store rewrites those paths with these rules, so a citation still opens its note.
 */

/** One note's rename, as the vault reported it. */
export interface NoteRename {
  from: string;
  to: string;
}

/** `path` after the renames, applied in the order they happened (A→B then B→C gives C). */
export function renamedPath(path: string, renames: readonly NoteRename[]): string {
  let now = path;
  for (const rename of renames) if (now === rename.from) now = rename.to;
  return now;
}

/**
 * Whether a stored file's text may cite one of the renamed notes: a cheap test before parsing it. Krypton
 * writes these files with JSON.stringify, which escapes a path the same way wherever it stands.
 */
export function mayCite(text: string, renames: readonly NoteRename[]): boolean {
  return renames.some((rename) => text.includes(JSON.stringify(rename.from).slice(1, -1)));
}

/**
 * Rewrites the note citations (sources of kind "note") of one stored message as read from disk, in place;
 * true when any changed. Works on the raw JSON, not on the message as the store hands it out: a damaged part
 * the store leaves out when reading must stay in the file as it was. A message still being written (partial)
 * is left to its writer, which would write it again over this change.
 */
export function renameCitations(message: unknown, renames: readonly NoteRename[]): boolean {
  if (typeof message !== "object" || message === null) return false;
  if ((message as { partial?: unknown }).partial === true) return false;
  const sources = (message as { sources?: unknown }).sources;
  if (!Array.isArray(sources)) return false;
  let changed = false;
  for (const source of sources as unknown[]) {
    if (typeof source !== "object" || source === null) continue;
    const s = source as { kind?: unknown; path?: unknown };
    if (s.kind !== "note" || typeof s.path !== "string") continue;
    const path = renamedPath(s.path, renames);
    if (path !== s.path) {
      s.path = path;
      changed = true;
    }
  }
  return changed;
}
