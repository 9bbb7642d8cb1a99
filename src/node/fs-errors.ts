/** Node's error codes, read the one way every Node adapter reads them. No imports: the plugin loads this on desktop. */
export function isCode(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as { code?: string }).code === code;
}

/** Nothing at the path: a file in the way of its folder (ENOTDIR) means the file does not exist either. */
export function isMissing(err: unknown): boolean {
  return isCode(err, "ENOENT") || isCode(err, "ENOTDIR");
}

/** What `reading` gives, or null when there is nothing at the path (isMissing); other errors are thrown. */
export async function orMissing<T>(reading: Promise<T>): Promise<T | null> {
  try {
    return await reading;
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}

/** A write the file system refused (permissions, a read-only mount), in words; null for any other error. */
export function deniedWrite(err: unknown): string | null {
  return isCode(err, "EACCES") || isCode(err, "EPERM") ? "permission denied" : isCode(err, "EROFS") ? "read-only file system" : null;
}

/**
 * A refused write as that reason alone ("permission denied", code kept), for errors about a note: Node's
 * message names the path it tried, which is a hidden temp file or a folder, never the note. Others as they are.
 */
export function inWordsIfDenied(err: unknown): unknown {
  const why = deniedWrite(err);
  return why ? Object.assign(new Error(why), { code: (err as { code?: string }).code }) : err;
}
