#include <cstdio>
#include <limits>
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

// A version-2.0 header (4-byte length), not padded.
std::string npy2_header(const std::string& dict) {
  std::string out = std::string("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) out += char((dict.size() >> (8 * i)) & 0xff);
  return out + dict;
}

std::string dict(const std::string& shape, const std::string& fortran = "False", const std::string& descr = "'<f4'") {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

std::string floats(std::size_t n) { return std::string(n * 4, '\0'); }

// The error of reading a file with these bytes.
std::string error_of_bytes(const std::string& name, const std::string& bytes) {
  write_bytes(tmp(name), bytes);
  return error_of(tmp(name));
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
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
  CHECK(error_of(tmp("1d.npy")).find("shape (4,) has 1 dimension; a matrix has 2") != std::string::npos);
  write_bytes(tmp("short.npy"), npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }") + std::string(12, '\0'));
  const std::string e = error_of(tmp("short.npy"));
  CHECK(e.find("short.npy") != std::string::npos);
  CHECK(e.find("holds 12 bytes of data, but shape (2, 2) of float32 needs 16 (the file is cut short)") != std::string::npos);
}

TEST_CASE("npy versions 1.0, 2.0 and 3.0 are read; others are named") {
  CHECK(error_of_bytes("v2.npy", npy2_header(dict("(2, 2)")) + floats(4)).empty());
  std::string v3 = npy2_header(dict("(1, 1)")) + floats(1);
  v3[6] = 3;
  CHECK(error_of_bytes("v3.npy", v3).empty());
  std::string v4 = v3;
  v4[6] = 4;
  CHECK(contains(error_of_bytes("v4.npy", v4), "format version 4.0; this reader knows 1.0, 2.0 and 3.0"));
  std::string v11 = npy_header(dict("(1, 1)")) + floats(1);
  v11[7] = 1;
  CHECK(contains(error_of_bytes("v11.npy", v11), "version 1.1"));
}

TEST_CASE("npy header limits: numpy's 10000 bytes, and no recursion whatever the text") {
  // 9000 blanks inside the dict: long but legal, read like any other header.
  const std::string spaced = "{'descr': '<f4', " + std::string(9000, ' ') + "'fortran_order': False, 'shape': (1, 2)}";
  CHECK(error_of_bytes("spaced.npy", npy2_header(spaced) + floats(2)).empty());
  // 26 KB of blanks (which once overflowed the stack of a regex) is over the limit.
  const std::string huge = "{'descr': '<f4', " + std::string(26000, ' ') + "'fortran_order': False, 'shape': (1, 2)}";
  CHECK(contains(error_of_bytes("blanks.npy", npy2_header(huge) + floats(2)), "is more than the 10000 bytes this reader (like numpy's np.load) accepts"));
  // A claimed length of 4 GiB in a short file: refused before anything is allocated.
  CHECK(contains(error_of_bytes("len4g.npy", std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12) + "{}"), "is more than the 10000"));
  // Nesting 4000 deep is one error, not 4000 stack frames.
  CHECK(contains(error_of_bytes("nested.npy", npy2_header(dict(std::string(4000, '(') + std::string(4000, ')'))) + floats(1)),
                 "'shape' must be a tuple of integers"));
}

TEST_CASE("npy header syntax errors say what is wrong") {
  CHECK(contains(error_of_bytes("nobrace.npy", npy2_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)")),
                 "header ends before the dict's closing '}'"));
  CHECK(contains(error_of_bytes("list.npy", npy2_header("[1, 2]")), "not a Python dict"));
  CHECK(contains(error_of_bytes("dup.npy", npy2_header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)}") + floats(1)),
                 "gives 'descr' twice"));
  CHECK(contains(error_of_bytes("extra.npy", npy2_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'x': 1}") + floats(1)),
                 "has the key 'x'"));
  CHECK(contains(error_of_bytes("noshape.npy", npy2_header("{'descr': '<f4', 'fortran_order': False}")), "header has no 'shape'"));
  CHECK(contains(error_of_bytes("nodescr.npy", npy2_header("{'fortran_order': False, 'shape': (1, 1)}")), "no 'descr'"));
  CHECK(contains(error_of_bytes("struct.npy", npy2_header(dict("(1, 1)", "False", "[('a', '<f4')]")) + floats(1)), "structured dtype"));
  CHECK(contains(error_of_bytes("trail.npy", npy2_header(dict("(1, 1)") + " x") + floats(1)), "text after its closing '}'"));
  CHECK(error_of_bytes("dq.npy", npy2_header("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1, 1)}") + floats(1)).empty());
}

