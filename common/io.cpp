#include "io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>

#include "npy.hpp"

namespace sgemm {

namespace {

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// Is `fd` this process's stdout or stderr (e.g. opened as /dev/stdout)? That is a stream
// even when the shell redirected it to a regular file.
bool is_std_stream(const struct stat& st) {
  for (const int std_fd : {1, 2}) {
    struct stat s {};
    if (::fstat(std_fd, &s) == 0 && same_file(s, st)) return true;
  }
  return false;
}

}  // namespace

OutputFile::OutputFile(std::string option, std::string path, Mode mode)
    : option_(std::move(option)), path_(std::move(path)) {
  const int flags = O_WRONLY | O_CLOEXEC | (mode == Mode::Append ? O_APPEND : 0);
  fd_ = ::open(path_.c_str(), flags);
  if (fd_ < 0 && errno == ENOENT) {
    fd_ = ::open(path_.c_str(), flags | O_CREAT | O_EXCL, 0666);
    created_ = fd_ >= 0;
  }
  if (fd_ < 0) throw UsageError(where() + ": cannot open for writing: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    release();
    throw UsageError(where() + ": cannot stat: " + std::strerror(err));
  }
  regular_ = S_ISREG(st.st_mode) && !is_std_stream(st);
  size_at_open_ = regular_ ? std::uint64_t(st.st_size) : 0;
}

OutputFile::~OutputFile() { release(); }

OutputFile::OutputFile(OutputFile&& other) noexcept { *this = std::move(other); }

OutputFile& OutputFile::operator=(OutputFile&& other) noexcept {
  if (this != &other) {
    release();
    option_ = std::move(other.option_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    regular_ = other.regular_;
    created_ = other.created_;
    written_ = other.written_;
    size_at_open_ = other.size_at_open_;
  }
  return *this;
}

void OutputFile::release() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  if (created_ && !written_) ::unlink(path_.c_str());
}

std::string OutputFile::where() const {
  return (option_.empty() ? "" : option_ + " ") + printable(path_, 200);
}

void OutputFile::write(std::string_view bytes) {
  if (!regular_) std::fflush(stdout);
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(where() + ": write failed: " + std::strerror(n < 0 ? errno : EIO));
    written_ = true;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void OutputFile::truncate() {
  if (!regular_) return;
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0)
    throw std::runtime_error(where() + ": cannot truncate: " + std::strerror(errno));
}

std::string OutputFile::read_at(std::uint64_t offset, std::size_t max) const {
  // The descriptor is write-only; read through a second one.
  const int rfd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (rfd < 0) throw UsageError(where() + ": cannot read it back: " + std::strerror(errno));
  std::string out(max, '\0');
  std::size_t done = 0;
  while (done < max) {
    const ssize_t n = ::pread(rfd, out.data() + done, max - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(rfd);
  out.resize(done);
  return out;
}

void OutputFile::close() {
  if (fd_ < 0) return;
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) throw std::runtime_error(where() + ": write failed when closing: " + std::strerror(errno));
}

CsvOutput::CsvOutput(const std::string& path, const std::string& option)
    : file_(option, path, OutputFile::Mode::Append) {
  if (!file_.is_regular()) {  // a stream: never read back; the header goes out now
    try {
      file_.write(csv_header() + "\n");
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
    return;
  }
  const std::uint64_t size = file_.size_at_open();
  if (size == 0) {
    header_pending_ = true;
    return;
  }
  const std::string header = csv_header();
  const std::string start = file_.read_at(0, header.size() + 1);
  if (start != header + "\n")
    throw UsageError(file_.where() + ": its first line is not this harness's CSV header (another format or " +
                     "not a results file); move it away or name a new file");
  if (file_.read_at(size - 1, 1) != "\n")
    throw UsageError(file_.where() + ": its last line is cut off (no newline at the end); repair or move the file");
}

void CsvOutput::append(const ResultRow& row) {
  std::string text = header_pending_ ? csv_header() + "\n" : std::string();
  text += to_csv(row) + "\n";
  file_.write(text);
  header_pending_ = false;
}

NpyOutput::NpyOutput(const std::string& path, int rows, int cols, const std::string& option)
    : file_(option, path, OutputFile::Mode::Replace), rows_(rows), cols_(cols) {
  if (file_.is_regular()) return;
  try {  // a stream cannot be probed without writing: the header goes out now
    file_.write(npy_header(rows, cols));
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

void NpyOutput::write(const float* data, int rows, int cols, int ld) {
  if (rows != rows_ || cols != cols_)
    throw std::logic_error(file_.where() + ": opened for " + std::to_string(rows_) + " x " + std::to_string(cols_) +
                           ", written with " + std::to_string(rows) + " x " + std::to_string(cols));
  if (file_.is_regular()) {
    file_.truncate();
    file_.write(npy_header(rows, cols));
  }
  write_npy_data(file_, data, rows, cols, ld);
  file_.close();
}

LoadedMatrices load_matrices(const Options& o) {
  auto open = [](const char* option, const std::string& path) {
    try {
      return std::make_unique<NpyFile>(path);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string(option) + " " + e.what());
    }
  };
  auto size = [](const NpyFile& f) { return std::to_string(f.rows()) + " x " + std::to_string(f.cols()); };
  const auto a = open("--load-a", o.load_a);
  const auto b = open("--load-b", o.load_b);
  const auto c = o.load_c.empty() ? nullptr : open("--load-c", o.load_c);
  const std::string pa = printable(o.load_a, 200), pb = printable(o.load_b, 200);
  if (a->cols() != b->rows())
    throw UsageError("--load-a " + pa + " is " + size(*a) + " but --load-b " + pb + " is " + size(*b) +
                     ": A's columns (K) and B's rows must match");
  LoadedMatrices in;
  in.shape = {a->rows(), b->cols(), a->cols()};
  try {
    check_dims(in.shape);
    check_indexable(in.shape, o.pad_a, o.pad_b, o.pad_c);
  } catch (const UsageError& e) {
    throw UsageError("--load-a " + pa + " and --load-b " + pb + ": " + e.what());
  }
  if (c && (c->rows() != in.shape.m || c->cols() != in.shape.n))
    throw UsageError("--load-c " + printable(o.load_c, 200) + " is " + size(*c) + " but A * B is " +
                     std::to_string(in.shape.m) + " x " + std::to_string(in.shape.n));
  auto read = [](const char* option, NpyFile& f) {
    try {
      Matrix m = f.read();
      require_finite(m, f.path());
      return std::move(m.data);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string(option) + " " + e.what());
    }
  };
  in.A = read("--load-a", *a);
  in.B = read("--load-b", *b);
  if (c) in.C = read("--load-c", *c);
  return in;
}

Outputs open_outputs(const Options& o, const Shape& last) {
  Outputs out;
  if (!o.csv_path.empty()) {
    // A CSV appended to an input file would corrupt it.
    struct stat csv {};
    const std::pair<const char*, const std::string*> others[] = {
        {"--load-a", &o.load_a}, {"--load-b", &o.load_b}, {"--load-c", &o.load_c}, {"--save-c", &o.save_c}};
    if (::stat(o.csv_path.c_str(), &csv) == 0 && S_ISREG(csv.st_mode))
      for (const auto& [option, path] : others) {
        struct stat other {};
        if (!path->empty() && ::stat(path->c_str(), &other) == 0 && same_file(csv, other))
          throw UsageError("--csv " + printable(o.csv_path, 200) + " is the same file as " + option + " " +
                           printable(*path, 200));
      }
    out.csv = CsvOutput(o.csv_path);
  }
  if (!o.save_c.empty()) out.save_c = NpyOutput(o.save_c, last.m, last.n);
  return out;
}

}  // namespace sgemm
