/**
 * Baseline (b): the practical limit for exact vector search in JavaScript — one pass over one contiguous
 * Float32Array with a 4-way unrolled dot product, keeping the top k in a small sorted buffer.
 */
export interface TopK {
  rows: Int32Array;
  scores: Float32Array;
}

export function bruteForceTopK(vectors: Float32Array, dim: number, query: Float32Array, k: number): TopK {
  const rows = new Int32Array(k).fill(-1);
  const scores = new Float32Array(k).fill(-Infinity);
  const n = vectors.length / dim;
  let worst = -Infinity;
  for (let r = 0; r < n; r++) {
    const base = r * dim;
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    let i = 0;
    for (; i + 3 < dim; i += 4) {
      a0 += vectors[base + i] * query[i];
      a1 += vectors[base + i + 1] * query[i + 1];
      a2 += vectors[base + i + 2] * query[i + 2];
      a3 += vectors[base + i + 3] * query[i + 3];
    }
    for (; i < dim; i++) a0 += vectors[base + i] * query[i];
    const score = a0 + a1 + a2 + a3;
    if (score <= worst) continue;
    // Insert into the sorted buffer (best first).
    let j = k - 1;
    while (j > 0 && scores[j - 1] < score) {
      scores[j] = scores[j - 1];
      rows[j] = rows[j - 1];
      j--;
    }
    scores[j] = score;
    rows[j] = r;
    worst = scores[k - 1];
  }
  return { rows, scores };
}
