import { readFileSync } from "node:fs";
import { join } from "node:path";
import { dotKernel, jsDots, jsNorms, quantizeInto } from "../../../src/core/indexing/int8-vectors";
import { INT8_DOT_WASM } from "../../../src/core/indexing/wasm/int8-dot-wasm";
import { PartChecksum, partChecksum } from "../../../src/core/indexing/checksum";
import { VectorStore } from "../../../src/core/indexing/vector-store";

describe("int8 vectors", () => {
  it("quantizes a unit vector so its largest component is ±127 and decodes within half a step", () => {
    const v = [0.6, -0.8, 0, 0.01];
    const codes = new Int8Array(6);
    const scale = quantizeInto(v, 0, 4, codes, 2);
    expect(Array.from(codes.subarray(2))).toEqual([95, -127, 0, 2]);
    expect(codes[0]).toBe(0);
    v.forEach((x, i) => expect(Math.abs(codes[2 + i] * scale - x)).toBeLessThanOrEqual(scale / 2 + 1e-9));
    expect(quantizeInto([0, 0], 0, 2, codes, 0)).toBe(0);
  });

  it("the WebAssembly kernel and the JavaScript fallback give the same int32 dot products, extremes included", () => {
    const stride = 48;
    const n = 37;
    const memory = new WebAssembly.Memory({ initial: 1 });
    const bytes = new Int8Array(memory.buffer);
    let seed = 11;
    const rnd = () => (seed = (seed * 48271) % 2147483647);
    const queryAt = 0;
    const codesAt = 64;
    for (let i = 0; i < stride; i++) bytes[queryAt + i] = i % 2 === 0 ? -128 : 127;
    for (let i = 0; i < n * stride; i++) bytes[codesAt + i] = (rnd() % 256) - 128;
    for (let i = 0; i < stride; i++) bytes[codesAt + i] = -128; // a row of extremes: no overflow in int32
    const reference = Array.from({ length: n }, (_, v) => {
      let dot = 0;
      for (let i = 0; i < stride; i++) dot += bytes[codesAt + v * stride + i] * bytes[queryAt + i];
      return dot;
    });
    const kernel = dotKernel(memory);
    expect(kernel.simd).toBe(true);
    kernel.dots(codesAt, queryAt, n, stride, 8192);
    expect(Array.from(new Int32Array(memory.buffer, 8192, n))).toEqual(reference);
    jsDots(memory)(codesAt, queryAt, n, stride, 16384);
    expect(Array.from(new Int32Array(memory.buffer, 16384, n))).toEqual(reference);
    // Sums of squares (a stored vector's length), both ways.
    const squares = Array.from({ length: n }, (_, v) => {
      let sum = 0;
      for (let i = 0; i < stride; i++) sum += bytes[codesAt + v * stride + i] ** 2;
      return sum;
    });
    kernel.norms(codesAt, n, stride, 24576);
    expect(Array.from(new Int32Array(memory.buffer, 24576, n))).toEqual(squares);
    jsNorms(memory)(codesAt, n, stride, 32768);
    expect(Array.from(new Int32Array(memory.buffer, 32768, n))).toEqual(squares);
  });

  it("the kernel's checksum lanes equal partChecksum's, whatever lane the codes start in", () => {
    const memory = new WebAssembly.Memory({ initial: 1 });
    const kernel = dotKernel(memory);
    expect(kernel.mix).not.toBeNull();
    const bytes = new Uint8Array(memory.buffer, 64, 4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 97 + 13) & 255;
    for (const lead of [0, 4, 8, 12, 20]) {
      const before = new Uint8Array(lead).fill(7);
      const sum = new PartChecksum(lead + bytes.length);
      sum.update(before);
      sum.updateWith(bytes.length / 4, (rotated) => {
        new Int32Array(memory.buffer, 0, 4).set(rotated);
        kernel.mix!(64, bytes.length / 16, 0);
        rotated.set(new Int32Array(memory.buffer, 0, 4));
      });
      const whole = new Uint8Array(lead + bytes.length);
      whole.set(before);
      whole.set(bytes, lead);
      expect(sum.digest()).toBe(partChecksum(whole));
    }
  });

  it("a vector store checks codes written in place with the same checksum as the bytes on disk", () => {
    const store = new VectorStore();
    store.reset(32);
    store.reserve(10, 32);
    const placed = store.appendInPlace(10, 32)!;
    for (let i = 0; i < placed.codes.length; i++) placed.codes[i] = (i * 31) & 255;
    const scales = new Uint8Array(40).fill(3);
    const sum = new PartChecksum(40 + placed.codes.length);
    sum.update(scales);
    store.checksumCodes(placed.first, 10, sum);
    const disk = new Uint8Array(40 + placed.codes.length);
    disk.set(scales);
    disk.set(placed.codes, 40);
    expect(sum.digest()).toBe(partChecksum(disk));
  });

  it("the shipped module is the compiled int8-dot.wat (run `node scripts/build-wasm.mjs` after editing it)", async () => {
    const script = (await import(join(__dirname, "../../../scripts/build-wasm.mjs"))) as { compileInt8Dot(root: string): Promise<Uint8Array> };
    const compiled = await script.compileInt8Dot(join(__dirname, "../../.."));
    expect(Array.from(INT8_DOT_WASM)).toEqual(Array.from(compiled));
    expect(readFileSync(join(__dirname, "../../../src/core/indexing/wasm/int8-dot.wat"), "utf8")).toContain("i32x4.dot_i16x8_s");
  });
});
