type NumberArray = Float32Array | Int32Array | Uint32Array | Uint8Array;

/** A new array of the same kind with `length` entries: the first ones copied from `array`, any others zero. */
export function resized<T extends NumberArray>(array: T, length: number): T {
  const copy = new (array.constructor as new (length: number) => T)(length);
  copy.set(array.length > length ? array.subarray(0, length) : array);
  return copy;
}
