// Step 21 - the block tile chosen from the shape                         previous: 20_paired_pieces
// Change: step 20's code, whole, becomes a template on its tile (threads and outputs per thread
//         along N and M, the warp's shape), compiled for eight tiles: 128 x 256 (step 20's),
//         128 x 128, 64 x 128, 64 x 64, 256 x 64 (N = 64), 64 x 256 (M = 64), and 16 x 128 and
//         128 x 16 for rectangles fewer than 64 rows or columns thick. For each,
//         the launch estimates the time from the shape (waves of blocks x k tiles per block x
//         a k tile's time at that tile's measured share of the FP32 peak, plus the partial
//         sums' traffic) with step 20's choice of pieces and a stream-K that must pay for its
//         overhead; the tile with the smallest estimate runs where it beats the 128 x 256
//         tile's by MIN_GAIN_PERCENT. Where the chosen tile does not divide M or N, C may be
//         cut: the main rectangle at its multiples and the thin edges each run as a GEMM of
//         their own, with the tile their shape chooses (launch).
//         With it: MAX_SPLITS 128, for a lone small tile; with an unaligned B, step 17's
//         stream-K, or B copied aligned first where the copy costs less (copy_b); step 18's
//         order only for stream-K tiles of few pieces (BESIDE_MAX_PIECES); and the tall tile
//         copies A in 16-byte vectors (VECTOR_A_256X64).
// Why:    one 128 x 256 tile for every problem leaves most of the GPU idle on small and skinny
//         shapes: 128^3 is one block on one SM of 132, and N = 64 fills a quarter of each
//         tile. Smaller tiles make more blocks, at a lower share of the peak each. And an
//         edge of one column (N = 2049) costs the 128 x 256 tile a whole block column.
// Where:  struct Tile (step 20's code inside it: constants and kernels' bodies); plan (the
//         estimate); the kernels' wrappers after it; the eight tiles (using Tile...), choose
//         and launch (the edges cut into rectangles) at the end.
// Watch:  the survey's shapes against step 20 (small, skinny, odd); the bench's six shapes
//         unchanged where the 128 x 256 tile is chosen.
// Build alone: mkdir -p build-alone && nvcc -std=c++20 -O3 -arch=sm_80 -Icommon common/*.cpp common/*.cu steps/21_chosen_tile/chosen_tile.cu -lcublas -o build-alone/chosen_tile
#include "sgemm.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <string>

constexpr int TUNE_SPLIT = SGEMM_KNOB(TUNE_SPLIT, 32);    // K-width of a shared tile
constexpr bool SWAP_XY = SGEMM_KNOB(SWAP_XY, true);    // true: blockIdx.x runs along M, blockIdx.y along N
constexpr int MIN_BLOCKS = SGEMM_KNOB(MIN_BLOCKS, 1);     // blocks per SM the compiler must fit: caps registers
constexpr bool ASYNC_LOADS = SGEMM_KNOB(ASYNC_LOADS, true);  // global -> shared with cp.async (false: through registers)
constexpr bool SKIP_ZERO_FILL = SGEMM_KNOB(SKIP_ZERO_FILL, true);  // tiles wholly inside A and B: cp.async without zero-fill
constexpr int COPY_VECTOR = SGEMM_KNOB(COPY_VECTOR, 4);      // floats per cp.async of B: 1, 2 or 4 (4, 8 or 16 bytes)
constexpr int B_PAD = SGEMM_KNOB(B_PAD, 0);            // floats of padding per row of the B tile
constexpr bool ALIGNED_KERNELS = SGEMM_KNOB(ALIGNED_KERNELS, true);  // kernels compiled apart for aligned B (vector copies only) and the rest (false: one kernel, alignment tested at run time)

constexpr int A_PAD = SGEMM_KNOB(A_PAD, 4);  // floats of padding per row of the transposed A tile
constexpr int A_COPY_RUN = SGEMM_KNOB(A_COPY_RUN, 16);  // consecutive k of one row of A that neighbouring lanes copy

constexpr int STAGES = SGEMM_KNOB(STAGES, 3);  // shared buffers in the ring: one being read, STAGES - 1 being filled
constexpr int K_UNROLL = SGEMM_KNOB(K_UNROLL, 8);  // k steps per pass of the unrolled k loop: keeps the loop in the instruction cache
constexpr bool VECTOR_C = SGEMM_KNOB(VECTOR_C, true);  // C stored as 16-byte vectors where it is aligned (false: one float at a time)
constexpr bool EARLY_SYNC = SGEMM_KNOB(EARLY_SYNC, true);  // wait and barrier before a tile's last k: the next tile's first fragments load under its FFMAs
constexpr bool FFMA_BY_COLUMN = SGEMM_KNOB(FFMA_BY_COLUMN, true);  // a k's FFMAs reach the compiler column by column of the thread tile (false: row by row)
constexpr int STAGES_SPLIT = SGEMM_KNOB(STAGES_SPLIT, 2);  // STAGES in the kernel that computes one piece of K (3 in steps 15-16; 2 is faster with these copies)
constexpr int MAX_REGISTERS_SPLIT = SGEMM_KNOB(MAX_REGISTERS_SPLIT, 240);  // registers a thread of that kernel may use (__maxnreg__; 255: the hardware's limit, no cap)

constexpr bool STREAM_K = SGEMM_KNOB(STREAM_K, true);  // unsplit shapes with a partial last wave: its tiles' k iterations shared by all SMs
constexpr bool STREAM_FIRST = SGEMM_KNOB(STREAM_FIRST, true);  // stream-K's iterations first, then the whole tiles, the reduction beside them (false: step 17's order)
constexpr int BESIDE_REDUCE_THREADS = SGEMM_KNOB(BESIDE_REDUCE_THREADS, 32);  // threads per block of the reduction that runs beside the whole tiles
constexpr int BESIDE_REDUCE_REGISTERS = SGEMM_KNOB(BESIDE_REDUCE_REGISTERS, 64);  // registers a thread of it may use (__maxnreg__)
constexpr int BESIDE_MAX_PIECES = SGEMM_KNOB(BESIDE_MAX_PIECES, 4);  // stream-K tiles in more pieces than this are reduced after the whole tiles, in step 17's order: at 5120 x 5120 x 997 step 18's order was slower (the notes)
constexpr int MAX_SPLITS = SGEMM_KNOB(MAX_SPLITS, 128);       // most pieces K is split into (64 in steps 15-20: a 64 x 64 tile alone, as at 64 x 64 x 65536, needs more to fill the GPU)
constexpr int MIN_SPLIT_K_TILES = SGEMM_KNOB(MIN_SPLIT_K_TILES, 2);  // fewest k tiles in a piece: its pipeline has to fill and drain (4 in steps 15-20; 2 from a sweep over the survey, the notes)
constexpr bool TAIL_PIECES = SGEMM_KNOB(TAIL_PIECES, true);        // pieces that leave SMs idle: each shorter, and a short last one for those SMs
constexpr int TAIL_OVERHEAD_K_TILES = SGEMM_KNOB(TAIL_OVERHEAD_K_TILES, 0);  // k tiles of time a short piece is charged beyond its own (its fill and its stores)
constexpr int MIN_GAIN_PERCENT = SGEMM_KNOB(MIN_GAIN_PERCENT, 10);  // more pieces must cut the estimated time by this much
constexpr int L2_BANDWIDTH_RATIO = SGEMM_KNOB(L2_BANDWIDTH_RATIO, 4);  // how much faster partial sums that stay in L2 move than device memory does (split-K's cost)
constexpr int REDUCE_THREADS = SGEMM_KNOB(REDUCE_THREADS, 256);   // threads per block of the reduction kernel
constexpr int MAX_REDUCE_GROUPS = SGEMM_KNOB(MAX_REDUCE_GROUPS, 32);  // most threads sharing one vector's pieces in the split reduction (1: one thread a vector)
constexpr int REDUCE_LOADS = SGEMM_KNOB(REDUCE_LOADS, 4);  // pieces a reduction thread reads before it adds them
static_assert(MAX_REDUCE_GROUPS >= 1 && (MAX_REDUCE_GROUPS & (MAX_REDUCE_GROUPS - 1)) == 0 && REDUCE_THREADS % MAX_REDUCE_GROUPS == 0 &&
                  REDUCE_LOADS >= 1,
              "a power of two of groups that divides a reduction block's threads, and at least one load at a time");
constexpr int PAIR_ROWS = SGEMM_KNOB(PAIR_ROWS, 4);  // of every 4 rows, those whose pieces 2c and 2c+1 add up in distributed shared memory before they are stored (0: none)

constexpr int STREAM_K_OVERHEAD_K_TILES = SGEMM_KNOB(STREAM_K_OVERHEAD_K_TILES, 4);  // k tiles of time stream-K is charged for its pieces and their reduction
constexpr int EDGE_LAUNCH_US = SGEMM_KNOB(EDGE_LAUNCH_US, 4);  // microseconds each rectangle beyond the first is charged (its launches, its share of A and B read again)
constexpr int EDGE_GAIN_PERCENT = SGEMM_KNOB(EDGE_GAIN_PERCENT, 3);  // the rectangles must cut the estimated time by this much
constexpr bool PRICE_ONCE = SGEMM_KNOB(PRICE_ONCE, true);  // keep launch's decision per shape (false: price the cut on every call)
constexpr int CUT_CACHE = SGEMM_KNOB(CUT_CACHE, 16);  // shapes whose decisions are kept
static_assert(CUT_CACHE >= 1, "PRICE_ONCE keeps at least one shape's decision (PRICE_ONCE=false keeps none)");
constexpr int ONE_FLOAT_B_PERCENT = SGEMM_KNOB(ONE_FLOAT_B_PERCENT, 6);  // B copied to shared memory one float at a time (rows not 16-byte aligned) makes the GEMM this much slower: B is copied aligned first where that costs less (the notes)
constexpr int COPY_PERCENT = SGEMM_KNOB(COPY_PERCENT, 50);  // the aligned copy's pace, in % of the device memory's peak bandwidth (cudaMemcpy2DAsync, as in step 39)
constexpr int COPY_PASS_US = SGEMM_KNOB(COPY_PASS_US, 3);   // the copy's launch and the GEMM's wait for it, in microseconds
static_assert(ONE_FLOAT_B_PERCENT >= 0 && COPY_PERCENT >= 1 && COPY_PASS_US >= 0, "a slowdown, a pace and a launch that cannot be negative");
// Each tile's share of the SM's FP32 peak, in percent (the H100 at 6144^3, step 20 built with
// each tile: the notes). The two smaller tiles' are below what they reach with the SM full of
// their blocks (68 and 60 on the H200): they stand as well for the fewer blocks an SM those tiles
// run where shapes choose them, and raised, the rule's choices lost over the survey (the notes).
// The estimate's k tile takes BM x BN x TUNE_SPLIT FMAs at that share, divided among the blocks
// that share an SM.
constexpr int PEAK_PERCENT_128X256 = SGEMM_KNOB(PEAK_PERCENT_128X256, 74);
constexpr int PEAK_PERCENT_128X128 = SGEMM_KNOB(PEAK_PERCENT_128X128, 67);
constexpr int PEAK_PERCENT_64X128 = SGEMM_KNOB(PEAK_PERCENT_64X128, 52);
constexpr int PEAK_PERCENT_64X64 = SGEMM_KNOB(PEAK_PERCENT_64X64, 37);
constexpr int PEAK_PERCENT_256X64 = SGEMM_KNOB(PEAK_PERCENT_256X64, 57);  // the tall and wide tiles: measured on the H200 at 6144^3 against 128 x 256 (the notes; the tall tile with VECTOR_A_256X64)
constexpr int PEAK_PERCENT_64X256 = SGEMM_KNOB(PEAK_PERCENT_64X256, 65);
constexpr bool VECTOR_A_256X64 = SGEMM_KNOB(VECTOR_A_256X64, true);  // the tall tile copies A in 16-byte vectors, 4 k of a row kept together (false: one float at a time, transposed, as the other tiles)
// The thin tiles, for the strips a cut leaves (9 rows below, one column on the right): measured
// on the H200 with the SM full of their blocks (the notes).
constexpr int PEAK_PERCENT_16X128 = SGEMM_KNOB(PEAK_PERCENT_16X128, 41);
constexpr int PEAK_PERCENT_128X16 = SGEMM_KNOB(PEAK_PERCENT_128X16, 44);
constexpr bool VECTOR_A_128X16 = SGEMM_KNOB(VECTOR_A_128X16, true);  // as VECTOR_A_256X64, for the thin tile's A, eight times its B
constexpr int THIN_BELOW = SGEMM_KNOB(THIN_BELOW, 64);  // a tile of fewer rows (columns) than this is priced only where M (N) is below it too

// The kernels, each a template on its tile, T: their bodies are T's member functions (below).
template <class T, bool B_ALIGNED> __global__ void sgemm_kernel(sgemm::Problem p);
template <class T, bool B_ALIGNED> __global__ void sgemm_kernel_split(sgemm::Problem p, int k_tiles_per_split, float* partials, int ld_partials);
template <class T, bool B_ALIGNED> __global__ void sgemm_kernel_stream(sgemm::Problem p, int dp_tiles, int sk_tiles, float* slots);
template <class T, bool B_ALIGNED> __global__ void sgemm_kernel_stream_only(sgemm::Problem p, int dp_tiles, int sk_tiles, float* slots, unsigned* sk_done);
template <class T, bool B_ALIGNED> __global__ void sgemm_kernel_whole_tiles(sgemm::Problem p, int tiles);
template <class T> __global__ void sgemm_kernel_stream_reduce(sgemm::Problem p, int dp_tiles, int sk_tiles, int blocks, const float* slots);
template <class T> __global__ void sgemm_kernel_stream_reduce_beside(sgemm::Problem p, int dp_tiles, int sk_tiles, int blocks, const float* slots,
                                                                     const unsigned* sk_done, unsigned target);
