"""The helpers every step shares stay identical unless a step's idea changes them.

A step is the step before it plus one idea, so a helper function (at(), store_c(), copy_tile(),
launch(), ...) is copied unchanged from the previous step that has it, unless the idea needs
it changed. Each such change is listed in CHANGED with the reason; any other difference, in a
step old or new, fails here. The kernel, sgemm_kernel, is where the idea lives and is not
compared. Run by scripts/test.sh:

    python3 -m unittest discover -s tests -p "test_*.py"
"""
import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import project  # noqa: E402

# (step, helper) -> why the step's idea changes the helper from the previous step's copy.
CHANGED = {
    ("02_refactored", "launch"): "the block's size becomes the named THREADS_X x THREADS_Y",
    ("03_shared_memory_tiling", "main"): "the step tells the harness the shared memory it needs (sA and sB)",
    ("15_split_k", "main"): "the shared memory it needs is the larger of its two kernels'",
    ("22_tf32x3_mma", "main"): "one kernel again: its shared memory is what it needs",
    ("03_shared_memory_tiling", "launch"): "the grid counts BM x BN tiles of C",
    ("04_swap_xy_ij_mappings", "launch"): "SWAP_XY: the grid's x runs along M",
    ("07_transpose", "copy_tile"): "A is stored transposed, copied in runs of A_COPY_RUN k",
    ("09_async_loads", "copy_tile"): "cp.async: a tile wholly inside A and B is copied without zero-fill",
    ("10_vectorized_async_copy", "copy_tile_elements"): "B is copied COPY_VECTOR floats per cp.async",
    ("10_vectorized_async_copy", "copy_tile"): "B's tile rows are padded by B_PAD",
    ("12_double_buffer", "launch"): "two stages in dynamic shared memory: the launch raises the block's limit",
    ("13_multi_stage", "wait_copies"): "a ring of stages: wait until only the STAGES - 2 newest copy groups fly",
    ("15_split_k", "launch"): "split-K: the number of splits is chosen from the shape, partial sums reduced",
    ("15_split_k", "outer_product"): "the FFMA order is a template parameter: the split kernel keeps row by row, "
                                     "the unsplit one follows FFMA_BY_COLUMN",
    ("16_stream_k", "launch"): "stream-K: where the last wave of tiles is partial, one block per SM and a reduction of the cut tiles",
    ("16_stream_k", "block_gemm"): "block_gemm<SPLIT, STREAM>: the stream-K kernel calls it once per segment (a tile and a range of its k tiles) and stores C or the segment's piece",
    ("17_aligned_copies", "copy_tile_elements"): "B's copy path fixed at compile time (B_ALIGNED), tested at run time only without ALIGNED_KERNELS",
    ("17_aligned_copies", "copy_tile"): "copy_tile<B_ALIGNED>: the alignment the kernel was compiled for",
    ("17_aligned_copies", "block_gemm"): "block_gemm<B_ALIGNED, SPLIT, STREAM>: the kernel's alignment down to its copies",
    ("17_aligned_copies", "sgemm_kernel_split"): "a template on B_ALIGNED, its registers capped by __maxnreg__(MAX_REGISTERS_SPLIT)",
    ("17_aligned_copies", "sgemm_kernel_stream"): "a template on B_ALIGNED",
    ("17_aligned_copies", "gpu_slots"): "the occupancy of one instance, sgemm_kernel_split<false> (both have one block per SM)",
    ("17_aligned_copies", "launch"): "launch picks the kernels for B's alignment; launch_kernels<B_ALIGNED> is step 16's launch",
    ("18_stream_k_first", "launch_kernels"): "STREAM_FIRST: stream-K's iterations, then the whole tiles, then the reduction beside them, three launches",
    ("18_stream_k_first", "launch_reduction"): "a reduction is one use of launch_overlapped, which the whole tiles' launch shares",
    ("18_stream_k_first", "waits_for_producer"): "asked of every overlapped launch, not only of the reductions",
    ("19_short_last_piece", "launch_kernels"): "the split's k tiles per piece from piece_length: shorter pieces and a short last one where SMs would idle",
    ("20_paired_pieces", "block_gemm"): "PAIR_ROWS: a block of a cluster of two says it has started, and stores its piece with its partner's (store_pair)",
    ("20_paired_pieces", "sgemm_kernel_split_reduce"): "pair_rows: in the paired rows slice 2c holds pieces 2c and 2c+1",
    ("20_paired_pieces", "launch_kernels"): "the split kernel launched in clusters of two where its pieces pair up (an even count, no short piece)",
    ("21_chosen_tile", "sgemm_kernel"): "a wrapper template on the tile, T: its body is T's member function",
    ("21_chosen_tile", "sgemm_kernel_split"): "a wrapper template on the tile, T: its body is T's member function",
    ("21_chosen_tile", "sgemm_kernel_stream"): "a wrapper template on the tile, T: its body is T's member function",
    ("21_chosen_tile", "sgemm_kernel_stream_only"): "a wrapper template on the tile, T: its body is T's member function",
    ("21_chosen_tile", "sgemm_kernel_whole_tiles"): "a wrapper template on the tile, T: its body is T's member function",
    ("21_chosen_tile", "sgemm_kernel_stream_reduce"): "a wrapper template on the tile, T: its body is T's member function",
    ("21_chosen_tile", "sgemm_kernel_stream_reduce_beside"): "a wrapper template on the tile, T: its body is T's member function",
    ("21_chosen_tile", "sgemm_kernel_split_reduce"): "a wrapper template on the tile, T: its body is T's member function",
    ("21_chosen_tile", "launch"): "every tile's plan for the shape, the smallest estimate run (SGEMM_TILE: a forced tile)",
    ("21_chosen_tile", "main"): "the shared memory it needs is the largest of its tiles' kernels'",
    ("22_tf32x3_mma", "copy_tile_elements"): "A is copied untransposed, in 16-byte vectors like B: the mma reads A's rows along k",
    ("22_tf32x3_mma", "copy_tile"): "the tiles keep A untransposed ([BM][TUNE_SPLIT])",
    ("22_tf32x3_mma", "load_fragments"): "fragments in the mma.sync m16n8k8 layout, A and B both",
    ("22_tf32x3_mma", "launch"): "one 1-D block of warps, each a 64 x 32 tile of C",
    ("23_wgmma", "store_c"): "64-bit row offsets into C (the step has no at())",
    ("23_wgmma", "launch"): "rows of A and B made 16-byte aligned for the copies; one block per tile, in groups of block rows",
    ("23_wgmma", "main"): "run_step(..., 90): the sm_90a kernel runs on compute capability 9.0 only",
    ("24_tma_mbarrier", "launch"): "TMA tensor maps of A and B in place of the pointers the copies read",
    ("26_tensor_split_k", "sgemm_kernel_split_reduce"): "step 15's reduction with its griddepcontrol.wait written in (no shared helper file in the tensor chapter) and its stores one float at a time",
    ("26_tensor_split_k", "partial_sums_tile_times"): "a tile-time on tensor cores (tile_us: three products at the TF32 rate), not on the FP32 lanes",
    ("26_tensor_split_k", "choose_splits"): "one block per SM, and PIECE_OVERHEAD_TILES charged to every piece's wave",
    ("26_tensor_split_k", "launch"): "the split of K chosen from the shape: a grid of tiles x pieces, then the reduction",
    ("27_scaled_small_parts", "tf32_split"): "the rest scaled by SMALL_SCALE (2^10) before it is rounded to TF32",
    ("28_scaled_rows_columns", "launch"): "the pass over A and B (largest_magnitudes_for_sgemm_kernel) before the GEMM, whose kernel takes max_bits",
    ("29_split_once", "largest_magnitudes_for_sgemm_kernel"): "its comment names the kernel it lets start early: the split pass, not the GEMM",
    ("30_chosen_split", "largest_magnitudes_for_sgemm_kernel"): "its comment names either kernel it lets start early, the split pass or the GEMM",
    ("30_chosen_split", "choose_splits"): "its estimate moved out into tile_times(), which the choice of the split's place reuses",
    ("30_chosen_split", "launch"): "the place of A's split chosen (split_once) before the passes; A copied to an aligned workspace only where the pipeline splits it",
    ("31_one_pass", "largest_magnitudes_for_sgemm_kernel"): "the pass of the pipeline's place only: B's columns moved out into column_magnitudes(), which the one pass of the other place shares",
    ("31_one_pass", "split_once"): "splitting once now costs the pass's writes (8 MK bytes) and its teams' repeated trips where a row is longer than a chunk (SWEEP_US), not a second launch",
    ("31_one_pass", "launch"): "one pass before the GEMM in either place: where A is split once, scale_and_split_a_for_sgemm_kernel with a team of threads to a row",
    ("32_scaled_on_demand", "split_once"): "the pipeline has no pass before it: splitting once pays the whole pass (its reads, its writes, its launch PASS_US)",
    ("32_scaled_on_demand", "launch"): "no pass where A is split in the pipeline: each block finds its own rows' and columns' largest magnitudes; the GEMM launched without overlap there",
    ("33_raw_big_part", "launch"): "in the pipeline, the kernel whose first sweep takes A itself as its big part where K >= RAW_MIN_K, step 32's below",
    ("35_small_part_pass", "split_once"): "the pass reads A once and writes its small part (8 MK bytes); below RAW_MIN_K never once",
    ("35_small_part_pass", "launch"): "split once, the pass writes A's small parts alone and the GEMM reads A itself (aligned) as the big part",
    ("29_split_once", "launch"): "the split pass between the first pass and the GEMM; TMA maps of A's two parts in the workspace; A no longer copied to an aligned workspace",
    ("37_tile_by_shape", "tile_us"): "a k tile's time for either tile: the narrow tile's NARROW_TILE_PERCENT of the wide one's",
    ("37_tile_by_shape", "partial_sums_tile_times"): "in the tile-times of the tile being planned (its bn)",
    ("37_tile_by_shape", "tile_times"): "the estimate of either tile (its bn)",
    ("37_tile_by_shape", "choose_splits"): "the pieces of K for either tile (its bn)",
    ("37_tile_by_shape", "launch_with"): "not step 21's helper: a function of the same name that launches one tile's kernels with its plan",
    ("37_tile_by_shape", "launch"): "the tile chosen from the shape (choose_tile), then launch_with<that tile's BN>",
    ("37_tile_by_shape", "main"): "the shared memory the harness checks is the wide tile's, shared_bytes(BN)",
    ("39_odd_strides", "b_tile_bytes"): "a B read in phases takes one box of 32 columns more",
    ("39_odd_strides", "stage_bytes"): "the stage of a B read in phases (b_tile_bytes)",
    ("39_odd_strides", "launch_with"): "B in phases or copied (b_phases), its maps and its kernel",
    ("39_odd_strides", "main"): "the shared memory the harness checks is the wide tile's with B in phases",
    ("40_edge_rectangles", "aligned_operand"): "a rectangle before may still read the workspace it grows: the stream is synchronised before the free",
    ("40_edge_rectangles", "sgemm_kernel_split_reduce"): "a vector's pieces shared by up to MAX_REDUCE_GROUPS threads where C has few vectors, REDUCE_LOADS loads in flight",
    ("40_edge_rectangles", "launch_with"): "keeps its path (last_path) for launch to name the rectangles' run",
    ("40_edge_rectangles", "launch"): "C cut into rectangles, each launched as step 39 launches a GEMM (launch_whole)",
    ("40_edge_rectangles", "decide"): "step 40's rule prices rectangles with estimate_us and choose_tile's plans, step 21's with choose over its eight tiles",
    ("40_edge_rectangles", "decide_once"): "step 40's estimates also depend on whether A and B start 16-byte aligned, so its key holds that",
    ("40_edge_rectangles", "choose_tile"): "the narrow tile must beat the wide one by TILE_GAIN_PERCENT (1), not MIN_GAIN_PERCENT (10): at 512^3 the margin kept the slower wide tile",
}
IGNORED = {"sgemm_kernel"}  # the idea itself
FIRST_KERNEL_STEP = "01_initial"  # step 00 calls cuBLAS: nothing of it is shared

