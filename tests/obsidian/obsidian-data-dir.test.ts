/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
import { App, FileSystemAdapter, Platform, Plugin } from "../support/obsidian-stub";
import { createObsidianHost } from "../../src/obsidian/host/obsidian-host";
import { silentLogger } from "../../src/core/ports/logger";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { ObsidianDataDir } from "../../src/obsidian/host/obsidian-data-dir";
import { promises as fs } from "node:fs";
import { join } from "node:path";

let temp: TempVault;
let adapter: FileSystemAdapter;
let data: ObsidianDataDir;

beforeEach(async () => {
  temp = await makeTempVault({ "Note.md": "# Note" });
  adapter = new App(temp.root).vault.adapter;
  data = new ObsidianDataDir(adapter as never);
});
afterEach(() => temp.cleanup());

const onDisk = (p: string) => fs.readdir(join(temp.root, ".krypton", ...p.split("/")).replace(/\/$/, ""));

test("missing files read as null; the folder is created on first write", async () => {
  expect(await data.read("index/manifest.json")).toBeNull();
  expect(await data.readText("index/manifest.json")).toBeNull();
  expect(await data.list("index")).toEqual([]);
  expect(await data.mtime("index/manifest.json")).toBeNull();
  await data.writeAtomic("index/manifest.json", '{"v":1}');
  expect(await temp.read(".krypton/index/manifest.json")).toBe('{"v":1}');
  expect(await data.readText("index/manifest.json")).toBe('{"v":1}');
  expect(await data.mtime("index/manifest.json")).toBeGreaterThan(0);
});

test("binary data round-trips exactly, including a view into a larger buffer", async () => {
  const big = new Uint8Array([9, 9, 1, 2, 3, 255, 0, 9]);
  await data.writeAtomic("index/vectors-0.bin", big.subarray(2, 7));
  expect(Array.from((await data.read("index/vectors-0.bin"))!)).toEqual([1, 2, 3, 255, 0]);
});

test("writeAtomic writes a temp file and renames it; replacing removes the old file only then", async () => {
  await data.writeAtomic("chat/index.json", "first");
  await data.writeAtomic("chat/index.json", "second");
  expect(await data.readText("chat/index.json")).toBe("second");
  // Both writes went through a rename from a temp file onto the target.
  expect(adapter.renames).toHaveLength(3); // first: 1 rename; second: refused, then remove + rename
  for (const [from, to] of adapter.renames) {
    expect(to).toBe(".krypton/chat/index.json");
    expect(from).toMatch(/^\.krypton\/chat\/index\.json\.[0-9a-f]+\.tmp$/);
  }
  expect(await onDisk("chat")).toEqual(["index.json"]); // no temp files left behind
});

test("a failed rename leaves the old file intact and no temp file behind", async () => {
  await data.writeAtomic("index/manifest.json", "good");
  class BrokenRename extends FileSystemAdapter {
    override async rename(): Promise<void> {
      throw new Error("EIO: disk error");
    }
  }
  const broken = new ObsidianDataDir(new BrokenRename(temp.root) as never);
  await fs.rm(join(temp.root, ".krypton/index/manifest.json")); // target absent: the error must surface
  await expect(broken.writeAtomic("index/manifest.json", "new")).rejects.toThrow("EIO");
  expect(await onDisk("index")).toEqual([]);
});

test("list names the files in a folder (temp files included, for clean-up; folders not); createExclusive refuses an existing file", async () => {
  await data.writeAtomic("index/a.bin", new Uint8Array([1]));
  await data.writeAtomic("index/sub/b.bin", new Uint8Array([2]));
  await fs.writeFile(join(temp.root, ".krypton/index/c.bin.abc123.tmp"), "partial");
  expect(await data.list("index")).toEqual(["a.bin", "c.bin.abc123.tmp"]);

  expect(await data.createExclusive("index.lock", "pid 1")).toBe(true);
  expect(await data.createExclusive("index.lock", "pid 2")).toBe(false);
  expect(await data.readText("index.lock")).toBe("pid 1");
  await data.remove("index.lock");
  await data.remove("index.lock"); // already gone: no error
  expect(await data.readText("index.lock")).toBeNull();
});

test("paths cannot leave .krypton", async () => {
  await expect(data.writeAtomic("../Note.md", "overwritten")).rejects.toThrow("Invalid data path");
  await expect(data.read("index/../../Note.md")).rejects.toThrow("Invalid data path");
  expect(await temp.read("Note.md")).toBe("# Note");
});

