"""Step 21's tall tile keeps A as lines of 16-byte vectors (VECTOR_A): row r of the tile at slot
a_slot(r) of a line of A_LINE vectors, one line per 4 k. Its comment says a warp's copies and
its fragment loads are free of bank conflicts. This test reads a_slot's expression, A_LINE and
the tall tile's thread layout from the step's source and counts the shared-memory wavefronts
of every warp's 16-byte accesses: 128 bytes (8 vectors, one per group of 4 banks) per
wavefront, so a warp's 32 vectors need at least 4 and 8 lanes reading one vector need 1.

    python3 -m unittest discover -s tests -p "test_*.py"
"""
import re
import unittest
from collections import defaultdict
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "steps" / "21_chosen_tile" / "chosen_tile.cu"


def wavefronts(vectors: list[int]) -> int:
    """Wavefronts of one warp's 16-byte accesses at these vector addresses (a vector read by
    several lanes counts once): the most distinct vectors that share a bank group."""
    groups = defaultdict(set)
    for v in vectors:
        groups[v % 8].add(v)
    return max(len(g) for g in groups.values())


class VectorABanks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        text = SOURCE.read_text()
        expr = re.search(r"static int a_slot\(int r\) \{ return (.+?); \}", text)
        assert expr, "a_slot's one-line definition not found"
        cls.a_slot = staticmethod(eval("lambda r: " + expr.group(1)))  # C's & | >> ~ on ints, as Python's
        line = re.search(r"static constexpr int A_LINE = BM \+ (\d+);", text)
        assert line, "A_LINE = BM + n not found"
        cls.line_pad = int(line.group(1))
        tall = re.search(r"using Tile256x64 = Tile<(\d+), (\d+), (\d+), (\d+), (\d+), PEAK_PERCENT_256X64, VECTOR_A_256X64>;", text)
        assert tall, "the tall tile's declaration not found"
        cls.tx, cls.ty, cls.ttx, cls.tty, cls.wsx = (int(v) for v in tall.groups())
        cls.tune_split = int(re.search(r"TUNE_SPLIT = SGEMM_KNOB\(TUNE_SPLIT, (\d+)\)", text).group(1))

    def test_the_slots_are_a_permutation_of_the_rows(self):
        bm = self.ty * self.tty
        self.assertEqual(sorted(self.a_slot(r) for r in range(bm)), list(range(bm)))

    def test_copies_take_the_fewest_wavefronts(self):
        # copy_tile_elements: thread tid copies vector tid % (TUNE_SPLIT / 4) of row tid / (TUNE_SPLIT / 4).
        bm, threads, per_row = self.ty * self.tty, self.tx * self.ty, self.tune_split // 4
        line = bm + self.line_pad
        for warp in range(threads // 32):
            for n in range(bm // (threads // per_row)):
                vectors = []
                for lane in range(32):
                    tid = warp * 32 + lane
                    row = tid // per_row + n * (threads // per_row)
                    vectors.append((tid % per_row) * line + self.a_slot(row))
                self.assertEqual(wavefronts(vectors), 4, f"warp {warp}, pass {n}")

    def test_fragment_loads_take_one_wavefront(self):
        # block_gemm: lane's thread_y = (warp / WARPS_X) * WARP_SHAPE_Y + lane / WARP_SHAPE_X; row i of
        # its tile is tile_row(thread_y, i) = (i / 4) * THREADS_Y * 4 + thread_y * 4 + i % 4.
        bm, threads = self.ty * self.tty, self.tx * self.ty
        line = bm + self.line_pad
        warps_x, wsy = self.tx // self.wsx, 32 // self.wsx
        for warp in range(threads // 32):
            for q in range(self.tune_split // 4):
                for i in range(self.tty):
                    vectors = []
                    for lane in range(32):
                        thread_y = (warp // warps_x) * wsy + lane // self.wsx
                        row = (i // 4) * self.ty * 4 + thread_y * 4 + i % 4
                        vectors.append(q * line + self.a_slot(row))
                    self.assertEqual(wavefronts(vectors), 1, f"warp {warp}, line {q}, row {i}")


if __name__ == "__main__":
    unittest.main()
