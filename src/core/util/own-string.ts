/**
 * A copy of a string that holds its own characters. V8 makes a substring of 13 or more characters a view
 * into its parent, so a word, tag or heading cut from a note and kept by the index would keep the whole
 * note (or chunk text) alive. Measured while indexing a large vault: word-cache keys and index terms kept
 * chunk texts alive, note tags kept whole notes alive. JSON.parse builds a new flat string.
 */
export function ownString(s: string): string {
  return s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);
}
