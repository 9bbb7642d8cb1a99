import { readFileSync } from "node:fs";
import { join } from "node:path";
import { codeAt, dotKernel, jsDots, jsNorms, packInt8, packInto, quantizeQueryInto, rowBytes } from "../../../src/core/indexing/vector-codes";
import { VECTOR_DOT_WASM } from "../../../src/core/indexing/wasm/vector-dot-wasm";
import { PartChecksum, partChecksum } from "../../../src/core/indexing/checksum";
import { VectorStore } from "../../../src/core/indexing/vector-store";
import { seededRandom } from "../../support/seeded-random";

describe("vector codes", () => {
  it("packs a unit vector into 4-bit codes (largest component ±7) in 16-byte groups of 32 dimensions, decoded within half a step", () => {
    const dim = 40;
    const v = new Float32Array(dim);
    v[0] = 0.6;
    v[1] = -0.05;
    v[16] = -0.7;
    v[17] = 0.2;
    v[33] = 0.3;
    v[39] = -0.1;
    expect(rowBytes(dim)).toBe(32);
    expect(rowBytes(32)).toBe(16);
    expect(rowBytes(768)).toBe(384);
    const codes = new Int8Array(8 + 32).fill(99);
    const scale = packInto(v, 0, dim, codes, 8);
    expect(scale).toBeCloseTo(0.7 / 7, 6);
    expect(Array.from(codes.subarray(0, 8))).toEqual(new Array(8).fill(99));
    const decoded = Array.from({ length: dim }, (_, i) => codeAt(codes, 8, i));
    expect(decoded[16]).toBe(-7);
    expect(decoded[0]).toBe(6);
    expect(decoded[17]).toBe(2);
    expect(decoded[33]).toBe(3);
    // Dimension 0 in the low nibble of the first byte, 16 in its high nibble; 33 in the second group.
    expect(codes[8] & 15).toBe(6);
    expect(codes[8] >> 4).toBe(-7);
    expect(codes[8 + 16 + 1] & 15).toBe(3);
    v.forEach((x, i) => expect(Math.abs(decoded[i] * scale - x)).toBeLessThanOrEqual(scale / 2 + 1e-7));
    // Padding (dimensions 40..63) stays zero.
    for (let i = dim; i < 64; i++) expect(codeAt(codes, 8, i)).toBe(0);
    expect(packInto([0, 0], 0, 2, codes, 8)).toBe(0);
    expect(Array.from(codes.subarray(8, 24))).toEqual(new Array(16).fill(0));
  });

  it("quantizes a query to int8 (largest component ±127)", () => {
    const codes = new Int8Array(6);
    const scale = quantizeQueryInto([0.6, -0.8, 0, 0.01], 0, 4, codes, 2);
    expect(Array.from(codes.subarray(2))).toEqual([95, -127, 0, 2]);
    expect(codes[0]).toBe(0);
    expect(scale).toBeCloseTo(0.8 / 127, 7);
    expect(quantizeQueryInto([0, 0], 0, 2, codes, 0)).toBe(0);
  });

  it("packs int8 codes of an older index into 4-bit codes that decode to the same vector within a step", () => {
    const dim = 48;
    const random = seededRandom(5);
    const int8 = new Int8Array(2 * dim);
    const scales = new Float32Array([0.004, 0.006]);
    for (let i = 0; i < int8.length; i++) int8[i] = Math.round(random() * 254 - 127);
    const packed = packInt8(int8, scales, 2, dim);
    expect(packed.codes.length).toBe(2 * rowBytes(dim));
    for (let v = 0; v < 2; v++) {
      for (let i = 0; i < dim; i++) {
        const original = int8[v * dim + i] * scales[v];
        expect(Math.abs(codeAt(packed.codes, v * rowBytes(dim), i) * packed.scales[v] - original)).toBeLessThanOrEqual(packed.scales[v] / 2 + 1e-6);
      }
    }
  });

  it("the WebAssembly kernel and the JavaScript fallback give the same int32 dot products as decoding each code, extremes included", () => {
    const stride = 48; // 96 dimensions
    const n = 37;
    const memory = new WebAssembly.Memory({ initial: 1 });
    const bytes = new Int8Array(memory.buffer);
    const random = seededRandom(11);
    const queryAt = 0;
    const codesAt = 128;
    for (let i = 0; i < 2 * stride; i++) bytes[queryAt + i] = i % 3 === 0 ? -128 : i % 3 === 1 ? 127 : Math.round(random() * 254 - 127);
    for (let i = 0; i < n * stride; i++) bytes[codesAt + i] = Math.floor(random() * 256) - 128;
    for (let i = 0; i < stride; i++) bytes[codesAt + i] = -120; // 0x88: −8 in both nibbles, against ±128: no overflow
    const code = (v: number, d: number) => codeAt(bytes, codesAt + v * stride, d);
    const reference = Array.from({ length: n }, (_, v) => {
      let dot = 0;
      for (let d = 0; d < 2 * stride; d++) dot += code(v, d) * bytes[queryAt + d];
      return dot;
    });
    expect(reference[0]).toBe(-8 * Array.from(bytes.subarray(queryAt, queryAt + 2 * stride)).reduce((a, b) => a + b, 0));
    const kernel = dotKernel(memory);
    expect(kernel.simd).toBe(true);
    kernel.dots(codesAt, queryAt, n, stride, 8192);
    expect(Array.from(new Int32Array(memory.buffer, 8192, n))).toEqual(reference);
    jsDots(memory)(codesAt, queryAt, n, stride, 16384);
    expect(Array.from(new Int32Array(memory.buffer, 16384, n))).toEqual(reference);
    // Sums of squared codes (a stored vector's length), both ways.
    const squares = Array.from({ length: n }, (_, v) => {
      let sum = 0;
      for (let d = 0; d < 2 * stride; d++) sum += code(v, d) ** 2;
      return sum;
    });
    expect(squares[0]).toBe(64 * 2 * stride);
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

  it("a vector store normalizes what it takes and every query: providers may hand back vectors of any length", () => {
    // Gemini's embeddings cut to 768 dimensions are not unit length; the store is the one place that scales them.
    const store = new VectorStore();
    const long = store.add([30, 40, 0, 0]);
    const short = store.add([0, 0.001, 0, 0]);
    const hits = store.search([0.6, 0.8, 0, 0], 2);
    expect(hits.slots[0]).toBe(long);
    expect(hits.scores[0]).toBeCloseTo(1, 1);
    expect(store.cosine(long, [3, 4, 0, 0])).toBeCloseTo(1, 1);
    expect(store.cosine(short, [0, 500, 0, 0])).toBeCloseTo(1, 1);
    expect(store.cosine(long, [0, 0, 7, 0])).toBeCloseTo(0, 1);
  });

  it("a vector store checks codes written in place with the same checksum as the bytes on disk", () => {
    const store = new VectorStore();
    store.reset(32);
    store.reserve(10, 32);
    const placed = store.appendInPlace(10, 32)!;
    expect(placed.codes.length).toBe(10 * rowBytes(32));
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

  it("the shipped module is the compiled vector-dot.wat (run `node scripts/build-wasm.mjs` after editing it)", async () => {
    const script = (await import(join(__dirname, "../../../scripts/build-wasm.mjs"))) as { compileVectorDot(root: string): Promise<Uint8Array> };
    const compiled = await script.compileVectorDot(join(__dirname, "../../.."));
    expect(Array.from(VECTOR_DOT_WASM)).toEqual(Array.from(compiled));
    expect(readFileSync(join(__dirname, "../../../src/core/indexing/wasm/vector-dot.wat"), "utf8")).toContain("i32x4.dot_i16x8_s");
  });
});
