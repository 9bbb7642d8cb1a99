import { everyNoteExcludedText, folderInTheWayText, type IndexStatus } from "../../core/indexing/index-status";
import { countOf, formatCount } from "../../core/util/text";

/** The status bar's one line: "Indexing 1,234 / 10,000 notes", "Krypton: 10,000 notes indexed", ... */
export function statusBarText(status: IndexStatus): string {
  switch (status.state) {
    case "loading":
      return "Krypton: loading index…";
    case "indexing": {
      const p = status.progress;
      if (!p) return "Krypton: indexing…";
      if (p.phase === "saving") return "Krypton: saving index…";
      const verb = p.phase === "embedding" ? "Embedding" : "Indexing";
      return `${verb} ${formatCount(p.done)} / ${countOf(p.total, "note")}`;
    }
    case "ready":
      return `Krypton: ${countOf(status.notes, "note")} indexed${status.keywordOnly ? " (keyword only)" : ""}`;
    case "error":
      return "Krypton: index error";
    case "empty":
      return "Krypton: index not built";
  }
}

/** The status bar's tooltip: why keyword-only, how many vectors, what failed. */
export function statusBarTooltip(status: IndexStatus): string {
  const lines = [`${countOf(status.notes, "note")}, ${countOf(status.chunks, "chunk")}, ${formatCount(status.embedded)} with vectors`];
  if (status.error) lines.unshift(`${status.error}.`);
  if (status.everyNoteExcludedBy) lines.push(`${everyNoteExcludedText(status.everyNoteExcludedBy)}.`);
  if (status.keywordOnly) {
    // An index that cannot be saved (a newer Krypton's, a read-only vault) embeds nothing: the next line says why.
    const why = status.embedderError ?? (status.writeError ? "notes are not embedded while the index cannot be saved" : "no embedding model is configured");
    lines.push(`Keyword-only search: ${why}`);
  }
  if (status.writeError) lines.push(`Not saved: ${status.writeError}`);
  if (status.failures.length > 0) lines.push(`${countOf(status.failures.length, "note")} could not be indexed`);
  lines.push("Click for details");
  return lines.join("\n");
}

/** Plain-words lines for the "Show index status" dialog. */
export function statusDetails(status: IndexStatus): { label: string; value: string }[] {
  const rows = [
    { label: "State", value: stateLabel(status) },
    { label: "Notes", value: formatCount(status.notes) },
    { label: "Chunks", value: formatCount(status.chunks) },
    { label: "Chunks with vectors", value: formatCount(status.embedded) },
    { label: "Embedding model", value: status.embedder ?? "none (keyword-only search)" },
  ];
  if (status.error) rows.push({ label: "Error", value: status.error });
  if (status.everyNoteExcludedBy) rows.push({ label: "Excluded", value: `${everyNoteExcludedText(status.everyNoteExcludedBy)}.` });
  if (status.progress) rows.push({ label: "Progress", value: `${formatCount(status.progress.done)} / ${formatCount(status.progress.total)} (${status.progress.phase})` });
  if (status.embedderError) rows.push({ label: "Embedding problem", value: status.embedderError });
  if (status.rebuiltReason) rows.push({ label: "Last rebuild", value: status.rebuiltReason });
  if (status.writeError) rows.push({ label: "Not saved", value: `${status.writeError}: the index is kept in memory only` });
  else if (status.heldBy) rows.push({ label: "Written by", value: `${status.heldBy} (this window only reads the index)` });
  if (status.lockNotice) rows.push({ label: "Index lock", value: status.lockNotice });
  for (const folder of status.foldersInTheWay ?? []) rows.push({ label: "Folder in the index", value: folderInTheWayText(folder) });
  for (const p of (status.partial ?? []).slice(0, 20)) rows.push({ label: "Indexed in part", value: `${p.path}: ${p.error}` });
  return rows;
}

function stateLabel(status: IndexStatus): string {
  switch (status.state) {
    case "ready":
      return status.keywordOnly ? "Ready (keyword only)" : "Ready";
    case "indexing":
      return "Indexing";
    case "loading":
      return "Loading";
    case "error":
      return "Error";
    case "empty":
      return "Not built yet";
  }
}

/** One notice for notes that failed, named by file (at most five listed). */
export function failureNoticeText(status: IndexStatus): string | null {
  const n = status.failures.length;
  const partial = status.partial ?? [];
  if (n === 0 && partial.length === 0) return null;
  const lines: string[] = [];
  if (n > 0) {
    lines.push(`Krypton could not index ${countOf(n, "note")}:`, ...status.failures.slice(0, 5).map((f) => `• ${f.path}: ${f.error}`));
    if (n > 5) lines.push(`…and ${n - 5} more (see "Show index status").`);
  }
  // Notes over a per-note limit (chunks or size): named, so the user knows what search cannot see.
  if (partial.length > 0) {
    lines.push(`Krypton indexed ${partial.length === 1 ? "a note" : countOf(partial.length, "note")} only in part:`, ...partial.slice(0, 5).map((p) => `• ${p.path}: ${p.error}`));
    if (partial.length > 5) lines.push(`…and ${partial.length - 5} more (see "Show index status").`);
  }
  return lines.join("\n");
}

/** When the .krypton folder cannot be written (permissions, a file in its place): said once, with what still works. */
export function notSavedNoticeText(status: IndexStatus): string | null {
  return status.writeError ? `Krypton cannot save its index: ${status.writeError}. Search still works; the index is kept in memory only until this is fixed.` : null;
}

export function rebuiltNoticeText(status: IndexStatus): string | null {
  return status.rebuiltReason ? `Krypton rebuilt its index: ${status.rebuiltReason}` : null;
}
