// Minimal .npy (NumPy format 1.0/2.0) reading and writing of 2-D float32 arrays, so anyone
// can feed a step their own A, B, C and check its result with numpy:
//     np.allclose(np.load("C.npy"), alpha * A @ B + beta * C0, rtol=1e-4, atol=1e-4)
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace sgemm {

struct Matrix {
  int rows = 0, cols = 0;
  std::vector<float> data;  // row-major, rows * cols
};

// Throws std::runtime_error("<path>: <what is wrong>") for a missing file, a header it
// cannot read, a dtype other than little-endian float32, Fortran order, a shape that is not
// 2-D, or a file shorter than its header promises.
Matrix read_npy(const std::string& path);

// Writes rows x cols floats taken from `data` with row stride `ld` (ld >= cols).
void write_npy(const std::string& path, const float* data, int rows, int cols, int ld);

}  // namespace sgemm
