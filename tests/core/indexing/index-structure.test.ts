import { promises as fs } from "node:fs";
import { join } from "node:path";
import { indexAndClose, indexDir, makeHarness, SMALL_VAULT, type Harness } from "./index-harness";
import { sealShard, shardLayout as layout, type ShardLayout } from "../../support/shard-layout";

/**
 * Index files whose checksums are valid but whose contents are impossible: the damage is written into a
 * real shard and the manifest's checksum updated to match, so only the structure checks can catch it.
 */
/** Changes the first shard in place and makes the manifest's size and checksum match again. */
async function tamper(h: Harness, change: (s: ShardLayout) => void): Promise<void> {
  const manifestPath = join(indexDir(h), "manifest.json");
  const manifest = JSON.parse(await fs.readFile(manifestPath, "utf8"));
  const entry = manifest.shards[0];
  const path = join(indexDir(h), entry.file);
  const bytes = await fs.readFile(path);
  change(layout(bytes));
  await fs.writeFile(path, bytes);
  sealShard(entry, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  await fs.writeFile(manifestPath, JSON.stringify(manifest));
}

async function editManifest(h: Harness, change: (m: Record<string, unknown> & { shards: unknown[] }) => void): Promise<void> {
  const manifestPath = join(indexDir(h), "manifest.json");
  const manifest = JSON.parse(await fs.readFile(manifestPath, "utf8"));
  change(manifest);
  await fs.writeFile(manifestPath, JSON.stringify(manifest));
}

describe("VaultIndex: structure checks on load (valid checksums, impossible contents)", () => {
  let h: Harness;
  let chunks: number;
  beforeEach(async () => {
    h = await makeHarness(SMALL_VAULT);
    chunks = await indexAndClose(h);
  });
  afterEach(async () => {
    await h.cleanup();
  });

  const damages: [string, (s: ShardLayout) => void, RegExp][] = [
    ["a NaN word weight", (s) => s.view.setFloat32(s.weightsAt, NaN, true), /word weight is impossible \(NaN\)/],
    ["a zero chunk length", (s) => s.view.setFloat32(s.lengthsAt, 0, true), /impossible length \(0\)/],
    [
      "word offsets that go backwards",
      (s) => s.view.setUint32(s.postingStartAt + 4, s.view.getUint32(s.postingStartAt + 8, true) + 1, true),
      /offsets go backwards/,
    ],
    ["a NaN vector scale", (s) => s.view.setFloat32(s.scalesAt, NaN, true), /vector 0 is damaged \(scale NaN\)/],
    ["an all-zero vector", (s) => s.bytes.fill(0, s.codesAt, s.codesAt + s.dim), /vector 0 is damaged \(all zeros\)/],
    ["a vector of impossible length", (s) => s.view.setFloat32(s.scalesAt, 1, true), /vector 0 is damaged \(length \d/],
    [
      "a chunk hash of the wrong type",
      (s) => {
        // Replace the first note's text hashes in the JSON with a number padded to the same length.
        const meta = s.bytes.toString("utf8", s.metaStart, s.metaStart + s.metaLength);
        const parsed = JSON.parse(meta);
        const text = JSON.stringify(parsed.notes[0].x);
        const at = meta.indexOf(text);
        const replacement = "42".padEnd(Buffer.byteLength(text), " ");
        s.bytes.write(replacement, s.metaStart + Buffer.byteLength(meta.slice(0, at)), "utf8");
      },
      /has no text hash/,
    ],
  ];

  it.each(damages)("%s: treated like corruption, the notes re-indexed, the reason said, search works", async (_name, damage, reason) => {
    await tamper(h, damage);
    const index = h.open();
    const status = await index.open();
    expect(status.state).toBe("ready");
    expect(status.rebuiltReason).toMatch(reason);
    expect(status.rebuiltReason).toMatch(/re-indexed/);
    expect(status.chunks).toBe(chunks);
    expect(status.embedded).toBe(chunks);
    const hits = await index.searchNotes("bananas");
    expect(hits[0].path).toBe("B.md");
    for (const hit of hits) expect(Number.isFinite(hit.score)).toBe(true);
    await index.close();
    // Repaired on disk: the next start is clean.
    h.embedder.reset();
    const next = await h.open().open();
    expect(next.rebuiltReason).toBeUndefined();
    expect(next.chunks).toBe(chunks);
    expect(h.embedder.calls).toBe(0);
  });

  it.each([
    ["a negative generation", -3, /invalid generation \(-3\)/],
    ["a fractional generation", 7.5, /invalid generation \(7.5\)/],
    ["a generation that is not a number", "x", /invalid generation \("x"\)/],
  ])("%s is repaired from the shard names, keeping every vector, and saves as a valid file name", async (_name, generation, reason) => {
    await editManifest(h, (m) => (m.generation = generation));
    const index = h.open();
    const status = await index.open();
    expect(status.rebuiltReason).toMatch(reason);
    expect(h.embedder.calls).toBe(0);
    await index.close();
    const files = await fs.readdir(indexDir(h));
    expect(files.filter((f) => f.startsWith("shard-") && !/^shard-\d+-\d+\.bin$/.test(f))).toEqual([]);
    const manifest = JSON.parse(await fs.readFile(join(indexDir(h), "manifest.json"), "utf8"));
    expect(Number.isInteger(manifest.generation) && manifest.generation >= 0).toBe(true);
    const next = await h.open().open();
    expect(next.rebuiltReason).toBeUndefined();
    expect(next.embedded).toBe(chunks);
    expect(h.embedder.calls).toBe(0);
  });

  it("a duplicate shard entry is dropped and said, and not kept on disk", async () => {
    await editManifest(h, (m) => m.shards.push({ ...(m.shards[0] as object) }));
    const index = h.open();
    const status = await index.open();
    expect(status.rebuiltReason).toMatch(/listed 1 shard twice/);
    expect(status.chunks).toBe(chunks);
    expect(h.embedder.calls).toBe(0);
    await index.close();
    const manifest = JSON.parse(await fs.readFile(join(indexDir(h), "manifest.json"), "utf8"));
    const names = manifest.shards.map((s: { file: string }) => s.file);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each([
    ["an empty shard list", (m: { shards: unknown[] }) => (m.shards = []), /lists no shards although 1 shard file exists/],
    ["a removed shard list", (m: { shards?: unknown[] }) => delete m.shards, /manifest is malformed/],
  ])("%s is reported as damage, not a silent re-index", async (_name, change, reason) => {
    await editManifest(h, change as (m: { shards: unknown[] }) => void);
    const status = await h.open().open();
    expect(status.rebuiltReason).toMatch(reason);
    expect(status.chunks).toBe(chunks);
  });
});
