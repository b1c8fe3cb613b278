#include "npy.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <stdexcept>

namespace sgemm {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

}  // namespace

Matrix read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) fail(path, "not a .npy file");
  const int major = static_cast<unsigned char>(magic[6]);
  std::uint32_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) fail(path, "truncated header");
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) fail(path, "truncated header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (std::uint32_t(b[3]) << 24);
  } else {
    fail(path, "unsupported .npy version " + std::to_string(major));
  }
  if (header_len > (1u << 20)) fail(path, "header too long");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) fail(path, "truncated header");

  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')")))
    fail(path, "header has no 'descr'");
  if (m[1] != "<f4") fail(path, "dtype must be float32 ('<f4'), found '" + m[1].str() + "'");
  if (!std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*(True|False))")))
    fail(path, "header has no 'fortran_order'");
  if (m[1] == "True") fail(path, "Fortran-ordered arrays are not supported (use np.ascontiguousarray)");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(\s*(\d+)\s*,\s*(\d+)\s*,?\s*\))")))
    fail(path, "shape must be 2-D (rows, cols)");
  const unsigned long long rows = std::stoull(m[1]), cols = std::stoull(m[2]);
  if (rows == 0 || cols == 0) fail(path, "empty matrix");
  if (rows > std::numeric_limits<int>::max() || cols > std::numeric_limits<int>::max() ||
      rows * cols > std::numeric_limits<int>::max())
    fail(path, "matrix too large");

  Matrix out;
  out.rows = static_cast<int>(rows);
  out.cols = static_cast<int>(cols);
  out.data.resize(rows * cols);
  if (!in.read(reinterpret_cast<char*>(out.data.data()), out.data.size() * sizeof(float)))
    fail(path, "file shorter than its shape (" + std::to_string(rows) + ", " + std::to_string(cols) + ")");
  return out;
}

void write_npy(const std::string& path, const float* data, int rows, int cols, int ld) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) +
                       ", " + std::to_string(cols) + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n' is padded to a multiple of 64.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');

  std::ofstream out(path, std::ios::binary);
  if (!out) fail(path, "cannot open for writing");
  out.write("\x93NUMPY\x01\x00", 8);
  const std::uint16_t len = static_cast<std::uint16_t>(header.size());
  const char len_le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_le, 2);
  out.write(header.data(), header.size());
  for (int r = 0; r < rows; ++r)
    out.write(reinterpret_cast<const char*>(data + static_cast<std::size_t>(r) * ld), cols * sizeof(float));
  if (!out) fail(path, "write failed");
}

}  // namespace sgemm