template <class T> __global__ void sgemm_kernel_split_reduce(sgemm::Problem p, int splits, int groups, const float* partials, int ld_partials,
                                                            int pair_rows);

// The path of the last tile launched and its count (Tile::took_path), for launch's rectangles
// to name.
std::string last_path;
int last_count = 0;

// One tile: step 20's tile knobs are the template's parameters, and everything from here to
// the struct's end is step 20's code (a kernel's body now a member function, its constants
// static members), left unindented so that `diff -w` against step 20 shows only that.
// PEAK_PERCENT: the tile's share of the FP32 peak, for plan's estimate. VECTOR_A: A's tile is
// copied in 16-byte vectors and kept as 4 k of a row side by side (a_slot), not transposed.
template <int THREADS_X, int THREADS_Y, int THREAD_TILE_X, int THREAD_TILE_Y, int WARP_SHAPE_X, int PEAK_PERCENT, bool VECTOR_A = false>
struct Tile {
static constexpr int THREADS = THREADS_X * THREADS_Y;
static constexpr int BM = THREADS_Y * THREAD_TILE_Y;  // rows of C per block
static constexpr int BN = THREADS_X * THREAD_TILE_X;  // columns of C per block
static constexpr int WARP_SHAPE_Y = 32 / WARP_SHAPE_X;
static constexpr int WARPS_X = THREADS_X / WARP_SHAPE_X;  // warps side by side along N
// Registers a thread needs for data: the accumulators and two buffers of fragments (the
// next k's load in flight while this k's FMAs run); addresses, indices and the copy's
// bookkeeping take about 30 more. A thread may have at most 255, and MIN_BLOCKS blocks of
// THREADS threads must share the SM's 65536.
static constexpr int DATA_REGISTERS = THREAD_TILE_Y * THREAD_TILE_X + 2 * (THREAD_TILE_Y + THREAD_TILE_X);
static_assert(TUNE_SPLIT % K_UNROLL == 0 && K_UNROLL % 2 == 0,
              "the unrolled k loop covers the tile in whole passes, each of an even number of k, so that "
              "every copy of the body knows which of the two fragment buffers it reads");
static_assert(DATA_REGISTERS + 30 <= 255 && DATA_REGISTERS + 30 <= 65536 / (THREADS * MIN_BLOCKS),
              "the accumulators and fragments must fit the register budget, or the compiler spills them");
static_assert(DATA_REGISTERS + 30 <= MAX_REGISTERS_SPLIT && MAX_REGISTERS_SPLIT <= 255 &&
                  MAX_REGISTERS_SPLIT * THREADS <= 65536,
              "the split kernel's register cap must hold its data, and one block of it must fit the SM");
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "a block is whole warps, at most 1024 threads");
static_assert(32 % WARP_SHAPE_X == 0 && THREADS_X % WARP_SHAPE_X == 0 && THREADS_Y % WARP_SHAPE_Y == 0,
              "warps of WARP_SHAPE_X x WARP_SHAPE_Y lanes tile the THREADS_X x THREADS_Y threads");
static constexpr int STAGE_BYTES = (BM + A_PAD + BN + B_PAD) * TUNE_SPLIT * sizeof(float);  // a stage (a class's constants cannot call its functions)
static constexpr int STAGE_FLOATS_SPLIT = STAGES_SPLIT * STAGE_BYTES / sizeof(float);
static constexpr int ROW_BYTES = THREAD_TILE_X * THREADS * sizeof(float);  // one paired row of every thread's tile
static constexpr int BOX_BYTES = PAIR_ROWS * ROW_BYTES;  // PAIR_ROWS: the partner's band
static constexpr int SHARED_BYTES = STAGES * STAGE_BYTES,
              SHARED_BYTES_SPLIT = STAGES_SPLIT * STAGE_BYTES + BOX_BYTES + PAIR_ROWS * 8;  // the box and its mbarriers
static_assert(SHARED_BYTES <= sgemm::shared_limit() && SHARED_BYTES_SPLIT <= sgemm::shared_limit(),
              "a block has at most 99 KB of shared memory on sm_86 and sm_89, 163 KB on sm_80, 227 KB on sm_90: "
              "build with the GPU class's tuning (tunings/)");
static_assert(MAX_SPLITS >= 1 && MIN_SPLIT_K_TILES >= 1 && MIN_GAIN_PERCENT >= 0 && L2_BANDWIDTH_RATIO >= 1 && TAIL_OVERHEAD_K_TILES >= 0,
              "at least one piece, of at least one k tile; more pieces only for a gain, never for a loss");
static_assert(PAIR_ROWS >= 0 && PAIR_ROWS <= 4 && (PAIR_ROWS == 0 || THREAD_TILE_Y == 8),
              "pairing keeps one of the thread tile's two bands of 4 rows (tile_row) in each block of a pair");
static_assert(REDUCE_THREADS % 32 == 0 && REDUCE_THREADS <= 1024, "the reduction's blocks are whole warps");
static_assert(BESIDE_REDUCE_THREADS % 32 == 0 && BESIDE_REDUCE_THREADS * BESIDE_REDUCE_REGISTERS <= 4096,
              "a reduction block beside the whole tiles is whole warps and fits the registers a block of "
              "step 17's stream-K kernel leaves free (240 x 256 of the SM's 65,536); the launch checks the "
              "whole tiles' kernel as compiled (beside_fits)");
static_assert(BN % 4 == 0 && THREAD_TILE_X % 4 == 0,
              "partial sums are stored as float4: the block's columns start at multiples of 4");
static_assert(STAGES >= 2 && STAGES <= 4 && STAGES_SPLIT >= 2 && STAGES_SPLIT <= 4, "one stage is read while the others fill; past 4 the shared memory buys nothing");
static_assert(THREADS % TUNE_SPLIT == 0 && BM % (THREADS / TUNE_SPLIT) == 0 && THREADS % (BN / COPY_VECTOR) == 0 &&
                  TUNE_SPLIT % (THREADS / (BN / COPY_VECTOR)) == 0,
              "the threads cover whole rows of each tile per pass, and whole passes cover the tile");
static_assert(COPY_VECTOR == 1 || COPY_VECTOR == 2 || COPY_VECTOR == 4, "cp.async copies 4, 8 or 16 bytes");
static_assert(BN % COPY_VECTOR == 0 && (BN + B_PAD) % COPY_VECTOR == 0,
              "every vector copy's shared destination must be aligned to its size: pad B's rows by a "
              "multiple of COPY_VECTOR floats (+1 breaks 8-byte copies)");
static_assert(A_PAD % 4 == 0 && B_PAD % 4 == 0 && THREAD_TILE_Y % 4 == 0 && THREAD_TILE_X % 4 == 0,
              "fragments are read as aligned float4: rows and thread tiles are multiples of 4 floats");
static_assert(TUNE_SPLIT % A_COPY_RUN == 0 && 32 % A_COPY_RUN == 0,
              "a warp copies whole runs of A_COPY_RUN consecutive k, and whole runs make a row of the A tile");
static_assert(!VECTOR_A || (A_PAD >= 1 && THREADS % (TUNE_SPLIT / 4) == 0 && BM % (THREADS / (TUNE_SPLIT / 4)) == 0 && BM % 8 == 0),
              "A's vectors: TUNE_SPLIT / 4 lines of BM + 1 vectors fit the transposed tile's TUNE_SPLIT rows of "
              "BM + A_PAD floats, and the threads cover whole rows of vectors per pass");

// Element (row, col) of a row-major matrix with row stride ld.
template <class T>
__device__ __forceinline__ T& at(T* matrix, int ld, int row, int col) {
  return matrix[row * ld + col];
}

// *dst = *src, or 0 outside the matrix: edge tiles are padded with zeros, which add nothing.
// With ASYNC_LOADS the copy is a 4-byte cp.async; a source size of 0 makes it write zeros
// without reading the source. That source-size operand turns the LDGSTS into a predicated,
// zero-filling one, which costs time on this GPU even when nothing is filled, so a tile that
// lies wholly inside the matrices is copied without it (ZERO_FILL false, `inside` unused).
template <bool ZERO_FILL>
__device__ __forceinline__ void copy_or_zero(float* dst, const float* src, bool inside) {
  if constexpr (ASYNC_LOADS) {
    const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    if constexpr (ZERO_FILL)
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst_shared), "l"(src), "r"(inside ? 4 : 0));
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst_shared), "l"(src));
  } else {
    *dst = inside ? *src : 0.0f;
  }
}

// dst[0..COPY_VECTOR) = the COPY_VECTOR floats at src, of which the first `valid` are inside
// the matrix; zeros for the rest. One cp.async when the source is aligned to the vector
// (src_aligned: B's rows start at multiples of COPY_VECTOR floats): it copies the valid
// bytes and zero-fills the rest (ZERO_FILL false: all of it is valid; no source size).
// Otherwise, or without ASYNC_LOADS, one float at a time.
template <bool ZERO_FILL, int WIDTH = COPY_VECTOR>
__device__ __forceinline__ void copy_vector_or_zero(float* dst, const float* src, int valid, bool src_aligned) {
  if (ASYNC_LOADS && WIDTH > 1 && src_aligned) {
    const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    if constexpr (ZERO_FILL)
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst_shared), "l"(src),
                   "n"(WIDTH * sizeof(float)), "r"(valid * int(sizeof(float))));
    else
      asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst_shared), "l"(src),
                   "n"(WIDTH * sizeof(float)));
  } else {
#pragma unroll
    for (int v = 0; v < WIDTH; ++v) copy_or_zero<ZERO_FILL>(dst + v, src + v, v < valid);
  }
}

