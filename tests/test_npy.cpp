#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "npy.hpp"

using namespace sgemm;

namespace {
std::string tmp(const std::string& name) { return std::string(SGEMM_TEST_TMP) + "/" + name; }

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string error_of(const std::string& path) {
  try {
    read_npy(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// A version-1.0 header as numpy writes it, padded to 64 bytes.
std::string npy_header(const std::string& dict) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += char(h.size() & 0xff);
  out += char(h.size() >> 8);
  return out + h;
}
}  // namespace

TEST_CASE("npy round trip of a strided matrix") {
  const int rows = 3, cols = 5, ld = 8;
  std::vector<float> src(rows * ld);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = 0.25f * float(i) - 3.0f;
  const std::string path = tmp("roundtrip.npy");
  write_npy(path, src.data(), rows, cols, ld);
  const Matrix m = read_npy(path);
  REQUIRE(m.rows == rows);
  REQUIRE(m.cols == cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) CHECK(m.data[r * cols + c] == src[r * ld + c]);
}

TEST_CASE("npy header is what numpy expects") {
  const float x = 1.0f;
  const std::string path = tmp("one.npy");
  write_npy(path, &x, 1, 1, 1);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() % 64 == 4);  // header padded to a multiple of 64 bytes, then one float
  CHECK(bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
  CHECK(bytes.find("'descr': '<f4'") != std::string::npos);
  CHECK(bytes.find("'shape': (1, 1)") != std::string::npos);
  CHECK(bytes[bytes.size() - 5] == '\n');
}

TEST_CASE("npy files numpy writes are read (spacing, trailing comma)") {
  const std::string path = tmp("numpy_style.npy");
  const float v[6] = {1, 2, 3, 4, 5, 6};
  write_bytes(path, npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") +
                        std::string(reinterpret_cast<const char*>(v), sizeof v));
  const Matrix m = read_npy(path);
  CHECK(m.rows == 2);
  CHECK(m.cols == 3);
  CHECK(m.data[5] == 6.0f);
}

TEST_CASE("bad npy files are rejected with the path and the reason") {
  CHECK(error_of(tmp("does_not_exist.npy")).find("cannot open") != std::string::npos);
  write_bytes(tmp("text.npy"), "hello world, not numpy");
  CHECK(error_of(tmp("text.npy")).find("not a .npy file") != std::string::npos);
  write_bytes(tmp("f8.npy"), npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }") + std::string(8, '\0'));
  CHECK(error_of(tmp("f8.npy")).find("float32") != std::string::npos);
  write_bytes(tmp("fortran.npy"), npy_header("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 1), }") + std::string(4, '\0'));
  CHECK(error_of(tmp("fortran.npy")).find("Fortran") != std::string::npos);
  write_bytes(tmp("1d.npy"), npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }") + std::string(16, '\0'));
  CHECK(error_of(tmp("1d.npy")).find("2-D") != std::string::npos);
  write_bytes(tmp("short.npy"), npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }") + std::string(12, '\0'));
  const std::string e = error_of(tmp("short.npy"));
  CHECK(e.find("short.npy") != std::string::npos);
  CHECK(e.find("shorter than its shape") != std::string::npos);
}
