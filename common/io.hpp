// The harness's files, judged on the host before any GPU work: the inputs of --load-a/-b/-c
// are read and checked (shapes, sizes, finite values), and the outputs of --csv and --save-c
// are opened, so a bad file or path costs no CUDA start-up and loses no result at the end.
// Every write is checked: a write error is never a success.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "csv.hpp"

namespace sgemm {

// Inputs and outputs are regular files or character devices (/dev/null, /dev/zero, a
// terminal for an output). A pipe (FIFO) is refused, because opening one can wait for ever
// for its other end, unless it is one of this process's own standard streams, which are open
// already: /dev/stdin as an input, /dev/stdout or /dev/stderr as an output.
//
// Is the file `st` describes one of this process's standard streams `std_fds` (0 stdin, 1
// stdout, 2 stderr)? /dev/stdout names one, and so does any other path to the same file.
bool is_std_stream(const struct stat& st, std::initializer_list<int> std_fds);

// No output may be an input or the other output: --csv and --save-c are compared with
// --load-a/-b/-c and with each other as files, however the paths are spelled (symlinks,
// "..", "./", hard links), and, for a file that does not exist yet, as the file each would
// create (its directory's canonical path and its name). Throws UsageError naming both.
void check_distinct_files(const Options& o);

// A file opened for writing. It is created if missing but never truncated when opened, so
// a file that exists keeps its contents until the new ones are written; a file this object
// created and never wrote to is removed again when it is destroyed (a failed run leaves
// nothing behind).
class OutputFile {
 public:
  enum class Mode { Append, Replace };
  OutputFile() = default;
  // `option` ("--csv") names the file in messages. Throws UsageError when the path cannot
  // be opened for writing: a missing directory, no permission, a directory, a pipe (FIFO)
  // other than this process's stdout or stderr, a block device.
  OutputFile(std::string option, std::string path, Mode mode);
  ~OutputFile();
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&& other) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  bool is_open() const { return fd_ >= 0; }
  // A regular file, and not this process's stdout or stderr: it can be read back and
  // truncated. Anything else (a terminal, a pipe, /dev/null, /dev/full, /dev/stdout) is a
  // stream, written front to back.
  bool is_regular() const { return regular_; }
  std::uint64_t size_at_open() const { return size_at_open_; }
  // "--csv results.csv", for messages.
  std::string where() const;

  // Writes all of `bytes` or throws std::runtime_error naming the file and the error.
  // Streams get stdout flushed first, so a CSV sent to /dev/stdout follows the table.
  void write(std::string_view bytes);
  // Regular files only: empties the file, so what is written next replaces it.
  void truncate();
  // Regular files only: up to `max` bytes from `offset`.
  std::string read_at(std::uint64_t offset, std::size_t max) const;
  // Closes the file, reporting a late write error (NFS, quotas) as std::runtime_error.
  void close();

 private:
  void release() noexcept;
  std::string option_, path_;
  int fd_ = -1;
  bool regular_ = false, created_ = false, written_ = false;
  std::uint64_t size_at_open_ = 0;
};

// --csv: rows appended to a results file, the header first when the file is new or empty.
// Judged when opened: a file whose first line is another header, or whose last line is cut
// off, is a UsageError then, and a stream (/dev/stdout, /dev/full) gets its header at once,
// so a stream that cannot be written is reported before the run.
class CsvOutput {
 public:
  CsvOutput() = default;
  explicit CsvOutput(const std::string& path, const std::string& option = "--csv");
  bool is_open() const { return file_.is_open(); }
  void append(const ResultRow& row);  // throws std::runtime_error on a write error

 private:
  OutputFile file_;
  bool header_pending_ = false;
};

// --save-c: C of a rows x cols result, written once at the end. A stream gets the .npy
// header when opened (so /dev/full fails before the run), a regular file is replaced only
// when the result is written.
class NpyOutput {
 public:
  NpyOutput() = default;
  NpyOutput(const std::string& path, int rows, int cols, const std::string& option = "--save-c");
  bool is_open() const { return file_.is_open(); }
  // `data` holds rows x cols floats with row stride ld; throws std::runtime_error on a write error.
  void write(const float* data, int rows, int cols, int ld);

 private:
  OutputFile file_;
  int rows_ = 0, cols_ = 0;
};

// The matrices of --load-a, --load-b and --load-c (C empty without --load-c), read and
// judged: every header is read and the shapes checked against each other and the harness's
// limits before any data is read; then the data, which must be finite. Throws UsageError
// "--load-a a.npy: <what is wrong>", or naming an output that is one of the inputs
// (check_distinct_files), before reading any data.
//
// Reading gigabytes is the one cost of judging inputs before the GPU: a valid 20000 x 20000
// pair (3.2 GB) would be read whole before a machine without a GPU is found out. So when the
// regular files' data comes to more than kLargeInputBytes, `before_large_read` (if given) is
// called once, after every header and shape has been judged and before any data is read: the
// harness looks for the GPU there (no GPU: exit 3, the data never read). Smaller inputs are
// read first, so that a bad file is refused (exit 2) on any machine, without CUDA.
struct LoadedMatrices {
  Shape shape{};
  std::vector<float> A, B, C;
};
inline constexpr std::uint64_t kLargeInputBytes = std::uint64_t(256) << 20;  // an 8192 x 8192 float32 matrix
LoadedMatrices load_matrices(const Options& o, const std::function<void()>& before_large_read = {});

// The outputs of a run, opened before the GPU is touched, after check_distinct_files. `last`
// is the shape whose C --save-c writes.
struct Outputs {
  CsvOutput csv;
  NpyOutput save_c;
};
Outputs open_outputs(const Options& o, const Shape& last);

}  // namespace sgemm
