// Step 25 - warp specialisation with setmaxnreg                     previous: 24_tma_mbarrier
// Change: the block gains a third warpgroup, the producer, and its warps each do one job:
//         one thread issues every TMA copy; three more warps (SPLITTERS) split each A tile
//         into its big and small parts; the two consumer warpgroups only multiply. Stages
//         pass around the ring on three mbarriers each: "full" (TMA landed), "split" (the A
//         tile is split) and "empty" (both consumers are done; the producer may refill it).
//         The producer gives its registers to the consumers (setmaxnreg.dec to
//         PRODUCER_REGISTERS, setmaxnreg.inc to CONSUMER_REGISTERS).
// Why:    in step 24 every thread first splits its share of the A tile, then waits at a
//         block-wide barrier, then multiplies: the tensor cores idle while the block splits,
//         and the refill waits for the slowest warp. Here the splitters work on the tiles
//         ahead while the consumers multiply, and a stage is refilled as soon as both
//         consumers release it: no block-wide barrier in the k loop.
// Where:  sgemm_kernel: the producer branch (warpgroup 0) and the consumers' barrier waits
//         and arrives; setmaxnreg.
// Layout and accuracy: as in steps 23 and 24 (C^T = B^T A^T; each k tile's three products
//         summed in wgmma's accumulator from zero, then added into FP32 registers).
// Watch:  the tensor pipe's utilisation against step 24; registers: the consumers' 232, no
//         LDL/STL; the time at 2048^3 and 4096^3.
// Build alone: mkdir -p build-alone && nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -Icommon common/*.cpp common/*.cu steps/25_warp_specialized/warp_specialized.cu -lcublas -o build-alone/warp_specialized
#include <cuda.h>          // CUtensorMap (types only: the driver library is not linked)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled, the type of the function the runtime hands out

#include <cstdint>

#include "sgemm.cuh"

constexpr int BM = SGEMM_KNOB(BM, 128);          // rows of C per block: wgmma's N (the A tile is its shared operand)
constexpr int BN = SGEMM_KNOB(BN, 128);          // columns of C per block: 64 per consumer warpgroup (wgmma's M)
constexpr int TUNE_SPLIT = SGEMM_KNOB(TUNE_SPLIT, 32);   // K-width of a shared tile: one 128-byte swizzle row of floats
constexpr int STAGES = SGEMM_KNOB(STAGES, 4);        // shared stages in the TMA ring
constexpr int GROUP_ROWS = SGEMM_KNOB(GROUP_ROWS, 16);   // block rows that neighbouring blocks walk down together (L2 reuse)
constexpr int CONSUMER_REGISTERS = SGEMM_KNOB(CONSUMER_REGISTERS, 232);  // setmaxnreg for the consumers (the producer keeps 40)

constexpr int WGMMA_M = 64, WGMMA_K = 8;  // one wgmma: 64 columns of C x BM rows x 8 k
constexpr int CONSUMERS = BN / WGMMA_M;   // consumer warpgroups
constexpr int THREADS = 128 * (1 + CONSUMERS);  // warpgroup 0 produces, the others consume
constexpr int K_STEPS = TUNE_SPLIT / WGMMA_K;   // wgmmas per k tile and pass
constexpr int B_BOX = SGEMM_KNOB(B_BOX, 32);  // columns of a TMA box of B: 128 bytes, the 128-byte swizzle's width
constexpr int PRODUCER_REGISTERS = SGEMM_KNOB(PRODUCER_REGISTERS, 40);
constexpr int SPLITTERS = SGEMM_KNOB(SPLITTERS, 96);  // threads of the producer warpgroup that split A (warps 1 .. 3)
static_assert(TUNE_SPLIT * sizeof(float) == 128, "a row of the A tile is one 128-byte swizzle row");
static_assert(BN % WGMMA_M == 0 && WGMMA_M % B_BOX == 0, "each consumer takes whole 32-column boxes of B");
static_assert(BM % 8 == 0 && BM >= 8 && BM <= 256, "wgmma's N is a multiple of 8 up to 256");
static_assert(BM == 128, "the wgmma wrapper below spells out m64n128k8's 64 accumulators");
static_assert(PRODUCER_REGISTERS * 128 + CONSUMER_REGISTERS * 128 * CONSUMERS <= 65536 / THREADS / 8 * 8 * THREADS,
              "setmaxnreg moves registers between warpgroups, never more than the launch gave the block: "
              "65536 / THREADS per thread, in steps of 8 (168 for 384 threads); more, and .inc waits forever");