// Closes the group of cp.async copies this thread issued since the last commit: one group
// per tile (possibly empty), so that "the tile k_tile has landed" is "all but the newest
// groups have landed".
__device__ __forceinline__ void commit_copies() {
  if constexpr (ASYNC_LOADS) asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most IN_FLIGHT of this thread's newest cp.async groups are still in flight.
template <int IN_FLIGHT>
__device__ __forceinline__ void wait_copies() {
  if constexpr (ASYNC_LOADS) asm volatile("cp.async.wait_group %0;\n" ::"n"(IN_FLIGHT) : "memory");
}

// C[row][col] = alpha * acc + beta * C[row][col]; with beta == 0, C is write-only (BLAS
// semantics): NaN or garbage already in C never leaks into the result.
__device__ __forceinline__ void store_c(const sgemm::Problem& p, int row, int col, float acc) {
  float& c = at(p.C, p.ldc, row, col);
  c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * c;
}

// store_c for the 4 consecutive elements at (row, col .. col + 3), as one 16-byte access:
// the same arithmetic, so the same bits, as four store_c calls. C must be 16-byte aligned there.
__device__ __forceinline__ void store_c4(const sgemm::Problem& p, int row, int col, float a0, float a1, float a2,
                                         float a3) {
  float4& c = *reinterpret_cast<float4*>(&at(p.C, p.ldc, row, col));
  if (p.beta == 0.0f) {
    c = make_float4(p.alpha * a0, p.alpha * a1, p.alpha * a2, p.alpha * a3);
  } else {
    const float4 old = c;
    c = make_float4(p.alpha * a0 + p.beta * old.x, p.alpha * a1 + p.beta * old.y, p.alpha * a2 + p.beta * old.z,
                    p.alpha * a3 + p.beta * old.w);
  }
}

// Where a thread's outputs sit in the block's tile: in 4-wide vectors, with the threads of a
// row (column) of the thread grid owning side-by-side vectors, and the thread's next vector a
// whole thread grid further on. So the lanes of a warp read one contiguous run of shared memory
// per 16-byte fragment load (no bank conflicts), and a thread's vectors stay 16-byte aligned.
__device__ __forceinline__ int tile_row(int thread_y, int i) { return (i / 4) * (THREADS_Y * 4) + thread_y * 4 + i % 4; }
__device__ __forceinline__ int tile_col(int thread_x, int j) { return (j / 4) * (THREADS_X * 4) + thread_x * 4 + j % 4; }

// VECTOR_A: the A tile as TUNE_SPLIT / 4 lines, one per 4 k, each of BM + 1 vectors (row r's
// 4 k side by side, in slot a_slot(r) of the line: r rotated by r / 8 within its group of 8).
// A warp's copies (8 vectors of a row, 4 rows) and its fragment loads (rows 4 apart) then fall
// in 8 different 16-byte bank groups each: no conflicts. In floats the lines take no more than
// the transposed tile's TUNE_SPLIT x (BM + A_PAD).
static constexpr int A_LINE = BM + 1;  // vectors per line
__device__ __forceinline__ static int a_slot(int r) { return (r & ~7) | ((r + (r >> 3)) & 7); }

// global -> shared: the TUNE_SPLIT-wide tiles of A and B that start at column / row k0.
// Consecutive threads take consecutive elements of a row, so the global loads coalesce. A
// thread copies the same columns of both tiles every time, one pass of rows apart, so its
// addresses and bounds are worked out once per tile, not once per element.
template <bool ZERO_FILL, bool B_ALIGNED>
__device__ __forceinline__ void copy_tile_elements(const sgemm::Problem& p, float (&sA)[TUNE_SPLIT][BM + A_PAD], float (&sB)[TUNE_SPLIT][BN + B_PAD],
                                                   int block_row, int block_col, int k0, int tid) {
  constexpr int A_PASS = THREADS / TUNE_SPLIT;  // rows of the A tile copied per pass
  // Lanes copy runs of A_COPY_RUN consecutive k, the next run one row further down. As
  // BM + A_PAD = 4 (mod 32), a warp's transposed stores sA[k][r] fall in 32 different banks
  // with 8-float runs (4 rows per warp), 16 with 16-float runs (2 rows), 8 with a whole row
  // of 32: fewer rows per warp read fewer cache lines, more rows conflict less.
  if constexpr (VECTOR_A) {  // lanes copy a row's TUNE_SPLIT / 4 vectors, one each (coalesced), the next row beside
    constexpr int A_VECTORS = TUNE_SPLIT / 4, A_VECTOR_PASS = THREADS / A_VECTORS;  // vectors per row, rows per pass
    const int a_row = tid / A_VECTORS, a_q = tid % A_VECTORS;
    const float* a_src = &at(p.A, p.lda, block_row + a_row, k0 + a_q * 4);
    const int a_valid = max(0, min(p.K - k0 - a_q * 4, 4));  // floats inside the matrix
    const bool a_aligned = p.lda % 4 == 0 && reinterpret_cast<uintptr_t>(p.A) % 16 == 0;  // else one float at a time
    float4* line = reinterpret_cast<float4*>(&sA[0][0]) + a_q * A_LINE;
#pragma unroll
    for (int n = 0; n < BM / A_VECTOR_PASS; ++n) {
      const int r = a_row + n * A_VECTOR_PASS;
      copy_vector_or_zero<ZERO_FILL, 4>(reinterpret_cast<float*>(line + a_slot(r)), a_src + n * A_VECTOR_PASS * p.lda,
                                        block_row + r < p.M ? a_valid : 0, a_aligned);
    }
  } else {
  const int a_row = tid / A_COPY_RUN % A_PASS, a_col = tid / (A_COPY_RUN * A_PASS) * A_COPY_RUN + tid % A_COPY_RUN;
  const float* a_src = &at(p.A, p.lda, block_row + a_row, k0 + a_col);
  const bool a_col_inside = k0 + a_col < p.K;
#pragma unroll
  for (int n = 0; n < BM / A_PASS; ++n) {
    const int r = a_row + n * A_PASS;
    copy_or_zero<ZERO_FILL>(&sA[a_col][r], a_src + n * A_PASS * p.lda, a_col_inside && block_row + r < p.M);
  }
  }
  constexpr int B_VECTORS = BN / COPY_VECTOR;  // vectors per row of the B tile
  constexpr int B_PASS = THREADS / B_VECTORS;   // rows of the B tile copied per pass
  const int b_row = tid / B_VECTORS, b_col = tid % B_VECTORS * COPY_VECTOR;
  const float* b_src = &at(p.B, p.ldb, k0 + b_row, block_col + b_col);
  const int b_valid = max(0, min(p.N - block_col - b_col, COPY_VECTOR));  // floats inside the matrix
  // B_ALIGNED: the host launches this kernel only where B is aligned, so the vector copies
  // alone are compiled in. Otherwise, with ALIGNED_KERNELS, only where it is not: the
  // one-float copies alone. Without ALIGNED_KERNELS, both, chosen here at run time.
  const bool b_aligned = B_ALIGNED || (!ALIGNED_KERNELS && p.ldb % COPY_VECTOR == 0 &&
                                       reinterpret_cast<uintptr_t>(p.B) % sizeof(float[COPY_VECTOR]) == 0);
#pragma unroll
  for (int n = 0; n < TUNE_SPLIT / B_PASS; ++n) {
    const int r = b_row + n * B_PASS;
    copy_vector_or_zero<ZERO_FILL>(&sB[r][b_col], b_src + n * B_PASS * p.ldb, k0 + r < p.K ? b_valid : 0, b_aligned);
  }
}

// The tile at k0. With SKIP_ZERO_FILL, a tile wholly inside A and B (all but the last block
// row, the last block column and the last k tile) is copied without zero-fill.
template <bool B_ALIGNED>
__device__ __forceinline__ void copy_tile(const sgemm::Problem& p, float (&sA)[TUNE_SPLIT][BM + A_PAD], float (&sB)[TUNE_SPLIT][BN + B_PAD],
                                          int block_row, int block_col, int k0, int tid) {
  if (SKIP_ZERO_FILL && ASYNC_LOADS && block_row + BM <= p.M && block_col + BN <= p.N && k0 + TUNE_SPLIT <= p.K)
    copy_tile_elements<false, B_ALIGNED>(p, sA, sB, block_row, block_col, k0, tid);
  else
    copy_tile_elements<true, B_ALIGNED>(p, sA, sB, block_row, block_col, k0, tid);
}

// shared -> registers: this thread's column of A and row of B at k (a_frag, b_frag).
__device__ __forceinline__ void load_fragments(float (&a_frag)[THREAD_TILE_Y], float (&b_frag)[THREAD_TILE_X],
                                               const float (&sA)[TUNE_SPLIT][BM + A_PAD],
                                               const float (&sB)[TUNE_SPLIT][BN + B_PAD], int k, int thread_x,
                                               int thread_y) {
#pragma unroll
  for (int i = 0; i < THREAD_TILE_Y; ++i) a_frag[i] = sA[k][tile_row(thread_y, i)];
#pragma unroll
  for (int j = 0; j < THREAD_TILE_X; ++j) b_frag[j] = sB[k][tile_col(thread_x, j)];
}

// acc += a b^T: the thread tile's THREAD_TILE_Y x THREAD_TILE_X FFMAs of one k. Each output
// gets the same operations either way; only the order the compiler is handed them differs.
// Column by column (FFMA_BY_COLUMN), consecutive FFMAs share their b operand, which the
// hardware can keep in its operand reuse cache instead of reading it from the register file
// again; row by row they share a. The compiler schedules and allocates registers from this
// order, and column by column comes out faster on the H100 (see step 14's page), except in
// the split kernel (see step 17's page).
template <bool BY_COLUMN>
__device__ __forceinline__ void outer_product(float (&acc)[THREAD_TILE_Y][THREAD_TILE_X],
                                              const float (&a)[THREAD_TILE_Y], const float (&b)[THREAD_TILE_X]) {
  if constexpr (BY_COLUMN) {
#pragma unroll
    for (int j = 0; j < THREAD_TILE_X; ++j)
#pragma unroll
      for (int i = 0; i < THREAD_TILE_Y; ++i) acc[i][j] += a[i] * b[j];
  } else {
#pragma unroll
    for (int i = 0; i < THREAD_TILE_Y; ++i)
#pragma unroll
      for (int j = 0; j < THREAD_TILE_X; ++j) acc[i][j] += a[i] * b[j];
  }
}

// Programmatic dependent launch (sm_90): the split kernel lets the reduction's launch begin
// once every block has finished its k loop (launch_dependents), and the reduction waits for
// the whole split kernel to finish, its stores visible, before it reads a partial sum
// (wait_for_producer). Only the launch overlaps; the data dependence is kept. STREAM_FIRST's
// kernels let the next launch begin at their start, and end only after the launch before
// them (wait_for_producer at their end).
__device__ __forceinline__ void launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_producer() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Thread block clusters (sm_90): the blocks in this block's cluster (1 where the launch asked
// for none), this block's rank in it, the two halves of a barrier across it (arrive, then wait
// for every thread of the cluster to have arrived), and the address of the same byte of
// shared memory in block `rank`.
__device__ __forceinline__ unsigned cluster_blocks() {
  unsigned blocks = 1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(blocks));
#endif
  return blocks;
}
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned rank = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
#endif
  return rank;
}
__device__ __forceinline__ void cluster_arrive_relaxed() {  // no ordering: only "this block has started"
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.relaxed;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
#endif
}
__device__ __forceinline__ unsigned cluster_shared(const void* local, unsigned rank) {
  unsigned remote = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(remote)
               : "r"(static_cast<unsigned>(__cvta_generic_to_shared(local))), "r"(rank));
#endif
  return remote;
}

// The box's mbarriers, one per paired row, each expecting that row's bytes from the partner
// (set up by one thread at the kernel's start, before the cluster's first arrive); a 16-byte
// st.async into the partner's box, counted in bytes on one of its mbarriers; and the wait
// until row `row`'s bytes have all landed here.
__device__ __forceinline__ unsigned long long* box_barriers() {
  extern __shared__ __align__(16) float shared[];
  return reinterpret_cast<unsigned long long*>(shared + STAGE_FLOATS_SPLIT + BOX_BYTES / sizeof(float));
}
__device__ __forceinline__ void prepare_box_barriers() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  for (int row = 0; row < PAIR_ROWS; ++row) {
    const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(box_barriers() + row));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar) : "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(ROW_BYTES) : "memory");
  }
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void store_async(unsigned address, float a, float b, float c, float d, unsigned barrier) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(address), "f"(a),
               "f"(b), "f"(c), "f"(d), "r"(barrier)
               : "memory");
#endif
}
__device__ __forceinline__ void wait_box(int row) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(box_barriers() + row));
  asm volatile(
      "{\n .reg .pred done;\n"
      "WAIT_BOX_%=:\n"
      " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], 0;\n"
      " @!done bra WAIT_BOX_%=;\n"
      "}\n" ::"r"(bar)
      : "memory");
#endif
}

