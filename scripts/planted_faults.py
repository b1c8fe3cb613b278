#!/usr/bin/env python3
"""Mutation test of the harness: plants known bugs in copies of steps; each must be caught.

A harness that passes a wrong kernel proves nothing. Each fault below is a small edit of a
step's file (a "mutant"). It is built through the same path as the unmodified step, which is
built and run first with the same command lines and must pass (the negative control: a fault
that "fails" because the build path or the command line is broken proves nothing either).
A fault counts as caught only by the failure it is meant to cause:

  check      exit code 1: the harness's verification rejected the result, at EVERY shape
             of the run (each FAILED line is counted, and its error is reported against the
             FP32-grade limit as the fault's margin)
  cuda       exit code 4: a CUDA error (e.g. a misaligned address)
  racecheck / memcheck
             compute-sanitizer's tool reports an error (exit code 99), where no wrong value
             can show: a race, or a read past the end of A or B whose values never reach C
             (memcheck runs with --padding: reads into the padding after an allocation are
             errors even where another allocation would follow)

Every run uses alpha != 1. The controls and mutants are built by the project's CMake build,
like the steps (scripts/sweep.py's build_variants), for the build's architectures. Run after
CMake has configured the build:

    scripts/planted_faults.py --build build [--steps "27_scaled_small_parts 28_scaled_rows_columns"]
"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import project  # noqa: E402
from sweep import build_variants, step_source  # noqa: E402

SANITIZER_EXIT = 99
MEMCHECK_PADDING = 1 << 20  # bytes after each allocation that memcheck treats as out of bounds
TF32 = ("{ unsigned bits; asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(bits) : \"f\"(X)); "
        "return __uint_as_float(bits); }")

# Shapes (tests/shapes.txt): large K at the suite's K (20000, 16385, 8191), and edge shapes.
LARGE_K = project.shapes("gpu.large_k")
EDGES = project.shapes("faults.edges")
SPECIALS = project.shapes("faults.specials")

# (name, step, [(text in the step, replacement)], [(arguments, expected failure)])
FAULTS = [
    ("off-by-one edge: writes one column past N", "02_refactored",
     [("if (row >= p.M || col >= p.N) return;", "if (row >= p.M || col > p.N) return;")],
     [(f"--check --sizes {EDGES} --alpha 1.5 --beta 0", "check"),
      (f"--check --sizes {EDGES} --alpha 1.5 --beta 0.5", "check")]),
    ("missing element: the last element is never written", "02_refactored",
     [("if (row >= p.M || col >= p.N) return;",
       "if (row >= p.M || col >= p.N || (row == p.M - 1 && col == p.N - 1)) return;")],
     [(f"--check --sizes {EDGES} --alpha 1.5 --beta 0", "check"),
      (f"--check --sizes {EDGES} --alpha 1.5 --beta 0.5", "check")]),
    ("NaN: one element is NaN", "02_refactored",
     [("store_c(p, row, col, acc);", "store_c(p, row, col, row == 0 && col == 0 ? __int_as_float(0x7fc00000) : acc);")],
     [(f"--check --sizes {EDGES} --alpha 1.5 --beta 0.5", "check")]),
    ("beta == 0 reads C: the NaN in C leaks", "02_refactored",
     [("c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * c;", "c = p.alpha * acc + p.beta * c;")],
     [(f"--check --sizes {EDGES} --alpha 1.5 --beta 0", "check")]),
    ("one k product dropped (k = K / 2), at K = 20000, 16385 and 8191", "02_refactored",
     [("for (int k = 0; k < p.K; ++k) acc +=", "for (int k = 0; k < p.K; ++k) if (k != p.K / 2) acc +=")],
     [(f"--check --sizes {LARGE_K} --alpha 1.5 --beta 0.5", "check"),
      (f"--check --sizes {LARGE_K} --alpha -1.25 --beta 0", "check")]),
    ("alpha ignored", "12_double_buffer",
     [("c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * c;", "c = p.beta == 0.0f ? acc : acc + p.beta * c;")],
     [(f"--check --sizes {EDGES},{LARGE_K} --alpha 1.5 --beta 0.5", "check")]),
    ("a middle k tile dropped, at large K", "12_double_buffer",
     [("    for (int k = 0; k < TUNE_SPLIT; ++k) {\n      if (k + 1 < TUNE_SPLIT)",
       "    for (int k = 0; k < TUNE_SPLIT && k_tile != k_tiles / 2; ++k) {\n      if (k + 1 < TUNE_SPLIT)")],
     [(f"--check --sizes {LARGE_K},1024x1024x4096 --alpha 1.5 --beta 0.5", "check")]),
    ("TF32-rounded inputs (cvt.rna.tf32 on every fragment)", "12_double_buffer",
     [("// shared -> registers: this thread's column of A and row of B at k (a_frag, b_frag).",
       "__device__ __forceinline__ float tf32(float X) " + TF32 + "\n"
       "// shared -> registers: this thread's column of A and row of B at k (a_frag, b_frag)."),
      ("a_frag[i] = sA[k][tile_row(thread_y, i)];", "a_frag[i] = tf32(sA[k][tile_row(thread_y, i)]);"),
      ("b_frag[j] = sB[k][tile_col(thread_x, j)];", "b_frag[j] = tf32(sB[k][tile_col(thread_x, j)]);")],
     [(f"--check --sizes {EDGES},{LARGE_K},1024x1024x1024,512x512x4096 --alpha 1.5 --beta 0.5", "check")]),
    ("BF16-rounded inputs", "12_double_buffer",
     [('#include "sgemm.cuh"', '#include "sgemm.cuh"\n#include <cuda_bf16.h>'),
      ("a_frag[i] = sA[k][tile_row(thread_y, i)];",
       "a_frag[i] = __bfloat162float(__float2bfloat16_rn(sA[k][tile_row(thread_y, i)]));"),
      ("b_frag[j] = sB[k][tile_col(thread_x, j)];",
       "b_frag[j] = __bfloat162float(__float2bfloat16_rn(sB[k][tile_col(thread_x, j)]));")],
     [(f"--check --sizes {EDGES},{LARGE_K} --alpha 1.5 --beta 0.5", "check")]),
    ("K used for lda", "12_double_buffer",
     [("const float* a_src = &at(p.A, p.lda, block_row + a_row, k0 + a_col);",
       "const float* a_src = &at(p.A, p.K, block_row + a_row, k0 + a_col);"),
      ("copy_or_zero<ZERO_FILL>(&sA[a_col][r], a_src + n * A_PASS * p.lda,",
       "copy_or_zero<ZERO_FILL>(&sA[a_col][r], a_src + n * A_PASS * p.K,")],
     [("--check --sizes 17x31x13,129x127x65,300x300x200 --alpha 1.5 --beta 0.5 --ld-pad 3,5,1", "check"),
      ("--check --sizes 17x31x13,129x127x65,300x300x200 --alpha 1.5 --beta 0 --ld-pad 4,8,4", "check")]),
    ("C written only on the first launch (the timed runs do nothing)", "12_double_buffer",
     [("void launch(const sgemm::Problem& p, cudaStream_t stream) {",
       "void launch(const sgemm::Problem& p, cudaStream_t stream) {\n  static int launches = 0;\n"
       "  if (launches++ > 0) return;")],
     [("--sizes 256,129x131x67 --alpha 1.5 --beta 0 --reps 3 --warmup 1 --no-cublas-timing", "check")]),
    ("wrong stage index: the math reads the stage being filled", "12_double_buffer",
     [("load_fragments(a_frag[0], b_frag[0], sA[stage], sB[stage], 0, thread_x, thread_y);",
       "load_fragments(a_frag[0], b_frag[0], sA[stage ^ 1], sB[stage ^ 1], 0, thread_x, thread_y);"),
      ("load_fragments(a_frag[(k + 1) % 2], b_frag[(k + 1) % 2], sA[stage], sB[stage], k + 1,",
       "load_fragments(a_frag[(k + 1) % 2], b_frag[(k + 1) % 2], sA[stage ^ 1], sB[stage ^ 1], k + 1,")],
     [(f"--check --sizes 129x127x65,300x300x200,{LARGE_K} --alpha 1.5 --beta 0.5", "check")]),
    ("missing __syncthreads(): the next tile's copy races with this tile's reads", "12_double_buffer",
     [("    __syncthreads();  // ...and everyone's; and everyone is done reading the other stage\n", "")],
     [("--check --sizes 129x127x65,300x300x200 --alpha 1.5 --beta 0.5", "racecheck")]),
    ("no-zero-fill fast path taken on the last block row (M edge)", "12_double_buffer",
     [("if (SKIP_ZERO_FILL && ASYNC_LOADS && block_row + BM <= p.M && block_col + BN <= p.N",
       "if (SKIP_ZERO_FILL && ASYNC_LOADS && block_col + BN <= p.N")],
     [("--check --sizes 300x256x160,200x384x96 --alpha 1.5 --beta 0.5", "memcheck")]),
    ("no-zero-fill fast path taken on the last block column (N edge)", "12_double_buffer",
     [("if (SKIP_ZERO_FILL && ASYNC_LOADS && block_row + BM <= p.M && block_col + BN <= p.N",
       "if (SKIP_ZERO_FILL && ASYNC_LOADS && block_row + BM <= p.M")],
     [("--check --sizes 256x300x160,384x200x96 --alpha 1.5 --beta 0.5", "memcheck")]),
    # The blog series' "+1" padding with 8-byte copies, with the static_asserts that forbid it
    # taken out: the copies' shared destinations are misaligned and the GPU faults (exit 4).
    ("misaligned vector copies: B_PAD = 1 with 8-byte cp.async", "10_vectorized_async_copy",
     [("constexpr int COPY_VECTOR = SGEMM_KNOB(COPY_VECTOR, 4);", "constexpr int COPY_VECTOR = 2;"),
      ("constexpr int B_PAD = SGEMM_KNOB(B_PAD, 0);", "constexpr int B_PAD = 1;"),
      ("static_assert(BN % COPY_VECTOR == 0 &&", "static_assert(true ||"),
      ("static_assert(A_PAD % 4 == 0 && B_PAD % 4 == 0 &&", "static_assert(A_PAD % 4 == 0 &&")],
     [("--check --sizes 129x127x65,300x300x100 --alpha 1.5 --beta 0.5", "cuda")]),
    # Step 09 copies a tile without zero-fill only when it lies wholly inside A and B; forget
    # the k edge and the last, partial k tile reads past the ends of A's rows and of B: into
    # the next row of A (whose values meet B's rows beyond K) and past the end of B, where the
    # memory may hold zeros and the result come out right: memcheck is the sure witness.
    ("zero-fill skipped on the last, partial k tile", "09_async_loads",
     [("block_col + BN <= p.N && k0 + TUNE_SPLIT <= p.K)", "block_col + BN <= p.N)")],
     [("--check --sizes 256x256x1001,300x300x100 --alpha 1.5 --beta 0", "memcheck"),
      ("--check --sizes 256x256x1001,300x300x100 --alpha 1.5 --beta 0.5", "memcheck")]),
    ("partial k tile dropped", "12_double_buffer",
     [("const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);", "const int k_tiles = p.K / TUNE_SPLIT;")],
     [("--check --sizes 64x64x1001,300x300x100,33x65x16385 --alpha 1.5 --beta 0.5", "check")]),
    # The reductions of steps 15 and 16: a piece of K left out of the sum (split-K: the last
    # slice; stream-K: the last piece of every tile cut across blocks).
    ("split-K: the last piece of K not added", "15_split_k",
     [("for (int z = 1; z < splits; ++z) {", "for (int z = 1; z < splits - 1; ++z) {")],
     [("--check --sizes 1024x1024x1024,64x64x20000,129x127x1000,901x1299x703 --alpha 1.5 --beta 0.5", "check")]),
    # Nondeterminism that stays inside the accuracy limit: pieces 1.. of an output added in an
    # order that depends on the clock (as float atomics would add them in the order the blocks
    # finish). Only the harness's second run, compared bit for bit, can see it.
    ("split-K: the pieces added in an order that changes run to run", "15_split_k",
     [("  for (int z = 1; z < splits; ++z) {",
       "  const int turn = static_cast<int>(static_cast<unsigned long long>(clock64() >> 5) % (splits - 1));  // by the clock\n"
       "  for (int z = 1; z < splits; ++z) {"),
      ("piece + z * slice_floats", "piece + (1 + (z - 1 + turn) % (splits - 1)) * slice_floats")],
     [("--check --sizes 1024x1024x1024,64x64x20000,129x127x1000 --alpha 1.5 --beta 0.5", "check")]),
    ("stream-K: the last piece of a cut tile not added", "16_stream_k",
     [("for (int b = lo + 1; b <= hi; ++b) {", "for (int b = lo + 1; b < hi; ++b) {")],
     [("--check --sizes 2305x2564x40,2000x4000x333 --alpha 1.5 --beta 0.5", "check")]),
    # Step 17's aligned kernels launched whatever B's alignment: at 300x300x100, ldb = 305,
    # their 16-byte copies read from addresses that are not 16-byte aligned (exit code 4;
    # 129x127x65 has ldb = 132, aligned, and runs correctly).
    ("aligned-B kernels launched for an unaligned B", "17_aligned_copies",
     [("if (ALIGNED_KERNELS && b_aligned)", "if (ALIGNED_KERNELS)")],
     [("--check --sizes 129x127x65,300x300x100 --alpha 1.5 --beta 0.5 --ld-pad 3,5,1", "cuda")]),
    # Step 18's reduction beside the whole tiles writing its sums to the first tiles, not to
    # the cut ones after the whole tiles: those stay unwritten (and whole tiles are overwritten).
    ("stream-K first: the reduction's sums written to the wrong tiles", "18_stream_k_first",
     [("    const int2 at = tile_position(dp_tiles + t,", "    const int2 at = tile_position(t,")],
     [("--check --sizes 2305x2564x40,2000x4000x333 --alpha 1.5 --beta 0.5", "check")]),
    # Step 19's grid launched with choose_splits's count of pieces, not the count for the
    # shorter pieces piece_length picked: the short last piece of every tile is never computed.
    ("short last piece: never launched", "19_short_last_piece",
     [("  const int splits = sgemm::ceil_div(k_tiles, k_tiles_per_split);  // no piece left empty",
       "  const int splits = choose_splits(p, grid.x * grid.y);")],
     [("--check --sizes 513x513x2408,1000x257x2593 --alpha 1.5 --beta 0.5", "check")]),
    # Step 20's pairs adding up the partner's half from the wrong thread's place in the box (the
    # neighbouring lane's outputs): every paired sum is wrong.
    ("pieces in pairs: the partner's half read from the wrong place", "20_paired_pieces",
     [("const float4 other = box[(i * VECTORS + j / 4) * THREADS + tid];",
       "const float4 other = box[(i * VECTORS + j / 4) * THREADS + (tid ^ 1)];")],
     [("--check --sizes 1000x1000x1000,600x700x900 --alpha 1.5 --beta 0.5", "check")]),
    # Step 21's whole-tiles kernel, a wrapper around its tile's body, calling the body compiled
    # for an aligned B whatever the launch chose: on padded rows (ldb = N + 5) its 16-byte
    # copies read misaligned addresses.
    ("chosen tile: the whole-tiles kernel always takes the aligned copies", "21_chosen_tile",
     [("T().template sgemm_kernel_body<B_ALIGNED>(p);", "T().template sgemm_kernel_body<true>(p);")],
     [("--check --sizes 127x129x131,255x257x33 --alpha 1.5 --beta 0.5 --ld-pad 3,5,1", "cuda")]),
    # Step 21's rectangles reading B's columns from the matrix's first column whatever their
    # place: the strip on the right multiplies the wrong columns. The rule cuts a strip on the
    # right at both shapes, by 10% and 11% of the whole's estimate (plots/pictures_edges.py;
    # 1000x2049x256, cut before the tall tile, now runs whole: 132 tiles of 256 x 64, one wave).
    ("chosen tile: a rectangle's B not offset to its columns", "21_chosen_tile",
     [("r.B = p.B + col;", "r.B = p.B;")],
     [("--check --sizes 1000x2049x500,2047x513x500 --alpha 1.5 --beta 0.5", "check")]),
    # Step 21's aligned copy of an unaligned B (ldb = 2049) leaving its last column out: the
    # workspace's last column is whatever the allocation held. The rule copies B at 2047^3 (the
    # copy's estimate about 17 us against 12% of the GEMM's).
    ("chosen tile: B's aligned copy one column short", "21_chosen_tile",
     [("p.N * sizeof(float), p.K,", "(p.N - 1) * sizeof(float), p.K,")],
     [("--check --sizes 2047x2049x2047 --alpha 1.5 --beta 0.5", "check")]),
    # Step 21's reduction, where a vector's slices are shared among a block's threads, adding
    # up every group's run but the last: a lone 64 x 64 tile in many pieces (1,024 vectors of
    # C, 32 groups) loses its last slices of K.
    ("chosen tile: the reduction's last group of slices not added", "21_chosen_tile",
     [("for (int g = 1; g * run < terms; ++g) {", "for (int g = 1; g * run < terms - run; ++g) {")],
     [("--check --sizes 64x64x4000,64x64x20000 --alpha 1.5 --beta 0.5", "check")]),
    # The 3xTF32 steps and IEEE special values (--specials: Inf, NaN, values rounding past
    # FLT_MAX, TF32-exact partners of an infinity). K >= 8 everywhere: below that step 22
    # multiplies in FP32 and has no split to get wrong.
    ("3xTF32: the fast split's Inf - Inf = NaN kept (no careful redo)", "22_tf32x3_mma",
     [("if (__syncthreads_or(nan)) {", "if (false && __syncthreads_or(nan)) {")],
     [(f"--check --sizes {SPECIALS} --alpha 1.5 --beta 0 --specials", "check")]),
    ("3xTF32: an Inf kept whole as the big part (small = 0, so Inf x 0 = NaN)", "25_warp_specialized",
     [("big = tf32_round(fminf(fmaxf(x, -TF32_MAX), TF32_MAX));", "big = fabsf(x) < INFINITY ? tf32_round(x) : x;"),
      ("small = fabsf(rest) < INFINITY ? tf32_round(rest) : rest;",
       "small = fabsf(x) < INFINITY ? tf32_round(rest) : 0.0f;")],
     [(f"--check --sizes {SPECIALS} --alpha 1.5 --beta 0 --specials", "check")]),
    # Step 26's reduction leaving out the last piece of K: every split shape is wrong, the
    # unsplit ones (one piece) are not.
    ("split-K on tensor cores: the reduction skips the last piece", "26_tensor_split_k",
     [("for (int z = 1; z < splits; ++z) {", "for (int z = 1; z < splits - 1; ++z) {")],
     [("--check --sizes 1024x1024x1024,256x256x2000 --alpha 1.5 --beta 0.5", "check")]),
    # Step 27 without its scaling: the small parts rounded to TF32 unscaled (and not scaled
    # back), step 26's numbers in step 27's accumulators. Caught on tiny A and on huge A (the GPU
    # suite's gpu.tiny_a and gpu.huge_a) at 1x1x1, a single product where nothing averages out;
    # the plain inputs still pass.
    ("3xTF32: the small parts' scaling dropped", "27_scaled_small_parts",
     [("const float rest = (x - big) * SMALL_SCALE;", "const float rest = x - big;"),
      ("acc[i] += d_small[i] * (1.0f / SMALL_SCALE);", "acc[i] += d_small[i];")],
     [("--check --sizes 1x1x1 --alpha 1.5 --beta 0 --exponents -118,118", "check"),
      ("--check --sizes 1x1x1 --alpha 1.5 --beta 0 --exponents 118,-118", "check")]),
    # Step 28 without its scaling of rows and columns: every exponent 0, step 27's numbers.
    # Caught on subnormal A and on subnormal B (gpu.subnormal_a and gpu.subnormal_b), where
    # step 27 fails: at 1x1x1, and for A at 1024^3, a sum over K = 1024.
    ("3xTF32: the rows' and columns' scaling dropped", "28_scaled_rows_columns",
     [("  if (bits == 0 || bits >= 0x7f800000u) return 0;", "  return 0;")],
     [("--check --sizes 1x1x1,1024x1024x1024 --alpha 1.5 --beta 0 --exponents -134,120", "check"),
      ("--check --sizes 1x1x1 --alpha 1.5 --beta 0 --exponents 120,-134", "check")]),
    # Step 29 with its split pass forgetting the rows' factors: A split unscaled, while the
    # epilogue still multiplies each sum by 2^(s + t). Caught on subnormal A (every row of it
    # is scaled, by 2^126), at 1x1x1 and at 1024^3.
    ("3xTF32: the split pass's row scaling dropped", "29_split_once",
     [("if (k < p.K) tf32_split(v[i] * f, big[k], small[k]);", "if (k < p.K) tf32_split(v[i], big[k], small[k]);")],
     [("--check --sizes 1x1x1,1024x1024x1024 --alpha 1.5 --beta 0 --exponents -134,120", "check")]),
    # And with every exponent 0 (step 28's fault): the scaling dropped everywhere.
    ("3xTF32: the rows' and columns' scaling dropped", "29_split_once",
     [("  if (bits == 0 || bits >= 0x7f800000u) return 0;", "  return 0;")],
     [("--check --sizes 1x1x1,1024x1024x1024 --alpha 1.5 --beta 0 --exponents -134,120", "check"),
      ("--check --sizes 1x1x1 --alpha 1.5 --beta 0 --exponents 120,-134", "check")]),
    # Step 30 with the scaling dropped everywhere, on shapes its rule splits in the pipeline
    # (1x1x1, 1024^3) and once (2048x2048x256).
    ("3xTF32: the rows' and columns' scaling dropped", "30_chosen_split",
     [("  if (bits == 0 || bits >= 0x7f800000u) return 0;", "  return 0;")],
     [("--check --sizes 1x1x1,1024x1024x1024,2048x2048x256 --alpha 1.5 --beta 0 --exponents -134,120", "check"),
      ("--check --sizes 1x1x1,2048x2048x256 --alpha 1.5 --beta 0 --exponents 120,-134", "check")]),
    # Step 31 with a long row not read again for its split: every chunk of the row is split
    # from the values of its last chunk. Caught where the rule splits once and a row is two
    # chunks (1024x1024x8192: rows of 8192 in chunks of 4096), on ordinary inputs.
    ("3xTF32: a long row's chunks not read again for the split", "31_one_pass",
     [("if (p.K > CHUNK) load_chunk(k0);", "if (false) load_chunk(k0);")],
     [("--check --sizes 1024x1024x8192 --alpha 1.5 --beta 0", "check")]),
    # And with every exponent 0: the scaling dropped everywhere, in either place.
    ("3xTF32: the rows' and columns' scaling dropped", "31_one_pass",
     [("  if (bits == 0 || bits >= 0x7f800000u) return 0;", "  return 0;")],
     [("--check --sizes 1x1x1,1024x1024x1024,256x256x16384 --alpha 1.5 --beta 0 --exponents -134,120", "check"),
      ("--check --sizes 1x1x1,2048x2048x256 --alpha 1.5 --beta 0 --exponents 120,-134", "check")]),
    # Step 32 deciding never to run its second sweep: the pipeline's blocks keep their unscaled
    # first sweep. Caught on subnormal A and on subnormal B where the rule splits in the
    # pipeline (1x1x1, 256x256x16384, 129x257x700), as step 27 fails there.
    ("3xTF32: the block's second sweep never run", "32_scaled_on_demand",
     [("return *reinterpret_cast<volatile unsigned*>(second_sweep) != 0;", "return false;")],
     [("--check --sizes 1x1x1,129x257x700,256x256x16384 --alpha 1.5 --beta 0 --exponents -134,120", "check"),
      ("--check --sizes 1x1x1,129x257x700 --alpha 1.5 --beta 0 --exponents 120,-134", "check")]),
    # And with every exponent 0: the scaling dropped in either place.
    ("3xTF32: the rows' and columns' scaling dropped", "32_scaled_on_demand",
     [("  if (bits == 0 || bits >= 0x7f800000u) return 0;", "  return 0;")],
     [("--check --sizes 1x1x1,129x257x700,1024x1024x1024 --alpha 1.5 --beta 0 --exponents -134,120", "check"),
      ("--check --sizes 1x1x1,129x257x700 --alpha 1.5 --beta 0 --exponents 120,-134", "check")]),
    # Step 33's first sweep with the small part taken from A rounded to TF32, while the tensor
    # core still reads A itself truncated: where rounding goes up, the two parts no longer add
    # up to x (2^-11 of it off). Caught on ordinary inputs where the rule splits in the pipeline.
    ("3xTF32: the small part from A rounded while the big part is A truncated", "33_raw_big_part",
     [("const float truncated = __uint_as_float(__float_as_uint(x) & 0xffffe000u);",
       "const float truncated = tf32_round(x);")],
     [("--check --sizes 129x257x700,200x300x5000,256x256x16384 --alpha 1.5 --beta 0", "check")]),
    # And a row with an Inf not voted to the second sweep: its first sweep's small parts are
    # NaNs (Inf - Inf), and the Inf, its own big part, times B's small part of 0 is one more.
    # Only where no other row or column of the block votes for the second sweep (the planted
    # near-FLT_MAX values do): shapes of many blocks, whose few planted rows and columns leave
    # blocks with an Inf row and nothing else (faults.specials' small shapes did not, 2 of 3),
    # forced into the pipeline (the rule splits these shapes once, where no first sweep runs).
    ("3xTF32: a row with an Inf kept in the first sweep", "33_raw_big_part",
     [("needs = needs || scale_exponent(row_max[r]) != 0 || (RAW && row_max[r] >= 0x7f800000u);",
       "needs = needs || scale_exponent(row_max[r]) != 0;"),
      ('static const char* forced = std::getenv("SGEMM_SPLIT");', 'static const char* forced = "pipeline";')],
     [("--check --sizes 4096x2048x64,3000x5000x40 --alpha 1.5 --beta 0 --specials", "check")]),
    # Step 34's consumers never storing their columns' largest magnitudes: a second sweep,
    # voted by the rows of huge A, scales B's subnormal columns by whatever col_max holds
    # (huge columns of B, with subnormal A, came out right unscaled: 2 of 3 shapes passed).
    ("3xTF32: the consumers' column maxima never stored", "34_columns_by_consumers",
     [("if (t == 0) col_max[consumer * WGMMA_M + operand_col(warp, h, g)] = m;", "")],
     [("--check --sizes 129x257x700,256x256x16384,1000x1000x300 --alpha 1.5 --beta 0 --exponents 120,-134", "check")]),
    # Step 35 split once with its splitters never reading the rows' largest magnitudes from the
    # pass: the second sweep, voted by B's huge columns, leaves subnormal rows of A unscaled,
    # and their small parts fall below FP32's normal range (forced once: the rule splits
    # 129x257x700 in the pipeline).
    ("3xTF32: split once, the pass's row maxima never read", "35_small_part_pass",
     [("row_max[r] = block_row + r < p.M ? max_bits.bits(block_row + r) : 0u;", "row_max[r] = 0u;"),
      ('static const char* forced = std::getenv("SGEMM_SPLIT");', 'static const char* forced = "once";')],
     [("--check --sizes 129x257x700,1024x1024x1024,2048x2048x256 --alpha 1.5 --beta 0 --exponents -134,120", "check")]),
    # Step 36's column of B with an Inf kept in the first sweep, where B is its own big part:
    # its small parts are NaNs (Inf - Inf). As 33's row fault, on shapes of many blocks, whose
    # few planted columns leave blocks with an Inf column and nothing else to vote.
    ("3xTF32: a column of B with an Inf kept in the first sweep", "36_raw_b",
     [("needs = needs || scale_exponent(m) != 0 || (RAW && m >= 0x7f800000u);", "needs = needs || scale_exponent(m) != 0;")],
     [("--check --sizes 4096x2048x64,3000x5000x40 --alpha 1.5 --beta 0 --specials", "check")]),
    # Step 37's narrow tile planned with the wide tile's block columns: half of its 128 x 64
    # tiles are never launched, and their columns of C keep the NaN the harness filled C with
    # (beta 0). Forced narrow, at shapes whose N spans more than one narrow tile.
    ("3xTF32: the narrow tile planned with the wide tile's block columns", "37_tile_by_shape",
     [("plan.tiles = sgemm::ceil_div(p.M, BM) * sgemm::ceil_div(p.N, bn);",
       "plan.tiles = sgemm::ceil_div(p.M, BM) * sgemm::ceil_div(p.N, BN);"),
      ('static const char* forced = std::getenv("SGEMM_TILE");', 'static const char* forced = "128x64";')],
     [("--check --sizes 129x257x700,300x300x100,1000x1000x300 --alpha 1.5 --beta 0", "check")]),
    # Step 38's epilogue taking the unscaled loop for a block that ran the scaled second sweep:
    # its sums keep the factors of its rows and columns (subnormal A scaled by 2^126).
    ("3xTF32: a scaled block's sums stored without its factors", "38_short_epilogue",
     [("  if (scaled) {\n    if (beta == 0.0f) store(std::true_type{}, std::true_type{});",
       "  if (false) {\n    if (beta == 0.0f) store(std::true_type{}, std::true_type{});")],
     [("--check --sizes 129x257x700,1000x1000x300 --alpha 1.5 --beta 0.5 --exponents -134,120", "check")]),
    # Step 39's consumers reading B in phases at the block's columns, without their phase's
    # shift: every row of phases 1-3 is read one to three columns off (N odd: B in phases).
    ("odd strides: B's phases read without their column shift", "39_odd_strides",
     [("+ (B_PHASES > 1 ? b_shifts.shift[t] : 0);", "+ 0;")],
     [("--check --sizes 129x257x700,300x301x200", "check")]),
    # Step 40's rectangles reading B's columns from the matrix's first column whatever their
    # place: the strip on the right multiplies the wrong columns. The rule cuts a strip on the
    # right at both shapes, by 14% and 15% of the whole's estimate (plots/pictures_edges.py).
    ("edge rectangles: a rectangle's B not offset to its columns", "40_edge_rectangles",
     [("r.B = p.B + col;", "r.B = p.B;")],
     [("--check --sizes 777x2400x500,1300x1540x500 --alpha 1.5 --beta 0.5", "check")]),
    # Step 40's reduction, where a vector's pieces are shared among a block's threads, adding
    # up every group's run but the last: few vectors of C in many pieces (64x64x20000: one
    # 128 x 64 tile; 128x128x16000) lose their last pieces of K.
    ("edge rectangles: the reduction's last group of pieces not added", "40_edge_rectangles",
     [("for (int g = 1; g * run < splits; ++g) {", "for (int g = 1; g * run < splits - run; ++g) {")],
     [("--check --sizes 64x64x20000,128x128x16000 --alpha 1.5 --beta 0.5", "check")]),
]

LIMIT = re.compile(r"FP32-grade limit ([0-9.e+]+) u")
FAILED_LINE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(?:after timing: )?FAILED.*?error max ([0-9.e+naif-]+) u")
SAME_BITS_LINE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+FAILED: a second run on the same inputs gave different bits")


def command(exe: Path, args: str, expect: str) -> list[str]:
    if expect in ("racecheck", "memcheck"):
        padding = ["--padding", str(MEMCHECK_PADDING)] if expect == "memcheck" else []
        return ["compute-sanitizer", "--tool", expect, *padding, "--kernel-name", "kns=sgemm_kernel",
                "--error-exitcode", str(SANITIZER_EXIT), str(exe)] + args.split()
    return [str(exe)] + args.split()


def shapes_of(args: str) -> int:
    return len(args.split("--sizes ")[1].split()[0].split(","))


def judge(r: subprocess.CompletedProcess, args: str, expect: str) -> tuple[bool, str]:
    """(caught, detail) for one run of a mutant."""
    out = r.stdout + r.stderr
    if expect == "check":
        failed = [m for m in map(FAILED_LINE.match, r.stdout.splitlines()) if m]
        limit = LIMIT.search(out)
        margins = []
        for m in failed:
            err = float(m.group(4))
            margins.append(err / float(limit.group(1)) if limit else float("nan"))
        n = shapes_of(args)
        different_bits = [m for m in map(SAME_BITS_LINE.match, r.stdout.splitlines()) if m]
        caught = r.returncode == 1 and len(failed) + len(different_bits) == n
        if different_bits and not failed:
            return caught, f"{len(different_bits)}/{n} shapes failed, by different bits on a second run (errors within the limit)"
        finite = [x for x in margins if x == x and x != float("inf")]
        margin = (f"smallest error {min(finite):.3g}x the limit" if finite else "errors not finite (NaN/Inf)")
        if "of the wrong class" in out:  # --specials: a NaN or an infinity where the reference has another class
            margin += " (caught by outputs of the wrong class)"
        elif finite and min(finite) < 1:  # the wrong elements are within the limit: the guard cells caught it
            margin += " (caught by the guard cells)"
        return caught, f"{len(failed)}/{n} shapes failed, {margin}"
    if expect == "cuda":
        return r.returncode == 4, next((l for l in out.splitlines() if "failed: cuda" in l), "")[:160]
    # a sanitizer tool
    errors = re.search(r"(?:ERROR|RACECHECK) SUMMARY: (\d+) (?:error|hazard)", out)
    return (r.returncode == SANITIZER_EXIT and errors is not None and int(errors.group(1)) > 0,
            f"{expect}: {errors.group(0) if errors else 'no summary'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", type=Path)
    ap.add_argument("--steps", default="", help="only the faults of these steps (space- or comma-separated)")
    args = ap.parse_args()
    chosen = set(args.steps.replace(",", " ").split())
    unknown = chosen - {f[1] for f in FAULTS}
    if unknown:
        print(f"planted_faults: no fault for {' '.join(sorted(unknown))}")
        return 2
    faults = [f for f in FAULTS if not chosen or f[1] in chosen]

    # Every source first (so a fault list that no longer matches its step stops at once), then
    # the builds, a step's in parallel: the negative controls (each step unmodified) and the mutants.
    sources = {f"control_{step}": (step, step_source(step).read_text()) for step in sorted({f[1] for f in faults})}
    for n, (name, step, edits, runs) in enumerate(faults):
        text = step_source(step).read_text()
        for old, new in edits:
            if text.count(old) != 1:
                print(f"planted_faults: '{old.strip()[:70]}' not found once in {step}; update the fault list")
                return 2
            text = text.replace(old, new)
        sources[f"fault{n}"] = (step, text)

    exes = {}  # stem -> executable
    for step in sorted({step for step, _ in sources.values()}):
        stems = [stem for stem, (s, _) in sources.items() if s == step]
        built = build_variants(args.build, step, [(stem, sources[stem][1]) for stem in stems], os.cpu_count())
        for stem, (exe, status) in zip(stems, built):
            if not status.startswith("ok"):
                print(f"planted_faults: {stem} ({step}) did not build: {status}")
                return 2
            exes[stem] = exe

    # Negative controls: each step, unmodified, through the same build path and the same runs.
    # A fault's run is judged only if the unmodified step passed that very run: otherwise a
    # "caught" would prove nothing, and it is reported as unjudged (and the script fails).
    control_ok = {}
    for _, step, _, runs in faults:
        for run_args, expect in runs:
            if (step, run_args, expect) in control_ok:
                continue
            r = subprocess.run(command(exes[f"control_{step}"], run_args, expect), capture_output=True, text=True)
            control_ok[(step, run_args, expect)] = ok = r.returncode == 0
            print(f"{'pass' if ok else 'FAIL'}    unmodified {step} [{run_args}] ({expect}) -> exit {r.returncode}"
                  + ("" if ok else ": " + (r.stdout + r.stderr).strip().splitlines()[-1][:200]), flush=True)

    missed = unjudged = runs_total = 0
    for n, (name, step, edits, runs) in enumerate(faults):
        for run_args, expect in runs:
            runs_total += 1
            if not control_ok[(step, run_args, expect)]:
                unjudged += 1
                print(f"UNJUDGED {name} [{step}; {run_args}] ({expect}): the unmodified step failed this run")
                continue
            r = subprocess.run(command(exes[f"fault{n}"], run_args, expect), capture_output=True, text=True)
            caught, detail = judge(r, run_args, expect)
            missed += not caught
            print(f"{'caught' if caught else 'MISSED'}  {name} [{step}; {run_args}] -> exit {r.returncode} "
                  f"({expect}): {detail}", flush=True)
    print(f"planted_faults: {runs_total - missed - unjudged} of {runs_total} runs caught, {missed} missed, "
          f"{unjudged} unjudged (negative control failed); {len(faults)} faults")
    return 1 if missed or unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
