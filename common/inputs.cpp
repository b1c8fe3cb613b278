#include "inputs.hpp"

namespace sgemm {

namespace {
// SplitMix64: a tiny, well-mixed counter-based generator; element i of a stream depends on
// (seed, stream, i) alone, so the inputs do not depend on how they are generated.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

void fill_uniform(std::vector<float>& out, std::uint64_t seed, std::uint64_t stream) {
  const std::uint64_t base = splitmix64(seed ^ splitmix64(stream + 0x51ed2701ull));
  for (std::size_t i = 0; i < out.size(); ++i) {
    // 24 random bits -> [0, 1) exactly representable in float, then to [-1, 1).
    const std::uint64_t bits = splitmix64(base + i) >> 40;
    out[i] = static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
  }
}

}  // namespace sgemm
