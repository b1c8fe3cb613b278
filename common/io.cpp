#include "io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>

#include "npy.hpp"

namespace sgemm {

namespace {

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// Where a path leads: the file, if it exists (device and inode, however the path is spelled:
// symlinks, "..", "./"); else the file it would create, named by its directory's canonical
// path. `known` is false when neither can be told (the directory is missing: opening the
// path fails with its own message).
struct Identity {
  bool exists = false, known = false;
  struct stat st {};
  std::string would_create;
};

Identity identify(const std::string& path) {
  Identity id;
  if (::stat(path.c_str(), &id.st) == 0) {
    id.exists = id.known = true;
    return id;
  }
  const std::size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::unique_ptr<char, decltype(&std::free)> real(::realpath(dir.c_str(), nullptr), &std::free);
  if (!real) return id;
  id.known = true;
  id.would_create = std::string(real.get()) + "/" + path.substr(slash == std::string::npos ? 0 : slash + 1);
  return id;
}

bool same_identity(const Identity& a, const Identity& b) {
  if (!a.known || !b.known || a.exists != b.exists) return false;
  return a.exists ? same_file(a.st, b.st) : a.would_create == b.would_create;
}

// Sets a descriptor opened with O_NONBLOCK (so that opening a FIFO could not wait) back to
// blocking reads and writes.
bool make_blocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0;
}

}  // namespace

bool is_std_stream(const struct stat& st, std::initializer_list<int> std_fds) {
  for (const int std_fd : std_fds) {
    struct stat s {};
    if (::fstat(std_fd, &s) == 0 && same_file(s, st)) return true;
  }
  return false;
}

void check_distinct_files(const Options& o) {
  struct Named {
    const char* option;
    const std::string* path;
  };
  const Named inputs[] = {{"--load-a", &o.load_a}, {"--load-b", &o.load_b}, {"--load-c", &o.load_c}};
  const Named outputs[] = {{"--csv", &o.csv_path}, {"--save-c", &o.save_c}};
  auto say = [](const Named& f) { return std::string(f.option) + " " + printable(*f.path, 100); };
  for (std::size_t i = 0; i < 2; ++i) {
    const Named& out = outputs[i];
    if (out.path->empty()) continue;
    const Identity id = identify(*out.path);
    for (const Named& in : inputs)
      if (!in.path->empty() && same_identity(id, identify(*in.path)))
        throw UsageError(say(out) + " is the same file as " + say(in) + "; an output must not overwrite an input");
    if (i == 0 && !outputs[1].path->empty() && same_identity(id, identify(*outputs[1].path)))
      throw UsageError(say(out) + " and " + say(outputs[1]) + " are the same file; name two files");
  }
}

OutputFile::OutputFile(std::string option, std::string path, Mode mode)
    : option_(std::move(option)), path_(std::move(path)) {
  // O_NONBLOCK: opening a FIFO that nobody reads fails at once (ENXIO) instead of waiting.
  const int flags = O_WRONLY | O_CLOEXEC | O_NONBLOCK | (mode == Mode::Append ? O_APPEND : 0);
  fd_ = ::open(path_.c_str(), flags);
  if (fd_ < 0 && errno == ENOENT) {
    fd_ = ::open(path_.c_str(), flags | O_CREAT | O_EXCL, 0666);
    created_ = fd_ >= 0;
  }
  const int open_error = errno;
  struct stat st {};
  // Not opened: a FIFO nobody reads gets the message below, anything else open's error.
  if (fd_ >= 0 ? ::fstat(fd_, &st) != 0 : (::stat(path_.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode))) {
    const int err = fd_ >= 0 ? errno : open_error;
    release();
    throw UsageError(where() + ": cannot open for writing: " + std::strerror(err));
  }
  // A regular file or a character device (/dev/null, a terminal); a pipe only as this
  // process's own stdout or stderr (/dev/stdout in a pipeline), which is open already.
  if ((S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) && !is_std_stream(st, {1, 2})) {
    release();
    throw UsageError(where() + ": is a pipe (FIFO), which can block; name a regular file, or /dev/stdout for "
                               "this program's own output");
  }
  if (S_ISBLK(st.st_mode)) {
    release();
    throw UsageError(where() + ": is a block device; name a regular file");
  }
  if (fd_ < 0) throw UsageError(where() + ": cannot open for writing: " + std::strerror(open_error));
  if (!make_blocking(fd_)) {  // writes to a pipe wait for room again
    const int err = errno;
    release();
    throw UsageError(where() + ": cannot open for writing: " + std::strerror(err));
  }
  regular_ = S_ISREG(st.st_mode) && !is_std_stream(st, {1, 2});
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

LoadedMatrices load_matrices(const Options& o, const std::function<void()>& before_large_read) {
  check_distinct_files(o);  // before any data is read
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
  const std::string pa = printable(o.load_a, 100), pb = printable(o.load_b, 100);  // two in a message
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
  std::uint64_t large = 0;  // bytes of the regular files' data, all checked against their shapes
  for (const NpyFile* f : {a.get(), b.get(), c.get()})
    if (f && f->is_regular()) large += std::uint64_t(f->rows()) * std::uint64_t(f->cols()) * sizeof(float);
  if (large > kLargeInputBytes && before_large_read) before_large_read();
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
  check_distinct_files(o);  // before anything is created or written
  Outputs out;
  if (!o.csv_path.empty()) out.csv = CsvOutput(o.csv_path);
  if (!o.save_c.empty()) out.save_c = NpyOutput(o.save_c, last.m, last.n);
  return out;
}

}  // namespace sgemm
