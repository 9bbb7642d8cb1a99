/**
 * The one redaction rule for everything Krypton shows, logs or stores: error messages, log lines, the agent's
 * exchange and steps, CLI output. Every caller passes the secrets it knows (settingsSecrets in settings.ts
 * gathers them all); nothing else in the code base masks secrets on its own.
 */

/** Shorter values are never treated as secrets: masking "dev" or "true" would garble every message. */
export const MIN_SECRET_LENGTH = 4;

const MASK = "***";

/**
 * Replaces every secret with "***": as written and URL-encoded (a key in a query string), longest first
 * (a secret containing another is masked whole). Keys passed as query parameters (?key=…) are masked even
 * when the value is not a known secret.
 */
export function redact(text: string, secrets: readonly (string | undefined)[] = []): string {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret || secret.length < MIN_SECRET_LENGTH) continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
  }
  let out = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) out = out.split(form).join(MASK);
  return out.replace(/([?&](?:key|api_key|apikey|access_token|token)=)[^&\s"'#]+/gi, `$1${MASK}`);
}

/** redact() over a log line's data too: strings, an Error's message, or the JSON of anything else. */
export function redactValue(value: unknown, secrets: readonly (string | undefined)[]): unknown {
  if (value === undefined || value === null) return value;
  if (typeof value === "string") return redact(value, secrets);
  if (value instanceof Error) {
    const copy = new Error(redact(value.message, secrets));
    copy.name = value.name;
    return copy;
  }
  try {
    const json = JSON.stringify(value);
    return json === undefined ? value : (JSON.parse(redact(json, secrets)) as unknown);
  } catch {
    // Not JSON (a cycle, a BigInt): dropped rather than printed unchecked.
    return "(data not shown)";
  }
}
