// Seeded random inputs in [-1, 1]. Never constants: A = 1, B = 0.01 hides every
// transposed index and every missing k term.
#pragma once
#include <cstdint>
#include <vector>

namespace sgemm {

// Fills `out` with values uniform in [-1, 1], reproducible from (seed, stream): each
// matrix gets its own stream so A, B and C never repeat each other.
void fill_uniform(std::vector<float>& out, std::uint64_t seed, std::uint64_t stream);

}  // namespace sgemm