// PAIR_ROWS: this block and its partner (the other block of its cluster) computed pieces 2c and
// 2c+1 of one tile. Rows i with i % 4 < PAIR_ROWS of every thread's tile (rows of C with
// row % 4 < PAIR_ROWS, tile_row keeping row % 4 == i % 4) are the paired rows:
// each block keeps those of its half of the tile (i / 4 == KEEP, its rank) and pushes those
// of the other half into its partner's box (shared memory past the stages, [row][j/4][thread]:
// a warp's 16-byte stores side by side). While they fly it stores its other rows to its own
// slice z, as without pairing. Once the partner's rows have landed it adds them to what it
// kept (two terms: the same bits in either order) and stores the sums to slice 2c. The rows
// cross as st.async, each counted in bytes on its own mbarrier in the partner's box, and a
// block waits for each row in turn, so that it stores the sums of the first rows while the
// last ones still cross; there is no release fence and no barrier after the k loop.
template <int KEEP>
__device__ __forceinline__ void store_pair(const sgemm::Problem& p, float (&acc)[THREAD_TILE_Y][THREAD_TILE_X], float* partials,
                                           int ld_partials, int block_row, int block_col, int thread_x, int thread_y, int tid) {
  constexpr int HALF = THREAD_TILE_Y / 2, VECTORS = THREAD_TILE_X / 4;
  extern __shared__ __align__(16) float shared[];
  float4* box = reinterpret_cast<float4*>(shared + STAGE_FLOATS_SPLIT);  // [PAIR_ROWS][VECTORS][THREADS]
  const unsigned remote = cluster_shared(box, 1 - KEEP);
  const unsigned remote_barriers = cluster_shared(box_barriers(), 1 - KEEP);
  cluster_wait();  // the partner has started (its arrive at the kernel's start): its shared memory is there to write
#pragma unroll
  for (int i = 0; i < PAIR_ROWS; ++i)
#pragma unroll
    for (int j = 0; j < THREAD_TILE_X; j += 4) {
      const int send = (1 - KEEP) * HALF + i;
      const unsigned to = remote + ((i * VECTORS + j / 4) * THREADS + tid) * sizeof(float4);
      // counted on the partner's mbarrier of row i
      store_async(to, acc[send][j], acc[send][j + 1], acc[send][j + 2], acc[send][j + 3], remote_barriers + i * 8);
    }
  auto store = [&](float* slice, int i, int j, float4 v) {
    const int row = block_row + tile_row(thread_y, i);
    const int col = block_col + tile_col(thread_x, j);  // a multiple of 4, as is ld_partials
    if (row < p.M && col < ld_partials) *reinterpret_cast<float4*>(&at(slice, ld_partials, row, col)) = v;
  };
  float* own = partials + std::size_t(blockIdx.z) * p.M * ld_partials;  // [M][ld_partials]
#pragma unroll
  for (int i = 0; i < THREAD_TILE_Y; ++i)
#pragma unroll
    for (int j = 0; j < THREAD_TILE_X; j += 4)
      if (i % HALF >= PAIR_ROWS) store(own, i, j, make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
  float* pair = partials + std::size_t(blockIdx.z & ~1u) * p.M * ld_partials;
#pragma unroll
  for (int i = 0; i < PAIR_ROWS; ++i) {
    wait_box(i);  // the partner's row i has landed here
#pragma unroll
    for (int j = 0; j < THREAD_TILE_X; j += 4) {
      const int keep = KEEP * HALF + i;
      const float4 other = box[(i * VECTORS + j / 4) * THREADS + tid];
      store(pair, keep, j, make_float4(acc[keep][j] + other.x, acc[keep][j + 1] + other.y, acc[keep][j + 2] + other.z, acc[keep][j + 3] + other.w));
    }
  }
}

// Where tile number t of the stream-K kernel lies in the grid of tiles (row, column):
// column by column, down each column of tiles before the next.
__device__ __forceinline__ int2 tile_position(int t, int tiles_m) { return make_int2(t % tiles_m, t / tiles_m); }

// One block's tile of C. SPLIT: the block computes one piece of K (blockIdx.z) and writes
// its raw sums A*B (no alpha, no beta) to partials, [gridDim.z][M][ld_partials], where
// ld_partials is N rounded up to 4 (in a cluster of two, store_pair: the pair's sums to slice
// 2c in the paired rows). Not SPLIT: all of K, and C itself, as in step 14. The
// two are separate kernels, so the unsplit one is compiled from step 14's code alone: the split's
// extra arguments and branches would change its register allocation. STREAM (the stream-K
// kernel, which calls this once per segment of its work): tile number seg_tile, k tiles
// [seg_k_first, + seg_k_tiles); C where that is all of K (piece == nullptr), else the raw
// sums to `piece`, [BM][BN].
template <bool B_ALIGNED, bool SPLIT, bool STREAM = false>
__device__ __forceinline__ void block_gemm(const sgemm::Problem& p, int k_tiles_per_split, float* partials,
                                           int ld_partials, int seg_tile = 0, int seg_k_first = 0,
                                           int seg_k_tiles = 0, float* piece = nullptr) {
  // The stages outgrow the 48 KB of static shared memory at TUNE_SPLIT 32, so they live in
  // dynamic shared memory (the launch raises the block's limit): A's stages, then B's.
  constexpr int stages = SPLIT ? STAGES_SPLIT : STAGES;  // this kernel's ring
  extern __shared__ __align__(16) float shared[];
  auto& sA = *reinterpret_cast<float(*)[stages][TUNE_SPLIT][BM + A_PAD]>(shared);  // [stages][TUNE_SPLIT][BM]
  auto& sB = *reinterpret_cast<float(*)[stages][TUNE_SPLIT][BN + B_PAD]>(shared + stages * TUNE_SPLIT * (BM + A_PAD));

  const int tid = threadIdx.y * THREADS_X + threadIdx.x;
  // PAIR_ROWS: the first phase of the cluster's barrier says "started": a block may write into
  // its partner's shared memory only once the partner runs (store_pair waits for it).
  if constexpr (SPLIT)
    if (PAIR_ROWS > 0 && cluster_blocks() == 2) {
      if (tid == 0) prepare_box_barriers();  // before the arrive: the partner's first st.async comes after it
      cluster_arrive_relaxed();
    }
  const int2 seg_at = STREAM ? tile_position(seg_tile, sgemm::ceil_div(p.M, BM)) : int2{};
  const int block_row = STREAM ? seg_at.x * BM : (SWAP_XY ? blockIdx.x : blockIdx.y) * BM;
  const int block_col = STREAM ? seg_at.y * BN : (SWAP_XY ? blockIdx.y : blockIdx.x) * BN;
  if constexpr (STREAM) __syncthreads();  // every warp is done with the previous segment's stages
  // This thread's place in the block's thread grid: its warp's rectangle, then its lane.
  const int warp = tid / 32, lane = tid % 32;
  const int thread_x = (warp % WARPS_X) * WARP_SHAPE_X + lane % WARP_SHAPE_X;
  const int thread_y = (warp / WARPS_X) * WARP_SHAPE_Y + lane / WARP_SHAPE_X;

  // The split kernel keeps the barrier at the top of each tile and its FFMAs row by row:
  // both measured faster there than the unsplit kernel's choices (step 15's page).
  constexpr bool early_sync = !SPLIT && EARLY_SYNC && !VECTOR_A;  // VECTOR_A: the barrier at the top of each tile
  constexpr bool by_column = !SPLIT && FFMA_BY_COLUMN;
  float acc[THREAD_TILE_Y][THREAD_TILE_X] = {};  // [TY][TX]: this thread's outputs
  // This block's piece of K: k tiles [k_first / TUNE_SPLIT, + k_tiles); the last may be short.
  const int k_first = STREAM ? seg_k_first * TUNE_SPLIT : SPLIT ? blockIdx.z * k_tiles_per_split * TUNE_SPLIT : 0;
  const int k_tiles = STREAM ? seg_k_tiles : SPLIT ? min(k_tiles_per_split, sgemm::ceil_div(p.K - k_first, TUNE_SPLIT))
                            : sgemm::ceil_div(p.K, TUNE_SPLIT);  // k_tile runs over these
  // Tiles 0 .. stages-2 in flight, one group each (empty past the last tile: the wait below
  // counts groups, so every tile slot commits one).
#pragma unroll
  for (int s = 0; s < stages - 1; ++s) {
    if (s < k_tiles) copy_tile<B_ALIGNED>(p, sA[s], sB[s], block_row, block_col, k_first + s * TUNE_SPLIT, tid);
    commit_copies();
  }
  int stage = 0;               // the stage tile k_tile is read from
  int fill_stage = stages - 1;  // the stage tile k_tile + stages - 1 is copied into
  // shared -> registers, one k ahead of the math: buffer k % 2 is used while k + 1 loads.
  float a_frag[2][THREAD_TILE_Y], b_frag[2][THREAD_TILE_X];  // [2][TY], [2][TX]
  if (early_sync && k_tiles > 0) {  // tile 0's first k; every later tile's loads under the last k before it
    wait_copies<stages - 2>();
    __syncthreads();
    load_fragments(a_frag[0], b_frag[0], sA[0], sB[0], 0, thread_x, thread_y);
  }
  for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
    if constexpr (!early_sync) {
      wait_copies<stages - 2>();  // this thread's copies of tile k_tile have landed...
      __syncthreads();  // ...and everyone's; and everyone is done reading tile k_tile - 1's stage
    }

    // Tile k_tile + stages - 1 flies into the stage tile k_tile - 1 was read from.
    if (k_tile + stages - 1 < k_tiles)
      copy_tile<B_ALIGNED>(p, sA[fill_stage], sB[fill_stage], block_row, block_col, k_first + (k_tile + stages - 1) * TUNE_SPLIT, tid);
    commit_copies();

    const int next_stage = stage + 1 == stages ? 0 : stage + 1;
    if constexpr (VECTOR_A) {  // per 4 k: one 16-byte load of each of this thread's rows of A, then 4 k of FFMAs
      const float4* lines = reinterpret_cast<const float4*>(&sA[stage][0][0]);
#pragma unroll (K_UNROLL + 3) / 4
      for (int q = 0; q < TUNE_SPLIT / 4; ++q) {
        float4 a4[THREAD_TILE_Y];
#pragma unroll
        for (int i = 0; i < THREAD_TILE_Y; ++i) a4[i] = lines[q * A_LINE + a_slot(tile_row(thread_y, i))];
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          float a[THREAD_TILE_Y], b[THREAD_TILE_X];
#pragma unroll
          for (int i = 0; i < THREAD_TILE_Y; ++i) a[i] = kk == 0 ? a4[i].x : kk == 1 ? a4[i].y : kk == 2 ? a4[i].z : a4[i].w;
#pragma unroll
          for (int j = 0; j < THREAD_TILE_X; ++j) b[j] = sB[stage][q * 4 + kk][tile_col(thread_x, j)];
          outer_product<by_column>(acc, a, b);
        }
      }
    } else {
    if constexpr (!early_sync) load_fragments(a_frag[0], b_frag[0], sA[stage], sB[stage], 0, thread_x, thread_y);
#pragma unroll K_UNROLL
    for (int k = 0; k < TUNE_SPLIT; ++k) {
      if (k + 1 < TUNE_SPLIT) {
        load_fragments(a_frag[(k + 1) % 2], b_frag[(k + 1) % 2], sA[stage], sB[stage], k + 1, thread_x, thread_y);
      } else if (early_sync) {
        // The last k: this tile's fragments are all in registers. Wait for tile k_tile + 1
        // here rather than at the top of the next pass, so that its first fragments load
        // while this k's FFMAs run, instead of every warp waiting for them after the barrier.
        wait_copies<stages - 2>();  // this thread's copies of tile k_tile + 1 have landed...
        __syncthreads();  // ...and everyone's; and everyone is done reading tile k_tile's stage
        if (k_tile + 1 < k_tiles)
          load_fragments(a_frag[0], b_frag[0], sA[next_stage], sB[next_stage], 0, thread_x, thread_y);
      }
      outer_product<by_column>(acc, a_frag[k % 2], b_frag[k % 2]);
    }
    }
    stage = next_stage;  // the ring advances by one stage per tile
    fill_stage = fill_stage + 1 == stages ? 0 : fill_stage + 1;
  }

  if constexpr (STREAM) {
    if (piece) {  // a piece of the tile's K: the raw sums, for sgemm_kernel_stream_reduce
#pragma unroll
      for (int i = 0; i < THREAD_TILE_Y; ++i)
#pragma unroll
        for (int j = 0; j < THREAD_TILE_X; j += 4)
          *reinterpret_cast<float4*>(&piece[tile_row(thread_y, i) * BN + tile_col(thread_x, j)]) =
              make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      return;
    }
  }
  if constexpr (SPLIT) {  // one piece of K: the raw sums go to this piece's slice, 4 columns at a time
    launch_dependents();
    if (PAIR_ROWS > 0 && cluster_blocks() == 2) {  // with its partner's piece (pieces launched in pairs)
      if (cluster_rank() == 0)
        store_pair<0>(p, acc, partials, ld_partials, block_row, block_col, thread_x, thread_y, tid);
      else
        store_pair<1>(p, acc, partials, ld_partials, block_row, block_col, thread_x, thread_y, tid);
      return;
    }
    float* slice = partials + std::size_t(blockIdx.z) * p.M * ld_partials;  // [M][ld_partials]
#pragma unroll
    for (int i = 0; i < THREAD_TILE_Y; ++i)
#pragma unroll
      for (int j = 0; j < THREAD_TILE_X; j += 4) {
        const int row = block_row + tile_row(thread_y, i);
        const int col = block_col + tile_col(thread_x, j);  // a multiple of 4, as is ld_partials
        if (row < p.M && col < ld_partials)
          *reinterpret_cast<float4*>(&at(slice, ld_partials, row, col)) =
              make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      }
    return;
  }
  // One block per SM: while this block stores its 128 x 256 outputs the SM does nothing else,
  // so C goes out as 16-byte vectors where it can (C's rows 16-byte aligned, the vector inside).
  const bool c_aligned = VECTOR_C && p.ldc % 4 == 0 && reinterpret_cast<uintptr_t>(p.C) % 16 == 0;
#pragma unroll
  for (int i = 0; i < THREAD_TILE_Y; ++i)
#pragma unroll
    for (int j = 0; j < THREAD_TILE_X; j += 4) {
      const int row = block_row + tile_row(thread_y, i);
      const int col = block_col + tile_col(thread_x, j);  // the first of 4 consecutive columns
      if (row >= p.M) continue;
      if (c_aligned && col + 4 <= p.N)
        store_c4(p, row, col, acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      else
#pragma unroll
        for (int v = 0; v < 4; ++v)
          if (col + v < p.N) store_c(p, row, col + v, acc[i][j + v]);
    }
}

template <bool B_ALIGNED>
__device__ __forceinline__ void sgemm_kernel_body(sgemm::Problem p) {
  block_gemm<B_ALIGNED, false>(p, 0, nullptr, 0);
}

// The split kernel's registers are capped by __maxnreg__ (CUDA 12.4 and newer) rather than by
// __launch_bounds__ (the two cannot be combined): left to itself the compiler takes 251, and
// at the cap of 240 it schedules the k loop differently, a little faster at the split shapes
// on the H100 (step 17's page). The cap moves the schedule, not the spills: there are none.
template <bool B_ALIGNED>
__device__ __forceinline__ void sgemm_kernel_split_body(sgemm::Problem p, int k_tiles_per_split, float* partials, int ld_partials) {
  block_gemm<B_ALIGNED, true>(p, k_tiles_per_split, partials, ld_partials);
}