static_assert(CONSUMER_REGISTERS % 8 == 0 && PRODUCER_REGISTERS % 8 == 0, "setmaxnreg counts are multiples of 8");

constexpr int A_TILE_BYTES = BM * TUNE_SPLIT * sizeof(float);  // [BM][TUNE_SPLIT], 128-byte swizzled
constexpr int B_TILE_BYTES = TUNE_SPLIT * BN * sizeof(float);  // [BN / 32][TUNE_SPLIT][32], swizzled
constexpr int STAGE_BYTES = 2 * A_TILE_BYTES + B_TILE_BYTES;   // A, A's small part, B
constexpr int SHARED_BYTES = STAGES * STAGE_BYTES + 3 * STAGES * 8 + 1024;  // + barriers + alignment
static_assert(A_TILE_BYTES % 1024 == 0 && B_TILE_BYTES % 1024 == 0,
              "swizzled tiles start on 1024-byte boundaries (the swizzle repeats every 8 rows of 128 B)");
static_assert(SHARED_BYTES <= sgemm::shared_limit(),
              "a block has at most 99 KB of shared memory on sm_86 and sm_89, 163 KB on sm_80, 227 KB on sm_90: "
              "build with the GPU class's tuning (tunings/)");

// C[row][col] = alpha * acc + beta * C[row][col]; with beta == 0, C is write-only (BLAS
// semantics): NaN or garbage already in C never leaks into the result.
__device__ __forceinline__ void store_c(const sgemm::Problem& p, int row, int col, float acc) {
  float& c = p.C[static_cast<long long>(row) * p.ldc + col];
  c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * c;
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// ---- the split -------------------------------------------------------------------------
// The nearest TF32 of x (ties away from zero): add half a TF32 ulp, clear the 13 low bits.
__device__ __forceinline__ float tf32_round(float x) { return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u); }

// x = big + small + (a rest of about 2^-22 |x|): big is x rounded to TF32, small the rest
// (exact in FP32) rounded to TF32 too, so the tensor core, which reads only the top 19 bits
// of each word, truncates neither. x is first clamped to TF32's range, as in step 22's
// careful split: an Inf splits into big = +-TF32_MAX and small = Inf (so Inf times any
// nonzero partner is Inf, and Inf times 0 is NaN, as in FP32), a NaN into a finite big and
// small = NaN, and an x that would round past FLT_MAX into TF32_MAX and an exact rest. A
// non-finite small is kept as it is: rounding it by adding to its bits could carry a NaN's
// all-ones payload into the sign bit and leave -0.
constexpr float TF32_MAX = 0x1.ffcp127f;  // (2 - 2^-10) * 2^127, the largest TF32 value
__device__ __forceinline__ void tf32_split(float x, float& big, float& small) {
  big = tf32_round(fminf(fmaxf(x, -TF32_MAX), TF32_MAX));
  const float rest = x - big;
  small = fabsf(rest) < INFINITY ? tf32_round(rest) : rest;
}

