/** Node's error codes, read the one way every Node adapter reads them. No imports: the plugin loads this on desktop. */
export function isCode(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as { code?: string }).code === code;
}

/** Nothing at the path: a file in the way of its folder (ENOTDIR) means the file does not exist either. */
export function isMissing(err: unknown): boolean {
  return isCode(err, "ENOENT") || isCode(err, "ENOTDIR");
}