// A reduction's output: C's four elements at (row, col .. col + 3) = alpha * sum + beta * C,
// as one 16-byte store_c4 where C is aligned there and all four lie inside, else one float
// at a time.
__device__ __forceinline__ void store_sum(const sgemm::Problem& p, int row, int col, float4 sum) {
  const bool c_aligned = VECTOR_C && p.ldc % 4 == 0 && reinterpret_cast<uintptr_t>(p.C) % 16 == 0;
  if (c_aligned && col + 4 <= p.N) {
    store_c4(p, row, col, sum.x, sum.y, sum.z, sum.w);
    return;
  }
  const float out[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
  for (int v = 0; v < 4; ++v)
    if (col + v < p.N) store_c(p, row, col + v, out[v]);
}

// Stream-K, for shapes whose last wave of tiles would leave SMs idle: one block per slot
// (gridDim.x = the blocks the GPU runs at once; every block's range holds at least one
// iteration, see stream_k_tiles). Tiles are numbered in tile_position's order. The first
// dp_tiles tiles are whole tiles, dealt round robin (whole waves). The k-tile iterations of the sk_tiles tiles after them,
// `total` = sk_tiles x k_tiles in tile order, are cut into gridDim.x equal ranges, block b
// taking [stream_start(b), stream_start(b + 1)). A range may start or end inside a tile; a
// tile not wholly inside one range is computed in pieces, each stored to the piece's slot
// and added up by sgemm_kernel_stream_reduce. A block has at most two pieces, its first segment's and
// its last's: slot 2b for a piece of the tile its range starts in, 2b + 1 otherwise.
__device__ __forceinline__ long long stream_start(long long total, int b, int blocks) { return total * b / blocks; }
// The block whose range holds iteration i: the last b with stream_start(b) <= i.
__device__ __forceinline__ int stream_owner(long long i, long long total, int blocks) {
  return static_cast<int>(((i + 1) * blocks - 1) / total);
}
__device__ __forceinline__ int stream_slot(int b, int t, long long total, int blocks, int k_tiles) {
  return 2 * b + (stream_start(total, b, blocks) / k_tiles == t ? 0 : 1);
}

template <bool B_ALIGNED>
__device__ __forceinline__ void sgemm_kernel_stream_body(sgemm::Problem p, int dp_tiles, int sk_tiles, float* slots) {
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  for (int t = blockIdx.x; t < dp_tiles; t += gridDim.x)
    block_gemm<B_ALIGNED, false, true>(p, 0, nullptr, 0, t, 0, k_tiles, nullptr);
  const long long total = static_cast<long long>(sk_tiles) * k_tiles;
  long long it = stream_start(total, blockIdx.x, gridDim.x);
  const long long end = stream_start(total, blockIdx.x + 1, gridDim.x);
  while (it < end) {
    const int t = static_cast<int>(it / k_tiles), kf = static_cast<int>(it % k_tiles);
    const int kn = static_cast<int>(min(static_cast<long long>(k_tiles - kf), end - it));
    float* piece = kf == 0 && kn == k_tiles ? nullptr
                   : slots + std::size_t(stream_slot(blockIdx.x, t, total, gridDim.x, k_tiles)) * BM * BN;
    block_gemm<B_ALIGNED, false, true>(p, 0, nullptr, 0, dp_tiles + t, kf, kn, piece);
    it += kn;
  }
  launch_dependents();
}

// STREAM_FIRST: sgemm_kernel_stream's two loops as kernels of their own (step 17's kernel,
// launched where STREAM_FIRST is false or cannot be had, is left as it was: its speed moves
// with any code added to it, see the page). First the stream-K iterations alone, tiles
// numbered from dp_tiles as there; each block, once its pieces are stored, counts itself in
// at sk_done for the reduction. The launch after it may start at once.
template <bool B_ALIGNED>
__device__ __forceinline__ void sgemm_kernel_stream_only_body(sgemm::Problem p, int dp_tiles, int sk_tiles, float* slots, unsigned* sk_done) {
  launch_dependents();  // the whole tiles' launch does not read what this one writes
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  const long long total = static_cast<long long>(sk_tiles) * k_tiles;
  long long it = stream_start(total, blockIdx.x, gridDim.x);
  const long long end = stream_start(total, blockIdx.x + 1, gridDim.x);
  while (it < end) {
    const int t = static_cast<int>(it / k_tiles), kf = static_cast<int>(it % k_tiles);
    const int kn = static_cast<int>(min(static_cast<long long>(k_tiles - kf), end - it));
    float* piece = kf == 0 && kn == k_tiles ? nullptr
                   : slots + std::size_t(stream_slot(blockIdx.x, t, total, gridDim.x, k_tiles)) * BM * BN;
    block_gemm<B_ALIGNED, false, true>(p, 0, nullptr, 0, dp_tiles + t, kf, kn, piece);
    it += kn;
  }
  __threadfence();  // this thread's piece stores are visible GPU-wide before the count
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(sk_done, 1u);
}

// Then the whole tiles, tiles [0, tiles) dealt round robin, as sgemm_kernel_stream's first
// loop deals them. The reduction's launch after it may start once all its blocks run; this
// one ends only after the launch before it (griddepcontrol.wait), so that the stream's order
// holds.
template <bool B_ALIGNED>
__device__ __forceinline__ void sgemm_kernel_whole_tiles_body(sgemm::Problem p, int tiles) {
  launch_dependents();  // the reduction beside these blocks
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  for (int t = blockIdx.x; t < tiles; t += gridDim.x)
    block_gemm<B_ALIGNED, false, true>(p, 0, nullptr, 0, t, 0, k_tiles, nullptr);
  wait_for_producer();  // this launch ends after the one before it
}

// C for the stream-K tiles that were cut into pieces: the pieces added in block order, which
// is k order, the same on every run; alpha and beta applied. Four columns per thread.
__device__ __forceinline__ void sgemm_kernel_stream_reduce_body(sgemm::Problem p, int dp_tiles, int sk_tiles, int blocks, const float* slots) {
  const long long vector = static_cast<long long>(blockIdx.x) * REDUCE_THREADS + threadIdx.x;
  constexpr int VECTORS = BM * BN / 4;
  if (vector >= static_cast<long long>(sk_tiles) * VECTORS) return;
  const int t = static_cast<int>(vector / VECTORS), v = static_cast<int>(vector % VECTORS);
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  const long long total = static_cast<long long>(sk_tiles) * k_tiles;
  const int lo = stream_owner(static_cast<long long>(t) * k_tiles, total, blocks);
  const int hi = stream_owner(static_cast<long long>(t + 1) * k_tiles - 1, total, blocks);
  if (lo == hi) return;  // one block computed the whole tile and wrote C
  wait_for_producer();
  const int2 at = tile_position(dp_tiles + t, sgemm::ceil_div(p.M, BM));
  const int r = v / (BN / 4), c = v % (BN / 4) * 4;
  const int row = at.x * BM + r, col = at.y * BN + c;
  if (row >= p.M || col >= p.N) return;
  float4 sum = *reinterpret_cast<const float4*>(slots + std::size_t(stream_slot(lo, t, total, blocks, k_tiles)) * BM * BN + r * BN + c);
  for (int b = lo + 1; b <= hi; ++b) {
    const float4 x = *reinterpret_cast<const float4*>(slots + std::size_t(stream_slot(b, t, total, blocks, k_tiles)) * BM * BN + r * BN + c);
    sum.x += x.x, sum.y += x.y, sum.z += x.z, sum.w += x.w;
  }
  store_sum(p, row, col, sum);
}

// STREAM_FIRST: sgemm_kernel_stream_reduce's sums, the same bits, from small blocks that run on
// the SMs beside the whole tiles' blocks, one cut tile per block at a time. Launched after the
// whole tiles, it cannot wait for stream-K with griddepcontrol.wait, which would wait for the
// whole tiles too: its thread 0 waits until sk_done, the count of stream-K blocks done, reaches
// `target` (an acquire load, paired with their fences), and the block passes a barrier.
__device__ __forceinline__ void sgemm_kernel_stream_reduce_beside_body(sgemm::Problem p, int dp_tiles, int sk_tiles, int blocks, const float* slots,
                                      const unsigned* sk_done, unsigned target) {
  if (threadIdx.x == 0) {
    unsigned done = 0;
    do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(done) : "l"(sk_done) : "memory");
    while (static_cast<int>(done - target) < 0);
  }
  __syncthreads();
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  const long long total = static_cast<long long>(sk_tiles) * k_tiles;
  constexpr int VECTORS = BM * BN / 4;
  for (int t = blockIdx.x; t < sk_tiles; t += gridDim.x) {
    const int lo = stream_owner(static_cast<long long>(t) * k_tiles, total, blocks);
    const int hi = stream_owner(static_cast<long long>(t + 1) * k_tiles - 1, total, blocks);
    if (lo == hi) continue;  // one block computed the whole tile and wrote C
    const int2 at = tile_position(dp_tiles + t, sgemm::ceil_div(p.M, BM));
    const float4* first = reinterpret_cast<const float4*>(slots + std::size_t(stream_slot(lo, t, total, blocks, k_tiles)) * BM * BN);
#pragma unroll 2
    for (int v = threadIdx.x; v < VECTORS; v += BESIDE_REDUCE_THREADS) {
      const int row = at.x * BM + v / (BN / 4), col = at.y * BN + v % (BN / 4) * 4;
      if (row >= p.M || col >= p.N) continue;
      float4 sum = __ldcg(first + v);
      for (int b = lo + 1; b <= hi; ++b) {  // block b's range starts in tile t: its slot is 2b
        const float4 x = __ldcg(reinterpret_cast<const float4*>(slots + std::size_t(2 * b) * BM * BN) + v);
        sum.x += x.x, sum.y += x.y, sum.z += x.z, sum.w += x.w;
      }
      store_sum(p, row, col, sum);
    }
  }
  wait_for_producer();  // this launch ends after the whole tiles' launch before it
}

// C = alpha * (piece 0 + piece 1 + ... + piece splits-1) + beta * C, four columns of one row
// per vector. The pieces are added in the same order on every run, so the result has the
// same bits every time (float atomics would add them in whatever order the blocks finish).
// pair_rows (PAIR_ROWS where the split kernel ran in pairs, else 0): in rows with
// row % 4 < pair_rows, slice 2c already holds pieces 2c + 2c+1 and slice 2c+1 is not read.
// Where C has few vectors for the GPU (a lone 64 x 64 tile in 128 pieces, at 64 x 64 x 65536,
// is 1,024 vectors), a vector's slices are shared by `groups` threads of a block (a power of
// two up to MAX_REDUCE_GROUPS), each adding a run of consecutive slices in registers, and the
// first group then adds the runs in order through shared memory (`groups` depends on the GPU's
// SMs, so the bits do too). Each thread reads REDUCE_LOADS slices before it adds any, so that
// many loads are in flight (the order of the adds is unchanged by that).
__device__ __forceinline__ void sgemm_kernel_split_reduce_body(sgemm::Problem p, int splits, int groups, const float* partials, int ld_partials,
                                                               int pair_rows) {
  __shared__ float4 runs[REDUCE_THREADS];  // [groups][vectors_per_block]
  const int vectors_per_block = REDUCE_THREADS / groups;
  const int lane = threadIdx.x % vectors_per_block, group = threadIdx.x / vectors_per_block;
  const int vectors_per_row = ld_partials / 4;
  const long long vector = static_cast<long long>(blockIdx.x) * vectors_per_block + lane;
  const bool inside = vector < static_cast<long long>(p.M) * vectors_per_row;
  if (groups == 1 && !inside) return;
  wait_for_producer();  // the split kernel's partial sums are all written
  const int row = static_cast<int>(vector / vectors_per_row), col = static_cast<int>(vector % vectors_per_row) * 4;
  const std::size_t slice_floats = std::size_t(p.M) * ld_partials;
  const int step = row % 4 < pair_rows ? 2 : 1;  // a paired row: slice 2c holds pieces 2c and 2c+1
  const int terms = (splits + step - 1) / step;  // the slices read: 0, step, 2 step, ...
  const int run = (terms + groups - 1) / groups;  // slices a group adds (the last groups' runs may be shorter, or empty)
  const int first = group * run, last = first + run < terms ? first + run : terms;
  float4 sum = {};
  if (inside && first < last) {
    const float* piece = partials + std::size_t(row) * ld_partials + col;
    sum = *reinterpret_cast<const float4*>(piece + std::size_t(first) * step * slice_floats);
    for (int t = first + 1; t < last; t += REDUCE_LOADS) {
      float4 v[REDUCE_LOADS];
#pragma unroll
      for (int i = 0; i < REDUCE_LOADS; ++i)
        if (t + i < last) v[i] = *reinterpret_cast<const float4*>(piece + std::size_t(t + i) * step * slice_floats);
#pragma unroll
      for (int i = 0; i < REDUCE_LOADS; ++i)
        if (t + i < last) sum.x += v[i].x, sum.y += v[i].y, sum.z += v[i].z, sum.w += v[i].w;
    }
  }
  if (groups > 1) {
    runs[threadIdx.x] = sum;
    __syncthreads();
    if (group != 0 || !inside) return;
    for (int g = 1; g * run < terms; ++g) {
      const float4 v = runs[g * vectors_per_block + lane];
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
  }
  store_sum(p, row, col, sum);
}

// Blocks the whole GPU runs at once: SMs x blocks per SM (one on an H100 at the 128 x 256
// tile, whose GEMM kernels need more than 220 registers a thread; up to five at 64 x 64),
// asked for the split kernel with its shared memory.
int gpu_slots() {
  static const int slots = [] {
    int per_sm = 0;
    const int sms = sgemm::gpu().sm_count;  // the SMs this run has (fewer with --sms)
    // plan asks before launch_kernels raises the kernel's shared memory limit: raised here
    CUDA_CHECK(cudaFuncSetAttribute(sgemm_kernel_split<Tile, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES_SPLIT));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sgemm_kernel_split<Tile, false>, THREADS, SHARED_BYTES_SPLIT));
    return sms * std::max(per_sm, 1);
  }();
  return slots;
}

// PAIR_ROWS: blocks of the split kernel the GPU runs at once in clusters of two (pieces 2c
// and 2c+1 of a tile), 0 where the GPU or the build has no clusters.
template <bool B_ALIGNED>
int gpu_pair_slots() {
  static const int slots = [] {
    int device = 0, clusters_ok = 0, clusters = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&clusters_ok, cudaDevAttrClusterLaunch, device));
    cudaFuncAttributes attributes = {};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, sgemm_kernel_split<Tile, B_ALIGNED>));
    if (PAIR_ROWS == 0 || !clusters_ok || attributes.ptxVersion < 90) return 0;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(1, 1, 2);
    config.blockDim = dim3(THREADS_X, THREADS_Y);
    config.dynamicSmemBytes = SHARED_BYTES_SPLIT;
    cudaLaunchAttribute cluster = {};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 1, cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 2;
    config.attrs = &cluster;
    config.numAttrs = 1;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, sgemm_kernel_split<Tile, B_ALIGNED>, &config));
    return 2 * clusters;
  }();
  return slots;
}

// The partial sums of `pieces` pieces, in tile-times (one k tile of one block: BM x BN x
// TUNE_SPLIT FMAs on one SM's FP32 lanes): M x N floats per piece written, then read back by
// the reduction. What fits in half the L2 moves at L2_BANDWIDTH_RATIO times the device
// memory's peak bandwidth, the rest at that peak. On an H100 (50 MB of L2) one tile-time is
// 4.1 us and 1024^3's four pieces (16 MiB) cost 0.6 of them; on an RTX A6000 (6 MB of L2,
// 768 GB/s) 2048^3 in 13 pieces (208 MiB) would cost 123, more than the 28 they save.
double partial_sums_tile_times(const sgemm::Problem& p, int pieces) {
  const sgemm::Gpu& gpu = sgemm::gpu();
  const double tile_us = double(BM) * BN * TUNE_SPLIT / (double(gpu.fp32_lanes_per_sm) * gpu.clock_mhz);
  const double bytes = double(pieces) * p.M * p.N * sizeof(float), in_l2 = std::min(bytes, 0.5 * gpu.l2_bytes);
  return 2.0 * (in_l2 / L2_BANDWIDTH_RATIO + (bytes - in_l2)) / gpu.dram_bytes_per_us / tile_us;
}

