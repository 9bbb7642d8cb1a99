/**
 * The one test a vector passes before it enters the vector store or ranks a search: the right length,
 * every value a finite float32 (a value beyond ±3.4e38 becomes Infinity once stored), and a length
 * (norm) that is neither zero nor infinite. A vector that fails would score NaN or 0 against everything.
 *
 * The values are read once, into a float64 scratch the caller can go on from (readVector). Why not loop
 * over the vector itself: a loop that sees both plain arrays and typed arrays (or holey arrays) loads each
 * value as a boxed heap number, ~6 GB of garbage over the 400 million values of a 100k-note vault, which
 * kept the young generation collecting every ~20 ms and promoted whole batches of vectors with it. One
 * loop per kind of input keeps each load unboxed.
 */
const FLOAT32_MAX = 3.4028234663852886e38;

let scratch = new Float64Array(1024);

/** Why a vector is unusable ("NaN at position 3", ...), or null when it is fine. */
export function vectorProblem(vector: ArrayLike<number> | null | undefined, dim: number): string | null {
  if (!vector || typeof vector.length !== "number") return "not a list of numbers";
  if (scratch.length < vector.length) scratch = new Float64Array(vector.length);
  return readVector(vector, dim, scratch);
}

/**
 * Checks a vector as vectorProblem does while copying its values into `into` (at least as long as the
 * vector): the problem, or null with the values in `into[0 … length)`.
 */
export function readVector(vector: ArrayLike<number> | null | undefined, dim: number, into: Float64Array): string | null {
  if (!vector || typeof vector.length !== "number") return "not a list of numbers";
  const n = vector.length;
  if (n === 0) return "empty";
  if (dim > 0 && n !== dim) return `${n} dimensions instead of ${dim}`;
  if (into.length < n) throw new RangeError(`readVector: room for ${into.length} values, the vector has ${n}`);
  // Only a plain array can hold a non-number; a typed array's values are numbers by construction.
  const notNumber = Array.isArray(vector) ? copyArray(vector as readonly unknown[], into) : ArrayBuffer.isView(vector) ? copyTyped(vector, into) : copyOther(vector, into);
  if (notNumber >= 0) return `NaN at position ${notNumber}`;
  let norm = 0;
  for (let i = 0; i < n; i++) {
    const x = into[i];
    if (Number.isNaN(x)) return `NaN at position ${i}`;
    if (!Number.isFinite(x) || Math.abs(x) > FLOAT32_MAX) return `a value out of range (${x}) at position ${i}`;
    norm += x * x;
  }
  if (norm === 0) return "all zeros";
  if (!Number.isFinite(norm)) return "values too large to normalize";
  return null;
}

/** The three copies below are the same loop on purpose: each sees one kind of input (see the top). */
function copyArray(vector: readonly unknown[], into: Float64Array): number {
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i];
    if (typeof x !== "number") return i;
    into[i] = x;
  }
  return -1;
}

function copyTyped(vector: ArrayLike<number>, into: Float64Array): number {
  for (let i = 0; i < vector.length; i++) into[i] = vector[i];
  return -1;
}

function copyOther(vector: ArrayLike<unknown>, into: Float64Array): number {
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i];
    if (typeof x !== "number") return i;
    into[i] = x;
  }
  return -1;
}