// ---- mbarriers and TMA -----------------------------------------------------------------
__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void barrier_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void barrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
// Arrive and announce the bytes the stage's TMA copies will deliver to this barrier.
__device__ __forceinline__ void barrier_expect_bytes(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// Waits until the barrier's phase with this parity has completed.
__device__ __forceinline__ void barrier_wait(uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n @!done bra WAIT;\n}" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// One TMA box of a 2-D tensor (coordinates innermost first) into shared memory; the copy
// signals `bar` with its byte count. Boxes past the tensor's edge are filled with zeros.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap& map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

// ---- wgmma -------------------------------------------------------------------------------
// The descriptor of a K-major operand tile in shared memory with the 128-byte swizzle:
// rows of 128 bytes, 8-row groups 1024 bytes apart (stride byte offset), layout type 1.
// The start address moves 32 bytes per k step of 8 floats inside the swizzled row.
__device__ __forceinline__ uint64_t tile_descriptor(const void* tile, int k_step) {
  const uint64_t start = (smem_addr(tile) + k_step * WGMMA_K * sizeof(float)) & 0x3ffff;
  return (start >> 4) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

#define D8(i) "+f"(d[i + 0]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])

// d[64] (+)= a[4] x tile: 64 x 128 x 8, a from registers, the tile K-major in shared memory.
// ZERO: start from zero instead of adding to d (wgmma's scale-d = 0).
template <bool ZERO>
__device__ __forceinline__ void wgmma_m64n128k8(float (&d)[64], const unsigned (&a)[4], uint64_t tile) {
  asm volatile(
      "{\n .reg .pred add;\n setp.ne.b32 add, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "{%64, %65, %66, %67}, %68, add, 1, 1;\n}"
      : D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(tile), "n"(ZERO ? 0 : 1));
}
#undef D8

// ---- where a consumer thread's values sit --------------------------------------------------
// wgmma's register operand: thread (warp w of its warpgroup, lane = 4 g + t) holds rows
// 16 w + g + 8 h (h = 0, 1) and columns k = t + 4 kh (kh = 0, 1) of the 64 x 8 operand, as
// a[h + 2 kh]; its accumulator d[4 j + 2 h + v] is row 16 w + g + 8 h, column 8 j + 2 t + v.
// The rows of the operand are columns of B (and so of C): which column each row stands for
// is free, and this choice makes the fragment loads from the swizzled B tile hit 32
// different banks: the 8 lanes of one t read columns {4q .. 4q+3, 4q+16 .. 4q+19} of a
// 32-column box, and t and kh pick rows whose swizzle moves them to the other banks.
__device__ __forceinline__ int operand_col(int warp, int h, int g) {  // 0 .. 63 inside the warpgroup's columns
  const int q = 2 * (warp % 2) + h;
  return B_BOX * (warp / 2) + 4 * q + g % 4 + 16 * (g / 4);
}

// Byte offset of B[k][col] (col inside the block's BN columns) in a stage's B tile: boxes of
// [TUNE_SPLIT][32] floats; inside a 128-byte row, 16-byte chunk c sits at c ^ (k % 8).
__device__ __forceinline__ int b_tile_offset(int k, int col) {
  const int box = col / B_BOX, c = col % B_BOX;
  return box * (TUNE_SPLIT * B_BOX * 4) + k * 128 + (((c / 4) ^ (k % 8)) * 16) + (c % 4) * 4;
}

#endif  // sm_90a

__global__ void __launch_bounds__(THREADS, 1)
    sgemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, sgemm::Problem p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char shared_raw[];
  // Swizzled tiles need 1024-byte alignment; the launch adds 1024 bytes of slack.
  unsigned char* shared = shared_raw + ((1024 - smem_addr(shared_raw) % 1024) % 1024);
  auto stage_a = [&](int s) { return shared + s * STAGE_BYTES; };                     // [BM][TUNE_SPLIT]
  auto stage_a_small = [&](int s) { return shared + s * STAGE_BYTES + A_TILE_BYTES; };  // [BM][TUNE_SPLIT]
  auto stage_b = [&](int s) { return shared + s * STAGE_BYTES + 2 * A_TILE_BYTES; };  // [BN/32][TUNE_SPLIT][32]
  uint64_t* full = reinterpret_cast<uint64_t*>(shared + STAGES * STAGE_BYTES);  // TMA landed
  uint64_t* split = full + STAGES;   // the splitters rewrote the A tile as big and small parts
  uint64_t* empty = split + STAGES;  // both consumers are done with the stage

  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      barrier_init(&full[s], 1);
      barrier_init(&split[s], SPLITTERS);
      barrier_init(&empty[s], 128 * CONSUMERS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  // Blocks run down GROUP_ROWS block rows before moving one block column on, so the blocks
  // on the GPU at one time share their tiles of A and B in L2.
  const int block_rows = sgemm::ceil_div(p.M, BM), block_cols = sgemm::ceil_div(p.N, BN);
  const int group = blockIdx.x / (GROUP_ROWS * block_cols);
  const int group_rows = min(block_rows - group * GROUP_ROWS, GROUP_ROWS);
  const int in_group = blockIdx.x % (GROUP_ROWS * block_cols);
  const int block_row = (group * GROUP_ROWS + in_group % group_rows) * BM;
  const int block_col = (in_group / group_rows) * BN;
  const int k_tiles = sgemm::ceil_div(p.K, TUNE_SPLIT);

  if (warpgroup == 0) {
    // The producer warpgroup hands its registers to the consumers. Its warp 0 issues every
    // copy (one thread); warps 1 .. 3, the splitters, turn each A tile into its big and
    // small parts while the consumers multiply the tiles before it.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(PRODUCER_REGISTERS));
    if (threadIdx.x == 0) {
      for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
        const int s = k_tile % STAGES, round = k_tile / STAGES;
        if (round > 0) barrier_wait(&empty[s], (round - 1) % 2);  // the consumers gave it back
        barrier_expect_bytes(&full[s], A_TILE_BYTES + B_TILE_BYTES);
        const int k0 = k_tile * TUNE_SPLIT;
        tma_load(stage_a(s), map_a, k0, block_row, &full[s]);
        for (int box = 0; box < BN / B_BOX; ++box)
          tma_load(stage_b(s) + box * (TUNE_SPLIT * B_BOX * 4), map_b, block_col + box * B_BOX, k0, &full[s]);
      }
    } else if (threadIdx.x >= 32) {
      // Element by element, so the swizzle does not matter: the small tile has the A tile's
      // layout. The A tile is rewritten in place with its rounded big part.
      for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
        const int s = k_tile % STAGES;
        barrier_wait(&full[s], (k_tile / STAGES) % 2);
        float4* a = reinterpret_cast<float4*>(stage_a(s));
        float4* a_small = reinterpret_cast<float4*>(stage_a_small(s));
#pragma unroll 2
        for (int i = threadIdx.x - 32; i < A_TILE_BYTES / 16; i += SPLITTERS) {
          const float4 v = a[i];
          float4 big, small;
          tf32_split(v.x, big.x, small.x);
          tf32_split(v.y, big.y, small.y);
          tf32_split(v.z, big.z, small.z);
          tf32_split(v.w, big.w, small.w);
          a[i] = big;
          a_small[i] = small;
        }
        // Make these generic-proxy stores visible to wgmma's (async-proxy) reads.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        barrier_arrive(&split[s]);
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(CONSUMER_REGISTERS));
  const int consumer = warpgroup - 1;               // which 64 columns of the block
  const int warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  int frag_offset[2][2];  // [kh][h]: byte offset of this thread's B values at k step 0
#pragma unroll
  for (int kh = 0; kh < 2; ++kh)
#pragma unroll
    for (int h = 0; h < 2; ++h) frag_offset[kh][h] = b_tile_offset(t + 4 * kh, consumer * WGMMA_M + operand_col(warp, h, g));

  float acc[64] = {};  // this thread's part of C^T, summed in FP32 over the k tiles
  float d[64];         // wgmma's accumulator: one k tile's three products
  for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
    const int s = k_tile % STAGES;
    const unsigned parity = (k_tile / STAGES) % 2;
    barrier_wait(&full[s], parity);  // B has landed (A too, but the splitters are at it)

    // B^T's fragments, split in registers into big and small parts, per k step.
    unsigned b_big[K_STEPS][4], b_small[K_STEPS][4];
    const unsigned char* b_tile = stage_b(s);
#pragma unroll
    for (int step = 0; step < K_STEPS; ++step)
#pragma unroll
      for (int kh = 0; kh < 2; ++kh)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          // k = 8 step + t + 4 kh: 8 rows further per step, the same swizzle phase (k % 8).
          const float b = *reinterpret_cast<const float*>(b_tile + frag_offset[kh][h] + step * WGMMA_K * 128);
          float big, small;
          tf32_split(b, big, small);
          b_big[step][h + 2 * kh] = __float_as_uint(big);
          b_small[step][h + 2 * kh] = __float_as_uint(small);
        }

    // The three products, small ones first, into d (which the first one resets to zero).
    barrier_wait(&split[s], parity);  // A's big and small parts are in place
    wgmma_fence();
    wgmma_m64n128k8<true>(d, b_small[0], tile_descriptor(stage_a(s), 0));
#pragma unroll
    for (int step = 1; step < K_STEPS; ++step) wgmma_m64n128k8<false>(d, b_small[step], tile_descriptor(stage_a(s), step));
#pragma unroll
    for (int step = 0; step < K_STEPS; ++step)
      wgmma_m64n128k8<false>(d, b_big[step], tile_descriptor(stage_a_small(s), step));
#pragma unroll
    for (int step = 0; step < K_STEPS; ++step) wgmma_m64n128k8<false>(d, b_big[step], tile_descriptor(stage_a(s), step));
    wgmma_commit();
    wgmma_wait_all();
    barrier_arrive(&empty[s]);  // the stage may be refilled

#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += d[i];  // FP32, round to nearest
  }

  // acc holds C^T: d[4 j + 2 h + v] is column operand_col(warp, h, g) and row 8 j + 2 t + v.