// How many pieces K is cut into, from the shape. With T output tiles and S pieces of
// ceil(k_tiles / S) k tiles each, T * S blocks run in ceil(T * S / slots) waves, so the time
// is about waves x (k tiles per piece) tile-times, plus the partial sums' traffic. More pieces
// are taken only where they cut that estimate by MIN_GAIN_PERCENT; each piece keeps at least
// MIN_SPLIT_K_TILES k tiles.
int choose_splits(const sgemm::Problem& p, int tiles) {
  const int slots = gpu_slots();
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  const int most = std::min(MAX_SPLITS, std::max(1, k_tiles / MIN_SPLIT_K_TILES));
  auto tile_times = [&](int splits) {  // waves x k tiles per piece, and the partial sums
    const long long per_piece = sgemm::ceil_div(k_tiles, splits);
    const int pieces = sgemm::ceil_div(k_tiles, per_piece);
    const long long blocks = static_cast<long long>(tiles) * pieces;
    return double((blocks + slots - 1) / slots * per_piece) + (pieces > 1 ? partial_sums_tile_times(p, pieces) : 0.0);
  };
  int best = 1;
  for (int splits = 2; splits <= most; ++splits)
    if (tile_times(splits) * (100 + MIN_GAIN_PERCENT) <= tile_times(best) * 100) best = splits;
  return best;
}

// K tiles per piece, for `splits` pieces (choose_splits) of each of `tiles` tiles' K:
// ceil(k tiles / splits), as in step 18, unless the pieces' blocks fill less than one wave
// and leave `idle` SMs. Then each piece may be `shorter`, the k tiles cut off every tile
// making one more, short piece at the end of its K. The grid lists the long pieces first, so
// they all start at once (blocks start in index order in practice, not by guarantee; in
// another order only the time would change), and the short ones (one per tile) run on the
// idle SMs in ceil(tiles / idle) turns. The estimate is the longer of the long pieces and
// the short ones' turns, in k tiles; the length with the smallest is taken (of two that tie,
// the longer). TAIL_OVERHEAD_K_TILES charges each short piece for its pipeline's fill and
// its stores (0 measured best, the page).
int piece_length(const sgemm::Problem& p, int tiles, int splits) {
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  const int length = sgemm::ceil_div(k_tiles, splits), pieces = sgemm::ceil_div(k_tiles, length);
  const long long idle = gpu_slots() - static_cast<long long>(tiles) * pieces;
  if (!TAIL_PIECES || pieces == 1 || idle <= 0) return length;
  int best = length;
  long long best_time = length;
  for (int shorter = length - 1; shorter >= MIN_SPLIT_K_TILES && k_tiles / shorter == pieces; --shorter) {
    const int tail = k_tiles - pieces * shorter;  // the short piece's k tiles (0: the pieces just got even)
    if (tail > 0 && tail < MIN_SPLIT_K_TILES) continue;  // every piece keeps MIN_SPLIT_K_TILES
    const long long turns = tail == 0 ? 0 : (tiles + idle - 1) / idle;
    const long long time = std::max<long long>(shorter, turns * (tail + TAIL_OVERHEAD_K_TILES));
    if (time < best_time) best = shorter, best_time = time;
  }
  return best;
}

// Stream-K's share of `tiles` output tiles of k_tiles k tiles each: none where the tiles
// fill whole waves or only one; otherwise the last, partial wave, so that every block gets
// less than one tile's worth of iterations. None either where those tiles have fewer iterations
// than there are blocks: some blocks' ranges would be empty, and an empty range inside a cut
// tile has no piece for sgemm_kernel_stream_reduce to add.
int stream_k_tiles(int tiles, int k_tiles) {
  const int slots = gpu_slots();
  if (!STREAM_K || tiles <= slots || tiles % slots == 0) return 0;
  const int sk_tiles = tiles % slots;
  return static_cast<long long>(sk_tiles) * k_tiles >= slots ? sk_tiles : 0;
}

// Whether a kernel was compiled with its griddepcontrol instructions (sm_90 and newer), so
// that its launch may overlap the kernel before it: a build whose kernels come from older
// PTX (say compute_80, JIT-compiled for this GPU) must not let them start early.
template <class Kernel>
static bool waits_for_producer(Kernel* kernel) {  // static: called from beside_fits's lambda
  static const bool waits = [kernel] {  // one answer per kernel type: a build's kernels share one PTX version
    cudaFuncAttributes attributes = {};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    return attributes.ptxVersion >= 90;
  }();
  return waits;
}

// The partial sums' workspace: allocated on the first call that needs it and grown only when
// a later call needs more, so a timed run of a shape seen before allocates nothing.
float* partials_workspace(std::size_t floats, cudaStream_t stream) {
  static float* buffer = nullptr;
  static std::size_t capacity = 0;  // floats
  if (floats > capacity) {
    if (buffer) {
      CUDA_CHECK(cudaStreamSynchronize(stream));  // the previous call may still be reading it
      CUDA_CHECK(cudaFree(buffer));
    }
    CUDA_CHECK(cudaMalloc(&buffer, floats * sizeof(float)));
    capacity = floats;
  }
  return buffer;
}

// STREAM_FIRST: the count of stream-K blocks done, zeroed once and only ever added to, and the
// count it will have reached when this call's stream-K launch is done. Like the workspace, it
// assumes one device and calls on one stream, one after another (not captured in a CUDA graph,
// whose replays would all wait for the count of the capture).
unsigned* stream_blocks_done(int blocks, unsigned& target) {
  static unsigned* done = nullptr;
  static unsigned launched = 0;
  if (!done) {
    CUDA_CHECK(cudaMalloc(&done, sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(done, 0, sizeof(unsigned)));
  }
  launched += static_cast<unsigned>(blocks);
  target = launched;
  return done;
}

// A launch that may start before the kernel before it ends: a programmatic dependent launch
// where the kernel was compiled with its griddepcontrol instructions.
template <class... Params, class... Args>
void launch_overlapped(void (*kernel)(Params...), dim3 grid, dim3 block, int shared_bytes, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute overlap = {};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = waits_for_producer(kernel) ? 1 : 0;
  config.attrs = &overlap;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
}

// STREAM_FIRST's order pays only where its launches overlap: kernels compiled with
// griddepcontrol (programmatic launches), and a reduction block that fits in
// the registers a block of whole tiles leaves free on an SM (registers are allocated to a
// thread in steps of 8). Otherwise the reduction's small blocks would run after the whole
// tiles, far slower than step 17's reduction, so step 17's launches are taken instead.
template <bool B_ALIGNED>
bool beside_fits() {
  static const bool fits = [] {
    int device = 0, sm_registers = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_registers, cudaDevAttrMaxRegistersPerMultiprocessor, device));
    cudaFuncAttributes tiles = {}, reduce = {};
    CUDA_CHECK(cudaFuncGetAttributes(&tiles, sgemm_kernel_whole_tiles<Tile, B_ALIGNED>));
    CUDA_CHECK(cudaFuncGetAttributes(&reduce, sgemm_kernel_stream_reduce_beside<Tile>));
    auto allocated = [](int registers, int threads) { return (registers + 7) / 8 * 8 * threads; };
    return waits_for_producer(sgemm_kernel_stream_reduce_beside<Tile>) &&
           allocated(tiles.numRegs, THREADS) + allocated(reduce.numRegs, BESIDE_REDUCE_THREADS) <= sm_registers;
  }();
  return fits;
}

// A reduction kernel over `vectors` float4 outputs, REDUCE_THREADS a block, overlapping the
// kernel before it, whose end it waits for.
template <class... Params, class... Args>
void launch_reduction(void (*kernel)(Params...), long long vectors, cudaStream_t stream, Args... args) {
  launch_overlapped(kernel, dim3(static_cast<unsigned>((vectors + REDUCE_THREADS - 1) / REDUCE_THREADS)), dim3(REDUCE_THREADS), 0,
                    stream, args...);
}

// What launch_kernels will run for a shape, and plan's estimate of its time.
struct Plan {
  int chosen = 1;             // choose_splits's pieces
  int k_tiles_per_split = 0;  // piece_length's k tiles per piece
  int splits = 1;             // the pieces launched
  int sk_tiles = 0;           // stream-K's tiles (0: none)
  double us = 0;              // the estimate, microseconds
};

// Blocks of the unsplit kernel the GPU runs at once (gpu_slots asks the split kernel).
int whole_slots() {
  static const int slots = [] {
    int per_sm = 0;
    CUDA_CHECK(cudaFuncSetAttribute(sgemm_kernel<Tile, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sgemm_kernel<Tile, false>, THREADS, SHARED_BYTES));
    return sgemm::gpu().sm_count * std::max(per_sm, 1);
  }();
  return slots;
}

// Step 20's choices for the shape, and their time. `blocks` blocks of a kernel whose GPU runs
// `slots` at once take ceil(blocks / slots) waves; in each, an SM holds up to slots / SMs of
// them, and those share it: a k tile takes BM x BN x TUNE_SPLIT FMAs at PEAK_PERCENT of the
// SM's FP32 rate, times the blocks sharing it. A split K adds its partial sums' traffic.
// Stream-K (its tiles' iterations spread over every slot) is taken only where its estimate,
// with STREAM_K_OVERHEAD_K_TILES for its pieces and their reduction, beats the whole tiles'.
Plan plan(const sgemm::Problem& p) {
  const sgemm::Gpu& gpu = sgemm::gpu();
  const double k_tile_us = double(BM) * BN * TUNE_SPLIT / (gpu.fp32_lanes_per_sm * (PEAK_PERCENT / 100.0) * gpu.clock_mhz);
  const double nominal_tile_us = double(BM) * BN * TUNE_SPLIT / (double(gpu.fp32_lanes_per_sm) * gpu.clock_mhz);
  auto time_us = [&](long long blocks, int slots, long long k_tiles_each) {
    const long long waves = (blocks + slots - 1) / slots;
    const long long sharing = std::min<long long>(slots / gpu.sm_count, (blocks + gpu.sm_count - 1) / gpu.sm_count);
    return double(waves) * k_tiles_each * std::max(1LL, sharing) * k_tile_us;
  };
  const int tiles = sgemm::ceil_div(p.M, BM) * sgemm::ceil_div(p.N, BN);
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  Plan plan;
  plan.chosen = choose_splits(p, tiles);
  plan.k_tiles_per_split = piece_length(p, tiles, plan.chosen);
  plan.splits = sgemm::ceil_div(k_tiles, plan.k_tiles_per_split);  // no piece left empty
  if (plan.splits > 1) {  // choose_splits's pieces (piece_length's short last piece only runs on SMs they leave idle)
    plan.us = time_us(static_cast<long long>(tiles) * plan.chosen, gpu_slots(), sgemm::ceil_div(k_tiles, plan.chosen)) +
              partial_sums_tile_times(p, plan.chosen) * nominal_tile_us;
    return plan;
  }
  plan.us = time_us(tiles, whole_slots(), k_tiles);
  const int sk_tiles = stream_k_tiles(tiles, k_tiles);  // a split K: no stream-K
  if (sk_tiles > 0) {
    const int slots = gpu_slots();
    const double stream_us = time_us(static_cast<long long>(tiles - sk_tiles), slots, k_tiles) +
                             time_us(slots, slots, sgemm::ceil_div(static_cast<long long>(sk_tiles) * k_tiles, slots) + STREAM_K_OVERHEAD_K_TILES);
    if (stream_us < plan.us) plan.sk_tiles = sk_tiles, plan.us = stream_us;
  }
  return plan;
}

// The tile's name, "BMxBN" (SGEMM_TILE), and the harness's took_path with it after the path
// ("split-K/64x64").
static std::string tile_name() { return std::to_string(BM) + "x" + std::to_string(BN); }
void took_path(const char* path, int count) {
  static std::string name;
  name = std::string(path) + "/" + tile_name();
  last_path = name, last_count = count;
  sgemm::took_path(name.c_str(), count);
}

