/** Short random ids for conversations and messages: time-ordered, safe as file names. */
export function newId(prefix: string, now: number): string {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  const random = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${prefix}-${now.toString(36)}-${random}`;
}

/** Ids become file names under .krypton/chat/: only these characters, so no path can escape. */
export function isSafeId(id: string): boolean {
  return /^[A-Za-z0-9_-]{1,80}$/.test(id);
}
