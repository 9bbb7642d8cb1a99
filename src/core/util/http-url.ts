/**
 * Whether an address a user typed can take Krypton's requests: an http(s) URL with a valid port. The one
 * check for the CLI's flags and environment and the settings tab, so neither host keeps an address the
 * other would refuse.
 */
export function isHttpUrl(value: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(value.trim());
  } catch {
    return false; // no scheme ("localhost:11434" parses as one, below), a port above 65535, spaces
  }
  return parsed.protocol === "http:" || parsed.protocol === "https:";
}