template <bool B_ALIGNED>
void launch_kernels(const sgemm::Problem& p, const Plan& plan, cudaStream_t stream) {
  const dim3 block(THREADS_X, THREADS_Y);
  const dim3 grid = SWAP_XY ? dim3(sgemm::ceil_div(p.M, BM), sgemm::ceil_div(p.N, BN))
                            : dim3(sgemm::ceil_div(p.N, BN), sgemm::ceil_div(p.M, BM));
  CUDA_CHECK(cudaFuncSetAttribute(sgemm_kernel<Tile, B_ALIGNED>, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES));
  CUDA_CHECK(cudaFuncSetAttribute(sgemm_kernel_split<Tile, B_ALIGNED>, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES_SPLIT));
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);
  const int chosen = plan.chosen, k_tiles_per_split = plan.k_tiles_per_split, splits = plan.splits;
  const int tiles = grid.x * grid.y;
  const int sk_tiles = plan.sk_tiles;
  if (sk_tiles > 0) {  // stream-K: gpu_slots() blocks; its iterations first (STREAM_FIRST), or after the whole tiles
    took_path("stream-K", sk_tiles);
    const int blocks = gpu_slots(), dp_tiles = tiles - sk_tiles;
    CUDA_CHECK(cudaFuncSetAttribute(sgemm_kernel_stream<Tile, B_ALIGNED>, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES));
    float* slots = partials_workspace(std::size_t(2) * blocks * BM * BN, stream);
    // B_ALIGNED: with one-float copies of B the three launches lost to step 17's one kernel
    // (the survey's 3001 x 2999 x 1001: 0.55 of cuBLAS in step 20, 0.89 in step 17; the notes).
    // BESIDE_MAX_PIECES: the reduction beside the whole tiles adds a tile's pieces with one warp.
    // Where a tile has many (5120 x 5120 x 997: 8 tiles' 32 k tiles over 132 blocks, about 17
    // pieces a tile), step 18's order lost: 1.37 ms against 1.11 in step 17's order on the
    // H200, likely that warp (not profiled); 4096^3's tiles, in 2 pieces, gain 0.7% beside.
    const long long per_block = sgemm::ceil_div(static_cast<long long>(sk_tiles) * k_tiles, static_cast<long long>(blocks));
    const long long pieces = sgemm::ceil_div(static_cast<long long>(k_tiles), per_block) + 1;  // at most, a tile's
    if (STREAM_FIRST && B_ALIGNED && pieces <= BESIDE_MAX_PIECES && beside_fits<B_ALIGNED>()) {  // stream-K's iterations; then the whole tiles, and beside them the reduction
      unsigned target = 0;
      unsigned* done = stream_blocks_done(blocks, target);
      CUDA_CHECK(cudaFuncSetAttribute(sgemm_kernel_stream_only<Tile, B_ALIGNED>, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES));
      CUDA_CHECK(cudaFuncSetAttribute(sgemm_kernel_whole_tiles<Tile, B_ALIGNED>, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES));
      sgemm_kernel_stream_only<Tile, B_ALIGNED><<<blocks, block, SHARED_BYTES, stream>>>(p, dp_tiles, sk_tiles, slots, done);
      if (dp_tiles > 0)
        launch_overlapped(sgemm_kernel_whole_tiles<Tile, B_ALIGNED>, dim3(std::min(blocks, dp_tiles)), block, SHARED_BYTES, stream, p, dp_tiles);
      launch_overlapped(sgemm_kernel_stream_reduce_beside<Tile>, dim3(std::min(blocks, sk_tiles)), dim3(BESIDE_REDUCE_THREADS), 0, stream, p,
                        dp_tiles, sk_tiles, blocks, static_cast<const float*>(slots), static_cast<const unsigned*>(done), target);
      return;
    }
    sgemm_kernel_stream<Tile, B_ALIGNED><<<blocks, block, SHARED_BYTES, stream>>>(p, dp_tiles, sk_tiles, slots);
    launch_reduction(sgemm_kernel_stream_reduce<Tile>, static_cast<long long>(sk_tiles) * (BM * BN / 4), stream, p, dp_tiles, sk_tiles,
                     blocks, static_cast<const float*>(slots));
    return;
  }
  if (splits == 1) {
    took_path("whole-tiles", 1);
    sgemm_kernel<Tile, B_ALIGNED><<<grid, block, SHARED_BYTES, stream>>>(p);
    return;
  }
  const int ld_partials = sgemm::ceil_div(p.N, 4) * 4;
  float* partials = partials_workspace(std::size_t(splits) * p.M * ld_partials, stream);
  // PAIR_ROWS: an even count of pieces, none of them a short last piece (whose block would
  // start with its partner instead of on an idle SM), and clusters of two that take every slot
  // or at least every block.
  const long long blocks = static_cast<long long>(grid.x) * grid.y * splits;
  const int pair_slots = gpu_pair_slots<B_ALIGNED>();
  const bool paired = splits % 2 == 0 && k_tiles_per_split == sgemm::ceil_div(k_tiles, chosen) && pair_slots > 0 &&
                      (pair_slots == gpu_slots() || blocks <= pair_slots);
  took_path(paired ? "split-K-pairs"
                   : k_tiles_per_split < sgemm::ceil_div(k_tiles, chosen) ? "split-K-short-last-piece" : "split-K",
                   splits);
  if (paired) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(grid.x, grid.y, splits);
    config.blockDim = block;
    config.dynamicSmemBytes = SHARED_BYTES_SPLIT;
    config.stream = stream;
    cudaLaunchAttribute cluster = {};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 1, cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 2;
    config.attrs = &cluster;
    config.numAttrs = 1;
    CUDA_CHECK(cudaLaunchKernelEx(&config, sgemm_kernel_split<Tile, B_ALIGNED>, p, k_tiles_per_split, partials, ld_partials));
  } else {
    sgemm_kernel_split<Tile, B_ALIGNED><<<dim3(grid.x, grid.y, splits), block, SHARED_BYTES_SPLIT, stream>>>(p, k_tiles_per_split, partials, ld_partials);
  }
  // Groups doubled while C's vectors times them are fewer than one block of REDUCE_THREADS an
  // SM, so it stops at one to two blocks an SM (where C alone fills the SMs, sharing cost about
  // 2% at 384^3: step 21's notes), up to MAX_REDUCE_GROUPS and at least two slices a group.
  const long long vectors = static_cast<long long>(p.M) * (ld_partials / 4);
  int groups = 1;
  while (groups < MAX_REDUCE_GROUPS && groups * 2 <= splits / (paired ? 2 : 1) &&
         vectors * groups < 1LL * REDUCE_THREADS * sgemm::gpu().sm_count)
    groups *= 2;
  const long long vectors_per_block = REDUCE_THREADS / groups;
  launch_overlapped(sgemm_kernel_split_reduce<Tile>, dim3(static_cast<unsigned>((vectors + vectors_per_block - 1) / vectors_per_block)),
                    dim3(REDUCE_THREADS), 0, stream, p, splits, groups, static_cast<const float*>(partials), ld_partials,
                    paired ? PAIR_ROWS : 0);
}

};  // struct Tile

template <class T, bool B_ALIGNED>
__global__ void __launch_bounds__(T::THREADS, MIN_BLOCKS) sgemm_kernel(sgemm::Problem p) {
  T().template sgemm_kernel_body<B_ALIGNED>(p);
}
template <class T, bool B_ALIGNED>
__global__ void __maxnreg__(MAX_REGISTERS_SPLIT)
    sgemm_kernel_split(sgemm::Problem p, int k_tiles_per_split, float* partials, int ld_partials) {
  T().template sgemm_kernel_split_body<B_ALIGNED>(p, k_tiles_per_split, partials, ld_partials);
}
template <class T, bool B_ALIGNED>
__global__ void __launch_bounds__(T::THREADS, MIN_BLOCKS)
    sgemm_kernel_stream(sgemm::Problem p, int dp_tiles, int sk_tiles, float* slots) {
  T().template sgemm_kernel_stream_body<B_ALIGNED>(p, dp_tiles, sk_tiles, slots);
}
template <class T, bool B_ALIGNED>
__global__ void __launch_bounds__(T::THREADS, MIN_BLOCKS)
    sgemm_kernel_stream_only(sgemm::Problem p, int dp_tiles, int sk_tiles, float* slots, unsigned* sk_done) {
  T().template sgemm_kernel_stream_only_body<B_ALIGNED>(p, dp_tiles, sk_tiles, slots, sk_done);
}
template <class T, bool B_ALIGNED>
__global__ void __launch_bounds__(T::THREADS, MIN_BLOCKS) sgemm_kernel_whole_tiles(sgemm::Problem p, int tiles) {
  T().template sgemm_kernel_whole_tiles_body<B_ALIGNED>(p, tiles);
}
template <class T>
__global__ void __launch_bounds__(REDUCE_THREADS)
    sgemm_kernel_stream_reduce(sgemm::Problem p, int dp_tiles, int sk_tiles, int blocks, const float* slots) {
  T().sgemm_kernel_stream_reduce_body(p, dp_tiles, sk_tiles, blocks, slots);
}
template <class T>
__global__ void __maxnreg__(BESIDE_REDUCE_REGISTERS)
    sgemm_kernel_stream_reduce_beside(sgemm::Problem p, int dp_tiles, int sk_tiles, int blocks, const float* slots,
                                      const unsigned* sk_done, unsigned target) {
  T().sgemm_kernel_stream_reduce_beside_body(p, dp_tiles, sk_tiles, blocks, slots, sk_done, target);
}
template <class T>
__global__ void __launch_bounds__(REDUCE_THREADS)
    sgemm_kernel_split_reduce(sgemm::Problem p, int splits, int groups, const float* partials, int ld_partials, int pair_rows) {
  T().sgemm_kernel_split_reduce_body(p, splits, groups, partials, ld_partials, pair_rows);
}

// The tiles: THREADS_X, THREADS_Y, THREAD_TILE_X, THREAD_TILE_Y, WARP_SHAPE_X, PEAK_PERCENT.
// 128 x 256 is step 20's. Each smaller one makes more blocks of a shape, at a lower share of
// the peak: fewer outputs per thread (more shared-memory loads per FMA), fewer warps per block.
using Tile128x256 = Tile<16, 16, 16, 8, 16, PEAK_PERCENT_128X256>;
using Tile128x128 = Tile<16, 16, 8, 8, 16, PEAK_PERCENT_128X128>;
using Tile64x128 = Tile<16, 8, 8, 8, 16, PEAK_PERCENT_64X128>;
using Tile64x64 = Tile<8, 8, 8, 8, 8, PEAK_PERCENT_64X64>;
// A tall tile for N = 64 and a wide one for M = 64: 128 x 128's threads and 8 x 8 outputs a
// thread, stacked 32 x 8 or laid 8 x 32, so N = 64 (M = 64) runs at that tile's loads per
// FMA and not at 64 x 64's (twice the copies per FMA, a quarter of the warps per block).
using Tile256x64 = Tile<8, 32, 8, 8, 8, PEAK_PERCENT_256X64, VECTOR_A_256X64>;
using Tile64x256 = Tile<32, 8, 8, 8, 16, PEAK_PERCENT_64X256>;
// Two thin tiles for the strips a cut leaves: 16 rows for a strip below (M % 128 = 9 at
// M = 777), 16 columns for one on the right (N % 256 = 1 at N = 4097). 64 threads with 8 x 4
// outputs each, laid 32 x 2 or 4 x 16: a 64-row tile computes 7 times the FMAs a 9-row strip
// needs, and a 64-column one 64 times those of a 1-column strip; these compute 1.8 and 16 times.
using Tile16x128 = Tile<32, 2, 4, 8, 16, PEAK_PERCENT_16X128>;
using Tile128x16 = Tile<4, 16, 4, 8, 4, PEAK_PERCENT_128X16, VECTOR_A_128X16>;

// One tile's launch, as step 20's: its plan, and the kernels for B's alignment.
template <class T>
void launch_with(const sgemm::Problem& p, const typename T::Plan& plan, cudaStream_t stream) {
  // ALIGNED_KERNELS: B 16-byte aligned, as the vector copies need it (its start, and every
  // row's: ldb a multiple of 4 floats), takes the kernels compiled for that case alone.
  const bool b_aligned = COPY_VECTOR > 1 && p.ldb % COPY_VECTOR == 0 &&
                         reinterpret_cast<uintptr_t>(p.B) % sizeof(float[COPY_VECTOR]) == 0;
  if (ALIGNED_KERNELS && b_aligned)
    T().template launch_kernels<true>(p, plan, stream);
  else
    T().template launch_kernels<false>(p, plan, stream);
}

// Every tile's plan for the shape; the one with the smallest estimate runs, unless that is no
// better than step 20's 128 x 256 by MIN_GAIN_PERCENT, as more pieces of K must be (near a
// tie the estimate picked the slower tile as often as the faster: the notes).
// SGEMM_TILE (an environment variable: 128x256, 128x128, 64x128, 64x64, 256x64, 64x256, 16x128
// or 128x16)
// runs that tile instead, for the tests and for comparing the tiles on a reader's own shapes.
struct Choice {
  int tile = 0;   // 0 .. 7: 128 x 256, 128 x 128, 64 x 128, 64 x 64, 256 x 64, 64 x 256, 16 x 128, 128 x 16
  double us = 0;  // its estimate
  int splits = 1;  // its pieces of K
  Tile128x256::Plan p0;
  Tile128x128::Plan p1;
  Tile64x128::Plan p2;
  Tile64x64::Plan p3;
  Tile256x64::Plan p4;
  Tile64x256::Plan p5;
  Tile16x128::Plan p6;
  Tile128x16::Plan p7;
};
static constexpr int TILES = 8;  // the tiles choose() prices
constexpr int TILE_BM[TILES] = {Tile128x256::BM, Tile128x128::BM, Tile64x128::BM, Tile64x64::BM,
                                Tile256x64::BM,  Tile64x256::BM,  Tile16x128::BM, Tile128x16::BM};
constexpr int TILE_BN[TILES] = {Tile128x256::BN, Tile128x128::BN, Tile64x128::BN, Tile64x64::BN,
                                Tile256x64::BN,  Tile64x256::BN,  Tile16x128::BN, Tile128x16::BN};
