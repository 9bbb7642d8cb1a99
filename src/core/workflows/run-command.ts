/** `/run <flow> <input>` as typed in a chat (the chat view and `krypton chat`): the flow may be quoted. */
export function parseRunCommand(text: string): { ref: string; input: string } | null {
  const match = /^\/run(?:\s+([\s\S]*))?$/i.exec(text.trim());
  if (!match) return null;
  const rest = (match[1] ?? "").trim();
  const quoted = /^(["'])(.*?)\1\s*([\s\S]*)$/.exec(rest);
  if (quoted) return { ref: quoted[2], input: quoted[3].trim() };
  const space = rest.search(/\s/);
  return space < 0 ? { ref: rest, input: "" } : { ref: rest.slice(0, space), input: rest.slice(space + 1).trim() };
}