TEST_CASE("npy fortran_order, dtype and shape are judged with the real reason") {
  CHECK(contains(error_of_bytes("f0.npy", npy_header(dict("(1, 1)", "0")) + floats(1)), "'fortran_order' must be True or False, found '0'"));
  CHECK(contains(error_of_bytes("fT.npy", npy_header(dict("(2, 2)", "True")) + floats(4)), "Fortran order"));
  CHECK(contains(error_of_bytes("be.npy", npy_header(dict("(1, 1)", "False", "'>f4'")) + floats(1)), "big-endian"));
  CHECK(contains(error_of_bytes("u1.npy", npy_header(dict("(1, 1)", "False", "'|u1'")) + floats(1)), "found '|u1'"));
  CHECK(contains(error_of_bytes("neg.npy", npy_header(dict("(-1, 3)")) + floats(3)), "shape (-1, 3) has a negative dimension"));
  CHECK(contains(error_of_bytes("zero.npy", npy_header(dict("(0, 3)"))), "shape (0, 3) is empty"));
  CHECK(contains(error_of_bytes("3d.npy", npy_header(dict("(2, 3, 4)")) + floats(24)), "shape (2, 3, 4) has 3 dimensions"));
  CHECK(contains(error_of_bytes("0d.npy", npy_header(dict("()")) + floats(1)), "shape () has 0 dimensions"));
  CHECK(contains(error_of_bytes("long.npy", npy_header(dict("(99999999999999999999999, 1)")) + floats(1)),
                 "shape (99999999999999999999999, 1) is too large"));
  CHECK(contains(error_of_bytes("big.npy", npy_header(dict("(46341, 46341)")) + floats(1)), "fewer than 2^31 elements"));
  CHECK(contains(error_of_bytes("str.npy", npy_header(dict("(3, 'a')")) + floats(3)), "found ''a''"));
}

TEST_CASE("npy shape is checked against the file size before any allocation") {
  // (2^31 - 1, 1) claimed by a tiny file: a message at once, not 8 GiB zeroed first.
  const std::string e = error_of_bytes("claim.npy", npy_header(dict("(2147483647, 1)")) + floats(40));
  CHECK(contains(e, "holds 160 bytes of data, but shape (2147483647, 1) of float32 needs 8589934588 (the file is cut short)"));
  CHECK(contains(error_of_bytes("long_data.npy", npy_header(dict("(2, 2)")) + floats(4) + "x"), "the shape or dtype is wrong"));
  CHECK(contains(error_of_bytes("empty.npy", ""), "is empty"));
  CHECK(contains(error_of_bytes("magic.npy", "\x93NUM"), "not a .npy file"));
  CHECK(contains(error_of_bytes("zip.npy", "PK\x03\x04 rest of a zip"), "zip archive"));
  CHECK(contains(error_of_bytes("cut_header.npy", npy_header(dict("(1, 1)")).substr(0, 40)), "ends inside its header"));
  CHECK(contains(error_of(SGEMM_TEST_TMP), "is a directory"));
  // A good file opens: its own (CTest runs the test cases in parallel, so none may lean on a
  // file another one writes).
  const float good[15] = {};
  write_npy(tmp("shape_ok.npy"), good, 3, 5, 5);
  const NpyFile f(tmp("shape_ok.npy"));
  CHECK(f.rows() == 3);
  CHECK(f.cols() == 5);
}