const char* const forced_tile = std::getenv("SGEMM_TILE");
Choice choose(const sgemm::Problem& p) {
  Choice c;
  c.p0 = Tile128x256().plan(p);
  c.p1 = Tile128x128().plan(p);
  c.p2 = Tile64x128().plan(p);
  c.p3 = Tile64x64().plan(p);
  c.p4 = Tile256x64().plan(p);
  c.p5 = Tile64x256().plan(p);
  c.p6 = Tile16x128().plan(p);
  c.p7 = Tile128x16().plan(p);
  const double us[TILES] = {c.p0.us, c.p1.us, c.p2.us, c.p3.us, c.p4.us, c.p5.us, c.p6.us, c.p7.us};
  if (forced_tile != nullptr) {
    c.tile = -1;
    for (int t = 0; t < TILES; ++t)
      if (std::to_string(TILE_BM[t]) + "x" + std::to_string(TILE_BN[t]) == forced_tile) c.tile = t;
    if (c.tile < 0) {
      std::fprintf(stderr, "SGEMM_TILE=%s: the tiles are 128x256, 128x128, 64x128, 64x64, 256x64, 64x256, 16x128 and 128x16\n",
                   forced_tile);
      std::exit(2);
    }
  } else {
    // The thin tiles serve rectangles as thin as they are. Priced everywhere, they would win the
    // estimate at most shapes below about 1024 x 1024 with K up to 512 (it counts FMAs and waves,
    // not a kernel's fixed start and drain). Forced, they ran faster than this rule at 128^3 and
    // 256^3 and slower at 512^3 and 640^3 (the notes); the rest of that region is unmeasured.
    double priced[TILES];
    for (int t = 0; t < TILES; ++t) {
      const bool thin_rows = TILE_BM[t] < THIN_BELOW && p.M >= THIN_BELOW, thin_cols = TILE_BN[t] < THIN_BELOW && p.N >= THIN_BELOW;
      priced[t] = thin_rows || thin_cols ? INFINITY : us[t];
    }
    const int smallest = static_cast<int>(std::min_element(priced + 1, priced + TILES) - priced);
    c.tile = priced[smallest] * (100 + MIN_GAIN_PERCENT) <= priced[0] * 100 ? smallest : 0;
  }
  c.us = us[c.tile];
  const int splits[TILES] = {c.p0.splits, c.p1.splits, c.p2.splits, c.p3.splits, c.p4.splits, c.p5.splits, c.p6.splits, c.p7.splits};
  c.splits = splits[c.tile];
  return c;
}
void launch_choice(const sgemm::Problem& p, const Choice& c, cudaStream_t stream) {
  switch (c.tile) {
    case 0: launch_with<Tile128x256>(p, c.p0, stream); break;
    case 1: launch_with<Tile128x128>(p, c.p1, stream); break;
    case 2: launch_with<Tile64x128>(p, c.p2, stream); break;
    case 3: launch_with<Tile64x64>(p, c.p3, stream); break;
    case 4: launch_with<Tile256x64>(p, c.p4, stream); break;
    case 5: launch_with<Tile64x256>(p, c.p5, stream); break;
    case 6: launch_with<Tile16x128>(p, c.p6, stream); break;
    default: launch_with<Tile128x16>(p, c.p7, stream); break;
  }
}

// The rectangle of C at (row, col), rows x cols, as a GEMM of its own: the same K, A's rows
// and B's columns that meet there, the same alpha and beta.
sgemm::Problem rectangle(const sgemm::Problem& p, int row, int col, int rows, int cols) {
  sgemm::Problem r = p;
  r.M = rows, r.N = cols;
  r.A = p.A + std::size_t(row) * p.lda;
  r.B = p.B + col;
  r.C = p.C + std::size_t(row) * p.ldc + col;
  return r;
}

// launch's decision for a shape: C whole (parts 0, choices[0] the whole's), or cut into
// `parts` rectangles, each at (row, col), rows x cols, with its choice.
struct Cut {
  int parts = 0;
  int at[3][4] = {};  // row, col, rows, cols
  Choice choices[3];
};
Cut decide(const sgemm::Problem& p) {
  static const char* forced = std::getenv("SGEMM_EDGES");
  if (forced != nullptr && std::strcmp(forced, "whole") != 0 && std::strcmp(forced, "cut") != 0) {
    std::fprintf(stderr, "SGEMM_EDGES=%s: C is run whole or cut\n", forced);
    std::exit(2);
  }
  const bool force_cut = forced != nullptr && std::strcmp(forced, "cut") == 0;
  const Choice whole = choose(p);
  Cut decision;
  decision.choices[0] = whole;
  if ((forced != nullptr && !force_cut) || (forced_tile != nullptr && !force_cut)) return decision;
  const int bm = TILE_BM[force_cut ? 0 : whole.tile], bn = TILE_BN[force_cut ? 0 : whole.tile];
  const int main_rows = p.M - p.M % bm, main_cols = p.N - p.N % bn;  // the main rectangle, at most
  double best_us = force_cut ? INFINITY : whole.us * (100 - EDGE_GAIN_PERCENT) / 100.0;
  for (int cut = 1; cut <= 3; ++cut) {  // 1: the right strip, 2: the strip below, 3: both
    const bool cut_cols = cut & 1, cut_rows = cut & 2;
    if ((cut_cols && (main_cols == 0 || main_cols == p.N)) || (cut_rows && (main_rows == 0 || main_rows == p.M))) continue;
    const int rows = cut_rows ? main_rows : p.M, cols = cut_cols ? main_cols : p.N;
    sgemm::Problem parts[3] = {rectangle(p, 0, 0, rows, cols)};
    int n = 1;
    if (cut_cols) parts[n++] = rectangle(p, 0, cols, rows, p.N - cols);
    if (cut_rows) parts[n++] = rectangle(p, rows, 0, p.M - rows, p.N);
    const int right[4] = {0, cols, rows, p.N - cols}, below[4] = {rows, 0, p.M - rows, p.N};
    int at[3][4] = {{0, 0, rows, cols}};
    if (cut_cols) std::copy(right, right + 4, at[1]);
    if (cut_rows) std::copy(below, below + 4, at[cut_cols ? 2 : 1]);
    Choice choices[3];
    double us = EDGE_LAUNCH_US * (n - 1);
    for (int i = 0; i < n; ++i) us += (choices[i] = choose(parts[i])).us;
    if (us < best_us) {
      best_us = us, decision.parts = n;
      std::copy(&at[0][0], &at[0][0] + 12, &decision.at[0][0]), std::copy(choices, choices + n, decision.choices);
    }
  }
  return decision;
}

// PRICE_ONCE: decide() plans up to seven rectangles on the host before the first launch, each
// with every tile, and at a long K each tile's plan tries up to MAX_SPLITS pieces: about
// 100 us at 1023 x 1025 x 8190 on the H200, which a call pays before its first kernel starts
// (step 40's notes). The answer
// depends only on the shape and the strides (B's alignment is looked at when a rectangle is
// launched), so the last CUT_CACHE answers are kept, and a shape seen before launches at once.
const Cut& decide_once(const sgemm::Problem& p) {
  struct Entry {
    long long key[6];
    Cut cut;
  };
  static Entry entries[CUT_CACHE];
  static int used = 0, next = 0;
  const long long key[6] = {p.M, p.N, p.K, p.lda, p.ldb, p.ldc};
  for (int i = 0; i < used; ++i)
    if (std::equal(key, key + 6, entries[i].key)) return entries[i].cut;
  Entry& entry = entries[next];
  next = (next + 1) % CUT_CACHE, used = std::min(used + 1, CUT_CACHE);
  std::copy(key, key + 6, entry.key);
  entry.cut = decide(p);
  return entry.cut;
}

// C cut into rectangles. Where the chosen tile does not divide M or N, its last block row or
// column computes a whole tile for a thin edge of C (N = 4097 and 256 columns a tile: 17
// block columns for 16 and one column). Cut there instead: the main rectangle, a multiple of
// the tile, and the edges (a strip on the right, a strip below) each become a GEMM of their
// own, whose tile choose() picks for its shape, launched one after another. The cut is taken
// where the sum of the rectangles' estimates, each beyond the first charged EDGE_LAUNCH_US,
// beats the whole's by EDGE_GAIN_PERCENT (decide, priced once a shape: decide_once).
// SGEMM_EDGES (an environment variable: whole or cut) forces either, for the tests and for
// re-measuring the rule; forced, the cut is at the 128 x 256 tile's multiples. With SGEMM_TILE
// alone C runs whole; with SGEMM_EDGES=cut too, every rectangle runs that tile.
void launch_cut(const sgemm::Problem& p, const Cut& cut, cudaStream_t stream) {
  if (cut.parts == 0) {
    launch_choice(p, cut.choices[0], stream);
    return;
  }
  std::string main_path;
  int main_count = 0;
  for (int i = 0; i < cut.parts; ++i) {
    launch_choice(rectangle(p, cut.at[i][0], cut.at[i][1], cut.at[i][2], cut.at[i][3]), cut.choices[i], stream);
    if (i == 0) main_path = last_path, main_count = last_count;  // the path named is the main rectangle's
  }
  last_path = "edges-" + std::to_string(cut.parts) + "/" + main_path, last_count = main_count;
}

// The decision's estimate: the whole's, or the rectangles' with their launches.
double cut_us(const Cut& cut) {
  if (cut.parts == 0) return cut.choices[0].us;
  double us = EDGE_LAUNCH_US * (cut.parts - 1);
  for (int i = 0; i < cut.parts; ++i) us += cut.choices[i].us;
  return us;
}

// B whose rows are not 16-byte aligned (ldb no multiple of 4 floats, as with every odd N, or a
// base off 16 bytes) is copied to shared memory one float at a time: four times the copies of
// the vector kernels, and step 17's stream-K in place of the three launches of step 18's
// (B_ALIGNED). Copying B once into an aligned workspace (ldb rounded up to 4 floats) costs a
// read and a write of K x N floats; the GEMM then takes the aligned kernels. The copy is made
// where it costs less than the ONE_FLOAT_B_PERCENT it saves of the GEMM's estimate, and only
// where C (or its main rectangle) runs unsplit (whole tiles or stream-K): where it ran split,
// the copy cost more than it saved (the notes).
// SGEMM_B (an environment variable: read or copy) forces either, for the tests and for
// re-measuring the rule. The workspace is allocated once and grown when needed.
bool b_aligned(const sgemm::Problem& p) {
  return p.ldb % 4 == 0 && reinterpret_cast<uintptr_t>(p.B) % 16 == 0;
}
bool copy_b(const sgemm::Problem& p, const Cut& cut) {
  static const char* forced = std::getenv("SGEMM_B");
  if (forced != nullptr) {
    if (std::strcmp(forced, "read") == 0) return false;
    if (std::strcmp(forced, "copy") == 0) return true;
    std::fprintf(stderr, "SGEMM_B=%s: B is read where it lies or copied aligned first (read, copy)\n", forced);
    std::exit(2);
  }
  const double copy_us = 8.0 * p.K * p.N / (sgemm::gpu().dram_bytes_per_us * COPY_PERCENT / 100.0) + COPY_PASS_US;
  return cut.choices[0].splits == 1 && copy_us * 100 < cut_us(cut) * ONE_FLOAT_B_PERCENT;
}
sgemm::Problem with_aligned_b(const sgemm::Problem& p, cudaStream_t stream) {
  static float* workspace = nullptr;
  static std::size_t capacity = 0;  // floats
  sgemm::Problem q = p;
  q.ldb = sgemm::ceil_div(p.N, 4) * 4;
  const std::size_t floats = std::size_t(p.K) * q.ldb;
  if (floats > capacity) {
    if (workspace) {
      CUDA_CHECK(cudaStreamSynchronize(stream));  // the previous call may still be reading it
      CUDA_CHECK(cudaFree(workspace));
    }
    CUDA_CHECK(cudaMalloc(&workspace, floats * sizeof(float)));
    // Zeroed once: the copy writes N of each row's ldb floats, and a vector copy at the right
    // edge reads the rest of its 16 bytes' address range (their source size makes them zeros in
    // shared memory; compute-sanitizer's initcheck still wants that memory written).
    CUDA_CHECK(cudaMemsetAsync(workspace, 0, floats * sizeof(float), stream));
    capacity = floats;
  }
  CUDA_CHECK(cudaMemcpy2DAsync(workspace, q.ldb * sizeof(float), p.B, std::size_t(p.ldb) * sizeof(float), p.N * sizeof(float), p.K,
                               cudaMemcpyDeviceToDevice, stream));
  q.B = workspace;
  return q;
}

void launch(const sgemm::Problem& p, cudaStream_t stream) {
  const Cut& cut = PRICE_ONCE ? decide_once(p) : decide(p);
  static std::string path;  // took_path keeps the pointer
  if (!b_aligned(p) && p.M > 0 && p.N > 0 && p.K > 0 && copy_b(p, cut)) {
    launch_cut(with_aligned_b(p, stream), cut, stream);  // the decision reads no strides: p's holds for the copy
    path = "B-copied/" + last_path;
  } else {
    launch_cut(p, cut, stream);
    path = last_path;
  }
  sgemm::took_path(path.c_str(), last_count);
}

int main(int argc, char** argv) {
  return sgemm::run_step(argc, argv, SGEMM_STEP, launch,
                         {.shared_bytes = std::max({Tile128x256::SHARED_BYTES, Tile128x256::SHARED_BYTES_SPLIT, Tile128x128::SHARED_BYTES,
                                                    Tile128x128::SHARED_BYTES_SPLIT, Tile64x128::SHARED_BYTES,
                                                    Tile64x128::SHARED_BYTES_SPLIT, Tile64x64::SHARED_BYTES, Tile64x64::SHARED_BYTES_SPLIT,
                                                    Tile256x64::SHARED_BYTES, Tile256x64::SHARED_BYTES_SPLIT, Tile64x256::SHARED_BYTES,
                                                    Tile64x256::SHARED_BYTES_SPLIT, Tile16x128::SHARED_BYTES, Tile16x128::SHARED_BYTES_SPLIT,
                                                    Tile128x16::SHARED_BYTES, Tile128x16::SHARED_BYTES_SPLIT})});
}
