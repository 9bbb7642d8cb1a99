/**
 * Hostile notes (issue 14): files built to make indexing slow or huge. One note of 100,000 headings with a
 * line each, one of 100,000 bare headings, a 10 MB single line and 300,000 list items, beside one ordinary
 * note. The per-note limits (chunks and characters) must keep the build, its memory and the next search small.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Figures, type Measurement, STALL_LIMIT_MS, collectGarbage, now, round, target } from "./bench-kit";
import { openIndex, openUnderProbe } from "./bench-vaults";

export function writeHostileVault(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join("\n");
  writeFileSync(join(dir, "nested-headings.md"), lines(100_000, (i) => `${"#".repeat(1 + (i % 6))} Heading ${i}\nline ${i}`));
  writeFileSync(join(dir, "bare-headings.md"), lines(100_000, (i) => `# Heading ${i}`));
  writeFileSync(join(dir, "one-line.md"), "word ".repeat(2_000_000));
  writeFileSync(join(dir, "list.md"), lines(300_000, (i) => `- item ${i}`));
  writeFileSync(join(dir, "normal.md"), "# Sourdough\n\nFlour, water, salt and a lively starter.\n");
}

export const hostile: Measurement = {
  name: "hostile",
  describe: "hostile notes (100k headings, 10 MB line, 300k list items): keyword-only build time, peak RSS, next search",
  async run(ctx) {
    const dir = join(ctx.workDir, "hostile-vault");
    writeHostileVault(dir);
    collectGarbage();
    const index = openIndex(dir, null);
    const { status, ms: buildMs, lag } = await openUnderProbe(index);
    await index.close();

    // The next process: load and one search.
    collectGarbage();
    const reader = openIndex(dir, null);
    const t1 = now();
    await reader.open();
    const hits = await reader.searchNotes("sourdough starter");
    const searchMs = now() - t1;
    await reader.close();

    const figures: Figures = {
      notes: status.notes,
      chunks: status.chunks,
      notesIndexedInPart: status.partial?.length ?? 0,
      buildSeconds: round(buildMs / 1000),
      peakRssMb: lag.peakRssMb,
      maxStallMs: lag.maxStallMs,
      // Informational: loading is dominated by the full-text index creating a posting list per distinct word
      // (the capped notes still hold ~230k distinct numbers), not by the per-note limits.
      nextLoadAndSearchMs: round(searchMs),
      topHit: hits[0]?.path ?? null,
    };
    return {
      figures,
      targets: [
        target("hostile-build", "indexing the hostile notes < 10 s", buildMs / 1000, "s", buildMs < 10_000),
        target("hostile-peak-rss", "peak RSS while indexing the hostile notes < 1 GB", lag.peakRssMb, "MB", lag.peakRssMb < 1024),
        target("hostile-stall", "longest main-thread stall while indexing the hostile notes < 100 ms", lag.maxStallMs, "ms", lag.maxStallMs < STALL_LIMIT_MS),
      ],
      failures: [],
    };
  },
};