#pragma unroll
  for (int j = 0; j < BM / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int v = 0; v < 2; ++v) {
        const int row = block_row + 8 * j + 2 * t + v;
        const int col = block_col + consumer * WGMMA_M + operand_col(warp, h, g);
        if (row < p.M && col < p.N) store_c(p, row, col, acc[4 * j + 2 * h + v]);
      }
#else
  // Built without sm_90a (wgmma, TMA and setmaxnreg do not exist elsewhere): the harness
  // refuses to run this step on such GPUs; if the kernel is reached anyway, fail loudly.
  __trap();
#endif
}

// ---- host side -------------------------------------------------------------------------------

// cuTensorMapEncodeTiled lives in the driver library; the runtime hands out its address, so
// the step needs no -lcuda.
static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || f == nullptr)
      throw sgemm::CudaError("cuTensorMapEncodeTiled is not available from this driver");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// A row-major [rows][cols] matrix with row stride ld, read in boxes of [box_rows][box_cols]
// with the 128-byte swizzle; boxes past the edges are zero-filled.
static CUtensorMap tensor_map(const float* base, int rows, int cols, int ld, int box_rows, int box_cols) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(ld) * sizeof(float)};
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims, strides,
                                    box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw sgemm::CudaError("cuTensorMapEncodeTiled failed with CUresult " + std::to_string(r));
  return map;
}