NAME = re.compile(r"(\w+)\s*\(")
LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)")


def helpers(path: Path) -> dict[str, str]:
    """name -> text of each top-level function definition (with its template line) in a step."""
    lines = path.read_text().splitlines()
    found, i = {}, 0
    while i < len(lines):
        line = lines[i]
        if not line or line[0] in " /#}" or line.startswith(("static_assert", "constexpr", "using")):
            i += 1
            continue
        start, depth, opened = i, 0, False
        if line.startswith("template"):
            i += 1
        while i < len(lines):
            depth += lines[i].count("{") - lines[i].count("}")
            opened = opened or "{" in lines[i]
            if (opened and depth == 0) or (not opened and lines[i].rstrip().endswith(";")):
                break
            i += 1
        text = "\n".join(lines[start:i + 1])
        head = LAUNCH_BOUNDS.sub("", text.split("{")[0])  # its arguments may call functions (step 37's threads(BN))
        names = [n for n in NAME.findall(head) if n not in ("__maxnreg__", "template")]
        if opened and names:
            found[names[0]] = text
        i += 1
    return found


class SharedHelpers(unittest.TestCase):
    def test_helpers_change_only_with_a_reason(self):
        last: dict[str, tuple[str, str]] = {}  # helper -> (step, text) of its latest copy
        unexplained = []
        for step in project.steps()[project.steps().index(FIRST_KERNEL_STEP):]:
            for name, text in helpers(project.step_source(step)).items():
                if name in IGNORED:
                    continue
                if name in last and last[name][1] != text and (step, name) not in CHANGED:
                    unexplained.append(f"{step}: {name}() differs from {last[name][0]}'s copy")
                last[name] = (step, text)
        self.assertEqual(unexplained, [], "a helper changed without a reason: make the copies identical, "
                                          "or add (step, helper) with the reason to CHANGED in " + __file__)

    def test_every_listed_change_is_a_change(self):
        """A stale entry in CHANGED would let a later, unexplained change through."""
        steps = project.steps()
        steps = steps[steps.index(FIRST_KERNEL_STEP):]
        for step, name in CHANGED:
            with self.subTest(step=step, helper=name):
                self.assertIn(step, steps)
                before = [helpers(project.step_source(s)).get(name) for s in steps[:steps.index(step)]]
                before = [text for text in before if text is not None]
                now = helpers(project.step_source(step)).get(name)
                self.assertIsNotNone(now, f"{step} has no {name}()")
                self.assertTrue(before, f"no step before {step} has {name}()")
                self.assertNotEqual(before[-1], now, f"{step}'s {name}() is the same as before: drop it from CHANGED")

    def test_the_parser_finds_the_helpers(self):
        found = helpers(project.step_source("12_double_buffer"))
        for name in ("at", "store_c", "copy_tile", "load_fragments", "sgemm_kernel", "launch", "main"):
            self.assertIn(name, found)
        self.assertTrue(found["at"].startswith("template <class T>"))
        self.assertTrue(found["at"].endswith("}"))


if __name__ == "__main__":
    unittest.main()