TEST_CASE("npy non-finite inputs are named by index") {
  Matrix m{2, 3, {0, 1, 2, 3, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}};
  std::string e;
  try {
    require_finite(m, "A.npy");
  } catch (const std::runtime_error& x) {
    e = x.what();
  }
  CHECK(contains(e, "A.npy: element [1, 1] (row, column from 0) is NaN"));
  CHECK(contains(e, "2 non-finite values in all"));
  m.data[4] = 1;
  m.data[5] = 1;
  CHECK_NOTHROW(require_finite(m, "A.npy"));
}

TEST_CASE("npy writing reports a full disk") {
  const float x[4] = {1, 2, 3, 4};
  CHECK_THROWS(write_npy("/dev/full", x, 2, 2, 2));
  CHECK_THROWS(write_npy(std::string(SGEMM_TEST_TMP) + "/no/such/dir/c.npy", x, 2, 2, 2));
}

TEST_CASE("npy shapes past 64 bits are too large, never wrapped round (numpy refuses them too)") {
  // 2^64 + 2 once wrapped to 2, so this file with 6 floats was read as a 2 x 3 matrix.
  CHECK(contains(error_of_bytes("wrap_2.npy", npy_header(dict("(18446744073709551618, 3)")) + floats(6)),
                 "shape (18446744073709551618, 3) is too large"));
  CHECK(contains(error_of_bytes("wrap_1.npy", npy_header(dict("(18446744073709551617, 18446744073709551617)")) + floats(1)),
                 "is too large: a matrix must have fewer than 2^31 elements"));
  // 2^64 wrapped to 0: refused, but as "empty", the wrong reason.
  const std::string e = error_of_bytes("wrap_0.npy", npy_header(dict("(18446744073709551616, 18446744073709551616)")));
  CHECK(contains(e, "is too large"));
  CHECK_FALSE(contains(e, "empty"));
}

TEST_CASE("npy dtype: every spelling np.load reads as little-endian float32, nothing else") {
  for (const char* descr : {"'<f4'", "'f4'", "'=f4'", "'|f4'", "'<f'", "'f'", "'=f'", "'|f'", "'float32'", "'single'"}) {
    INFO(descr);
    CHECK(error_of_bytes("dtype_ok.npy", npy_header(dict("(2, 3)", "False", descr)) + floats(6)).empty());
  }
  CHECK(contains(error_of_bytes("c8.npy", npy_header(dict("(2, 3)", "False", "'<c8'")) + floats(12)), "found '<c8'"));
  CHECK(contains(error_of_bytes("bang.npy", npy_header(dict("(2, 3)", "False", "'!f4'")) + floats(6)), "found '!f4'"));
  CHECK(contains(error_of_bytes("float.npy", npy_header(dict("(2, 3)", "False", "'float'")) + floats(12)), "found 'float'"));
  CHECK(contains(error_of_bytes("blank_f4.npy", npy_header(dict("(2, 3)", "False", "'<f4 '")) + floats(6)), "found '<f4 '"));
}

TEST_CASE("npy shape spellings: blanks, tabs and trailing commas as Python reads them; no leading zeros") {
  for (const char* shape : {"( 2, 3 )", "(2,\t3)", "(\t2,3\t)", "(2, 3,)", "(2,3 , )", "(2,\f3)", "(2,\r\n3)", "(+ 2, 3)"}) {
    INFO(shape);
    CHECK(error_of_bytes("shape_ok.npy", npy_header(dict(shape)) + floats(6)).empty());
  }
  CHECK(contains(error_of_bytes("lead0.npy", npy_header(dict("(02, 3)")) + floats(6)),
                 "'shape' has the integer 02 with a leading zero, which np.load does not read"));
  CHECK(contains(error_of_bytes("lead0_b.npy", npy_header(dict("(2, 03)")) + floats(6)), "03 with a leading zero"));
  CHECK(contains(error_of_bytes("zeros.npy", npy_header(dict("(00, 3)"))), "shape (00, 3) is empty"));
  CHECK(contains(error_of_bytes("vtab.npy", npy_header(dict("(2,\v3)")) + floats(6)), "'shape' must be a tuple of integers"));
  CHECK(contains(error_of_bytes("two_commas.npy", npy_header(dict("(2, 3,,)")) + floats(6)), "'shape' must be a tuple of integers"));
}