// TMA reads global memory at 16-byte-aligned bases and row strides. A matrix that is not
// (a row stride that is no multiple of 4 floats, or a base off by a few floats) is first
// copied into an aligned workspace, allocated once and grown when needed.
static const float* aligned_operand(const float* m, int rows, int cols, int& ld, int which, cudaStream_t stream) {
  if (reinterpret_cast<uintptr_t>(m) % 16 == 0 && ld % 4 == 0) return m;
  static float* workspace[2] = {};
  static size_t capacity[2] = {};
  const int aligned_ld = (cols + 3) / 4 * 4;
  const size_t bytes = size_t(rows) * aligned_ld * sizeof(float);
  if (bytes > capacity[which]) {
    if (workspace[which] != nullptr) CUDA_CHECK(cudaFree(workspace[which]));
    CUDA_CHECK(cudaMalloc(&workspace[which], bytes));
    capacity[which] = bytes;
  }
  CUDA_CHECK(cudaMemcpy2DAsync(workspace[which], aligned_ld * sizeof(float), m, size_t(ld) * sizeof(float),
                               cols * sizeof(float), rows, cudaMemcpyDeviceToDevice, stream));
  ld = aligned_ld;
  return workspace[which];
}

void launch(const sgemm::Problem& p, cudaStream_t stream) {
  int lda = p.lda, ldb = p.ldb;
  const float* a = aligned_operand(p.A, p.M, p.K, lda, 0, stream);
  const float* b = aligned_operand(p.B, p.K, p.N, ldb, 1, stream);
  const CUtensorMap map_a = tensor_map(a, p.M, p.K, lda, BM, TUNE_SPLIT);     // boxes [BM][TUNE_SPLIT]
  const CUtensorMap map_b = tensor_map(b, p.K, p.N, ldb, TUNE_SPLIT, B_BOX);  // boxes [TUNE_SPLIT][32]
  const int blocks = sgemm::ceil_div(p.M, BM) * sgemm::ceil_div(p.N, BN);
  CUDA_CHECK(cudaFuncSetAttribute(sgemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES));
  sgemm_kernel<<<blocks, THREADS, SHARED_BYTES, stream>>>(map_a, map_b, p);
}

// 90: compute capability 9.0 exactly, the only one the sm_90a kernel runs on.
// sm_90a code (wgmma, setmaxnreg) runs on compute capability 9.0 alone.
int main(int argc, char** argv) {
  return sgemm::run_step(argc, argv, SGEMM_STEP, launch, {.shared_bytes = SHARED_BYTES, .compute_capability = 90});
}
