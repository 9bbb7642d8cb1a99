/**
 * The one test a vector passes before it enters the vector store or ranks a search: the right length,
 * every value a finite float32 (a value beyond ±3.4e38 becomes Infinity once stored), and a length
 * (norm) that is neither zero nor infinite. A vector that fails would score NaN or 0 against everything.
 */
const FLOAT32_MAX = 3.4028234663852886e38;

/** Why a vector is unusable ("NaN at position 3", ...), or null when it is fine. */
export function vectorProblem(vector: ArrayLike<number> | null | undefined, dim: number): string | null {
  if (!vector || typeof vector.length !== "number") return "not a list of numbers";
  if (vector.length === 0) return "empty";
  if (dim > 0 && vector.length !== dim) return `${vector.length} dimensions instead of ${dim}`;
  let norm = 0;
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i];
    if (typeof x !== "number" || Number.isNaN(x)) return `NaN at position ${i}`;
    if (!Number.isFinite(x) || Math.abs(x) > FLOAT32_MAX) return `a value out of range (${x}) at position ${i}`;
    norm += x * x;
  }
  if (norm === 0) return "all zeros";
  if (!Number.isFinite(norm)) return "values too large to normalize";
  return null;
}