class TestPlugin extends Plugin {}
describe("a folder where an index file belongs (as FsDataDir: removed when empty, named when not)", () => {
  for (const file of ["index/manifest.json", "index/shard-0-1.bin"]) {
    test(`an empty one at ${file} is removed and the save goes ahead; no temp file is left`, async () => {
      await fs.mkdir(join(temp.root, ".krypton", file), { recursive: true });
      await expect(data.readText(file)).rejects.toThrow(`.krypton/${file} is a folder, not a file`);
      await expect(data.read(file)).rejects.toThrow(`.krypton/${file} is a folder, not a file`);
      await data.writeAtomic(file, "saved");
      expect(await data.readText(file)).toBe("saved");
      expect(await onDisk("index")).toEqual([file.slice("index/".length)]);
    });

    test(`one with files in it at ${file} is left alone, and the error names it, not a temp file`, async () => {
      await fs.mkdir(join(temp.root, ".krypton", file), { recursive: true });
      await fs.writeFile(join(temp.root, ".krypton", file, "mine.txt"), "keep me\n");
      for (let run = 0; run < 2; run++) {
        const err = await data.writeAtomic(file, "saved").then(() => null, (e: unknown) => e as Error);
        expect(err?.message).toBe(`cannot write .krypton/${file}: it is a folder with files in it, where Krypton keeps a file; move or remove that folder`);
      }
      expect(await fs.readFile(join(temp.root, ".krypton", file, "mine.txt"), "utf8")).toBe("keep me\n");
      expect(await onDisk("index")).toEqual([file.slice("index/".length)]); // no temp file beside it
    });
  }

  test("a ranged read on desktop (Node's fs) names the folder too", async () => {
    const plugin = new TestPlugin(new App(temp.root) as never, { id: "krypton" } as never);
    const host = createObsidianHost(plugin as never, { logger: silentLogger, ollamaUrl: () => "http://127.0.0.1:1" });
    await fs.mkdir(join(temp.root, ".krypton/index/shard-0-1.bin"), { recursive: true });
    await expect(host.data.read("index/shard-0-1.bin", { offset: 0, length: 4 })).rejects.toThrow(".krypton/index/shard-0-1.bin is a folder, not a file");
  });
});


describe("reads of part of a file", () => {
  const bytes = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7) & 255);
  const countWholeReads = (a: FileSystemAdapter): { n: number } => {
    const counter = { n: 0 };
    const whole = a.readBinary.bind(a);
    a.readBinary = (path: string) => {
      counter.n++;
      return whole(path);
    };
    return counter;
  };

  afterEach(() => {
    Platform.isDesktopApp = true;
  });

  test("on desktop the host reads ranges and reads in place through Node's fs, never the whole file", async () => {
    const plugin = new TestPlugin(new App(temp.root) as never, { id: "krypton" } as never);
    const host = createObsidianHost(plugin as never, { logger: silentLogger, ollamaUrl: () => "http://127.0.0.1:1" });
    await host.data.writeAtomic("index/shard-0-1.bin", bytes);
    const whole = countWholeReads(plugin.app.vault.adapter as unknown as FileSystemAdapter);

    expect(Array.from((await host.data.read("index/shard-0-1.bin", { offset: 100_000, length: 5 }))!)).toEqual(Array.from(bytes.subarray(100_000, 100_005)));
    // A range running past the end comes back short, as FsDataDir's does.
    expect((await host.data.read("index/shard-0-1.bin", { offset: 299_998, length: 10 }))!.length).toBe(2);
    const target = new Uint8Array(1000);
    expect(host.data.readInto).toBeDefined();
    expect(await host.data.readInto!("index/shard-0-1.bin", 250_000, target)).toBe(1000);
    expect(Array.from(target)).toEqual(Array.from(bytes.subarray(250_000, 251_000)));
    expect(await host.data.readInto!("index/shard-0-1.bin", 299_500, target)).toBe(500);
    // Missing files read as null, like every other read of the port.
    expect(await host.data.read("index/missing.bin", { offset: 0, length: 4 })).toBeNull();
    expect(await host.data.readInto!("index/missing.bin", 0, target)).toBeNull();
    await expect(host.data.readInto!("../Note.md", 0, target)).rejects.toThrow("Invalid data path");
    expect(whole.n).toBe(0);
  });

  test("on mobile (no Node) a range is cut from the whole file and nothing reads in place", async () => {
    Platform.isDesktopApp = false;
    const plugin = new TestPlugin(new App(temp.root) as never, { id: "krypton" } as never);
    const host = createObsidianHost(plugin as never, { logger: silentLogger, ollamaUrl: () => "http://127.0.0.1:1" });
    await host.data.writeAtomic("index/shard-0-1.bin", bytes);
    const whole = countWholeReads(plugin.app.vault.adapter as unknown as FileSystemAdapter);
    expect(host.data.readInto).toBeUndefined();
    expect(Array.from((await host.data.read("index/shard-0-1.bin", { offset: 7, length: 3 }))!)).toEqual([49, 56, 63]);
    expect(await host.data.read("index/missing.bin", { offset: 0, length: 4 })).toBeNull();
    expect(whole.n).toBe(1);
  });
});
