// Minimal .npy (NumPy format 1.0/2.0/3.0) reading and writing of 2-D float32 arrays, so
// anyone can feed a step their own A, B, C and check its result with numpy:
//     np.allclose(np.load("C.npy"), alpha * A @ B + beta * C0, rtol=1e-4, atol=1e-4)
//
// The reader trusts nothing in the file: the header is at most kMaxNpyHeaderBytes (numpy's
// own default limit for np.load), it is parsed by a flat loop (no regular expressions, no
// recursion, so no header can exhaust the stack), and the shape is checked against the
// file's size before a byte of data is allocated. Every failure is a std::runtime_error
// "<path>: <what is wrong>" on one line.
//
// It reads what np.load reads as a 2-D C-order float32 array, in the spellings numpy writes
// and the variations a hand-made header has: any 'descr' numpy reads as little-endian
// float32 ('<f4', 'f4', '=f4', '|f4', 'f', 'float32', ...), blanks, tabs and line ends
// between tokens, a trailing comma, either quote. Shapes are refused where numpy refuses them
// (an integer with a leading zero, one past 64 bits: never wrapped round). Python syntax that
// numpy never writes (comments, escapes, hexadecimal or parenthesised numbers, a key given
// twice) is refused with a message, though np.load would read some of it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sgemm {

class OutputFile;

// numpy's np.load refuses headers longer than this unless told otherwise
// (max_header_size); a 2-D float32 header as numpy writes it is 118 bytes.
inline constexpr std::size_t kMaxNpyHeaderBytes = 10000;

struct Matrix {
  int rows = 0, cols = 0;
  std::vector<float> data;  // row-major, rows * cols
};

// An open .npy file whose header has been read and judged; the data is read by read().
// Reading in two steps lets a caller check that several files fit together before it
// reads any of their data. Works on pipes too (the data then arrives as it is read).
class NpyFile {
 public:
  explicit NpyFile(const std::string& path);  // throws on any header problem
  ~NpyFile();
  NpyFile(const NpyFile&) = delete;
  NpyFile& operator=(const NpyFile&) = delete;
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  // A regular file, whose size was checked against the shape; else a pipe (standard input)
  // or a character device, whose data is only known once it is read.
  bool is_regular() const { return regular_; }
  const std::string& path() const { return path_; }
  // The data; throws if the file holds fewer or more bytes than the shape needs.
  Matrix read();

 private:
  std::string path_;
  int fd_ = -1;
  bool regular_ = false;
  std::uint64_t data_bytes_in_file_ = 0;  // regular files: bytes after the header
  int rows_ = 0, cols_ = 0;
};

// Throws std::runtime_error("<path>: ...") for a missing or unreadable file, a directory, a
// header it cannot read, a dtype other than little-endian float32, Fortran order, a shape
// that is not 2-D with positive dimensions and fewer than 2^31 elements, or a file whose
// size does not match its shape.
Matrix read_npy(const std::string& path);

// Throws std::runtime_error("<path>: element [r, c] ... is NaN ...") naming the first
// non-finite element and how many there are.
void require_finite(const Matrix& m, const std::string& path);

// The 64-byte-aligned version 1.0 header numpy writes for a rows x cols float32 array.
std::string npy_header(int rows, int cols);

// Writes the rows x cols floats of `data` (row stride `ld` >= cols) that follow the header;
// throws on any write error.
void write_npy_data(OutputFile& out, const float* data, int rows, int cols, int ld);
// Writes a whole .npy file; throws std::runtime_error on any open or write error.
void write_npy(const std::string& path, const float* data, int rows, int cols, int ld);

}  // namespace sgemm
