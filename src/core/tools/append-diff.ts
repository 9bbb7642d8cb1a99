/**
 * A unified diff for an append: the note's last lines as context, then the added lines. What the user
 * approves in the chat view and the CLI.
 */
export function appendDiff(path: string, before: string, added: string, contextLines = 3): string {
  const oldLines = before === "" ? [] : before.replace(/\n$/, "").split("\n");
  const newLines = added.replace(/\n$/, "").split("\n");
  // A note without a final newline gets one first: shown as the last line changing from "no newline".
  const context = oldLines.slice(Math.max(0, oldLines.length - contextLines));
  const start = oldLines.length - context.length + 1;
  // Only the newline that ends such a last line is not a line of its own: a blank line the text starts with is.
  const endsLastLine = before !== "" && !before.endsWith("\n") && newLines[0] === "";
  const addedBody = endsLastLine ? newLines.slice(1) : newLines;
  const header = `@@ -${start},${context.length} +${start},${context.length + addedBody.length} @@`;
  return [`--- ${path}`, `+++ ${path}`, header, ...context.map((l) => ` ${l}`), ...addedBody.map((l) => `+${l}`)].join("\n");
}
