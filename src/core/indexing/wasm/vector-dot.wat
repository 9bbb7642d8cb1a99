;; Dot products for the vector store (vector-store.ts, vector-codes.ts), compiled to vector-dot-wasm.ts by
;; `node scripts/build-wasm.mjs`. One call scores `n` rows of 4-bit codes lying `stride` bytes apart (stride
;; a multiple of 16; each 16-byte group holds 32 dimensions: the low nibbles are the first 16, the high
;; nibbles the next 16) against one int8 query of 2 × stride bytes: out[v] = sum(code[v][i] * query[i]).
;; Why WASM: the same scan in JavaScript is ~25x slower (no SIMD), and at 500k chunks it is the whole query.
;; `norms` writes each row's sum of squared codes (loading checks every stored vector's length with it).
;; `mix` runs partChecksum's four lanes (checksum.ts) over `blocks` 16-byte blocks: a search checks the
;; 200 MB of vector codes it reads where they land, ~5x faster than the same lanes in JavaScript.
(module
  (import "env" "memory" (memory 1))
  (func (export "dots") (param $codes i32) (param $query i32) (param $n i32) (param $stride i32) (param $out i32)
    (local $v i32) (local $i i32) (local $q i32) (local $acc v128) (local $a v128) (local $low v128) (local $high v128) (local $b v128)
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $v) (local.get $n)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $i (i32.const 0))
        (local.set $q (local.get $query))
        (block $row_done
          (loop $row
            (br_if $row_done (i32.ge_u (local.get $i) (local.get $stride)))
            (local.set $a (v128.load (i32.add (local.get $codes) (local.get $i))))
            ;; Sign-extended nibbles: shift the low one up first, then both down arithmetically.
            (local.set $low (i8x16.shr_s (i8x16.shl (local.get $a) (i32.const 4)) (i32.const 4)))
            (local.set $high (i8x16.shr_s (local.get $a) (i32.const 4)))
            (local.set $b (v128.load (local.get $q)))
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $low)) (i16x8.extend_low_i8x16_s (local.get $b)))))
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $low)) (i16x8.extend_high_i8x16_s (local.get $b)))))
            (local.set $b (v128.load offset=16 (local.get $q)))
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $high)) (i16x8.extend_low_i8x16_s (local.get $b)))))
            (local.set $acc (i32x4.add (local.get $acc)
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $high)) (i16x8.extend_high_i8x16_s (local.get $b)))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (local.set $q (i32.add (local.get $q) (i32.const 32)))
            (br $row)))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $v) (i32.const 2)))
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $codes (i32.add (local.get $codes) (local.get $stride)))
        (local.set $v (i32.add (local.get $v) (i32.const 1)))
        (br $each))))
  (func (export "norms") (param $codes i32) (param $n i32) (param $stride i32) (param $out i32)
    (local $v i32) (local $i i32) (local $acc v128) (local $a v128) (local $low v128) (local $high v128)
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $v) (local.get $n)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $i (i32.const 0))
        (block $row_done
          (loop $row
            (br_if $row_done (i32.ge_u (local.get $i) (local.get $stride)))
            (local.set $a (v128.load (i32.add (local.get $codes) (local.get $i))))
            (local.set $low (i16x8.extend_low_i8x16_s (i8x16.shr_s (i8x16.shl (local.get $a) (i32.const 4)) (i32.const 4))))
            (local.set $acc (i32x4.add (local.get $acc) (i32x4.dot_i16x8_s (local.get $low) (local.get $low))))
            (local.set $low (i16x8.extend_high_i8x16_s (i8x16.shr_s (i8x16.shl (local.get $a) (i32.const 4)) (i32.const 4))))
            (local.set $acc (i32x4.add (local.get $acc) (i32x4.dot_i16x8_s (local.get $low) (local.get $low))))
            (local.set $high (i16x8.extend_low_i8x16_s (i8x16.shr_s (local.get $a) (i32.const 4))))
            (local.set $acc (i32x4.add (local.get $acc) (i32x4.dot_i16x8_s (local.get $high) (local.get $high))))
            (local.set $high (i16x8.extend_high_i8x16_s (i8x16.shr_s (local.get $a) (i32.const 4))))
            (local.set $acc (i32x4.add (local.get $acc) (i32x4.dot_i16x8_s (local.get $high) (local.get $high))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $row)))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $v) (i32.const 2)))
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
            (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
        (local.set $codes (i32.add (local.get $codes) (local.get $stride)))
        (local.set $v (i32.add (local.get $v) (i32.const 1)))
        (br $each))))
  (func (export "mix") (param $at i32) (param $blocks i32) (param $state i32)
    (local $v v128) (local $end i32)
    (local.set $v (v128.load (local.get $state)))
    (local.set $end (i32.add (local.get $at) (i32.shl (local.get $blocks) (i32.const 4))))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $v (i32x4.mul (v128.xor (local.get $v) (v128.load (local.get $at))) (v128.const i32x4 0x01000193 0x01000193 0x01000193 0x01000193)))
        (local.set $v (v128.xor (local.get $v) (i32x4.shr_u (local.get $v) (i32.const 15))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $each)))
    (v128.store (local.get $state) (local.get $v))))
