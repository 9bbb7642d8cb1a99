import { packedVectors, vectorsInOneBuffer, vectorViews } from "../../../src/core/ports/embedder";

describe("vectorsInOneBuffer", () => {
  it("copies equal-length rows into views of one Float32Array, in order", () => {
    const rows = [[1, 2, 3], [4, 5, 6], new Float32Array([7, 8, 9])];
    const vectors = vectorsInOneBuffer(rows, 3);
    expect(vectors.map((v) => Array.from(v))).toEqual([[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
    expect(new Set(vectors.map((v) => v.buffer)).size).toBe(1);
    expect(vectors[0].buffer.byteLength).toBe(9 * 4);
    // Each view is its own row: writing one leaves the others alone.
    vectors[1][0] = 40;
    expect(Array.from(vectors[0])).toEqual([1, 2, 3]);
    expect(Array.from(vectors[2])).toEqual([7, 8, 9]);
    expect(vectorsInOneBuffer([], 768)).toEqual([]);
  });

  it("packs rows back to back and views a packed buffer without copying", () => {
    const all = packedVectors([[1, 2], [3, 4]], 2);
    expect(Array.from(all)).toEqual([1, 2, 3, 4]);
    const views = vectorViews(all, 2);
    expect(views.map((v) => Array.from(v))).toEqual([[1, 2], [3, 4]]);
    all[3] = 9;
    expect(views[1][1]).toBe(9);
    expect(vectorViews(new Float32Array(0), 768)).toEqual([]);
  });
});
