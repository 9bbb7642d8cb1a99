import { close, open, read } from "node:fs";
import type { ByteRange } from "../core/ports/data-dir";
import { orMissing } from "./fs-errors";

// Only node:fs (and fs-errors.ts): the desktop plugin loads this module on its own (obsidian-host.ts), without the CLI's vault
// and its stat worker.

/**
 * Parts of a file by its path on disk, null when the file does not exist: the CLI's data folder reads
 * through these, and so does the desktop plugin's (Obsidian's adapter only reads whole files).
 */
export const diskRanges = {
  read: (file: string, range: ByteRange): Promise<Uint8Array | null> => orMissing(readRange(file, range)),
  readInto: (file: string, offset: number, target: Uint8Array): Promise<number | null> => orMissing(readIntoFile(file, offset, target)),
};

async function readRange(file: string, range: ByteRange): Promise<Uint8Array> {
  const out = new Uint8Array(Math.max(0, range.length));
  const done = await readIntoFile(file, range.offset, out);
  return done === out.length ? out : out.subarray(0, done);
}

/**
 * Fills `target` from `offset` of a file (fewer bytes at its end). Plain callback fs calls: a search reads
 * thousands of small ranges, and FileHandle objects cost several times more per read.
 */
function readIntoFile(file: string, offset: number, target: Uint8Array): Promise<number> {
  return new Promise((settle, reject) => {
    open(file, "r", (openError, fd) => {
      if (openError) return reject(openError);
      let done = 0;
      const finish = (error: Error | null) => close(fd, () => (error ? reject(error) : settle(done)));
      const step = () => {
        if (done >= target.length) return finish(null);
        read(fd, target, done, target.length - done, offset + done, (readError, bytesRead) => {
          if (readError) return finish(readError);
          if (bytesRead === 0) return finish(null);
          done += bytesRead;
          step();
        });
      };
      step();
    });
  });
}
