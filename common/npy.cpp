#include "npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "cli.hpp"
#include "io.hpp"

namespace sgemm {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(printable(path, 200) + ": " + what);
}

// Reads up to `count` bytes (fewer only at the end of the file); throws on a read error.
std::size_t read_fully(int fd, char* dst, std::size_t count, const std::string& path) {
  std::size_t done = 0;
  while (done < count) {
    const ssize_t got = ::read(fd, dst + done, count - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(path, std::string("read failed: ") + std::strerror(errno));
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

// One dimension of 'shape' as written in the header.
struct Dim {
  std::string text;             // as written, for messages
  bool negative = false;
  std::uint64_t value = 0;      // saturates at kHuge
};
constexpr std::uint64_t kHuge = std::uint64_t(1) << 62;

// The header is a Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False,
// 'shape': (3, 4), }. This cursor reads exactly that grammar, one token at a time: strings,
// True/False, integers and one flat tuple of integers. Anything else is an error, so
// nesting never recurses.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : t_(text), path_(path) {}

  void parse() {
    blanks();
    if (!eat('{')) fail(path_, "header is not a Python dict: it starts with " + token() + ", not '{'");
    for (;;) {
      blanks();
      if (eat('}')) break;
      if (at_end()) unclosed();
      const std::string key = string_literal("a quoted key");
      blanks();
      if (!eat(':')) fail(path_, "header: expected ':' after '" + printable(key) + "', found " + token());
      blanks();
      if (key == "descr") {
        once(have_descr_, key);
        if (peek() == '[' || peek() == '(' || peek() == '{')
          fail(path_, "'descr' is a structured dtype; only plain float32 ('<f4') is read");
        descr_ = string_literal("a dtype string such as '<f4' for 'descr'");
      } else if (key == "fortran_order") {
        once(have_fortran_, key);
        const std::string word = identifier();
        if (word != "True" && word != "False")
          fail(path_, "'fortran_order' must be True or False, found " + (word.empty() ? token() : "'" + printable(word) + "'"));
        fortran_ = word == "True";
      } else if (key == "shape") {
        once(have_shape_, key);
        tuple_of_ints();
      } else {
        fail(path_, "header has the key '" + printable(key) +
                        "'; a .npy header holds exactly 'descr', 'fortran_order' and 'shape'");
      }
      blanks();
      if (eat(',')) continue;
      if (eat('}')) break;
      if (at_end()) unclosed();
      fail(path_, "header: expected ',' or '}' after the value of '" + key + "', found " + token());
    }
    blanks();
    if (!at_end()) fail(path_, "header has text after its closing '}': " + token());
    if (!have_descr_) fail(path_, "header has no 'descr' (the dtype)");
    if (!have_fortran_) fail(path_, "header has no 'fortran_order'");
    if (!have_shape_) fail(path_, "header has no 'shape'");
  }

  const std::string& descr() const { return descr_; }
  bool fortran() const { return fortran_; }
  const std::vector<Dim>& dims() const { return dims_; }
  std::size_t rank() const { return rank_; }

  // The shape as written, e.g. "(3, 4)", shortened when it is long.
  std::string shape_text() const {
    std::string s = "(";
    for (std::size_t i = 0; i < dims_.size(); ++i) s += (i ? ", " : "") + printable(dims_[i].text, 24);
    if (rank_ > dims_.size()) s += ", ...";
    if (rank_ == 1) s += ",";
    return s + ")";
  }

 private:
  bool at_end() const { return pos_ >= t_.size(); }
  char peek() const { return at_end() ? '\0' : t_[pos_]; }
  bool eat(char c) {
    if (peek() != c || at_end()) return false;
    ++pos_;
    return true;
  }
  // Python's blanks between tokens: space, tab, form feed and line ends (not vertical tab).
  void blanks() {
    while (!at_end() && std::strchr(" \t\f\n\r", t_[pos_]) != nullptr && t_[pos_] != '\0') ++pos_;
  }
  // What stands at the cursor, for messages.
  std::string token() const {
    if (at_end()) return "the end of the header";
    std::size_t end = pos_ + 1;
    while (end < t_.size() && end - pos_ < 16 && std::strchr(" \t\r\n,:{}()[]", t_[end]) == nullptr) ++end;
    std::string quoted = "'";
    return quoted.append(printable(std::string_view(t_).substr(pos_, end - pos_), 16)).append("'");
  }
  [[noreturn]] void unclosed() const { fail(path_, "header ends before the dict's closing '}'"); }
  void once(bool& seen, const std::string& key) const {
    if (seen) fail(path_, "header gives '" + key + "' twice");
    seen = true;
  }
  std::string string_literal(const char* what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(path_, std::string("header: expected ") + what + ", found " + token());
    const std::size_t close = t_.find(quote, pos_ + 1);
    if (close == std::string::npos) fail(path_, "header has a string that is never closed");
    std::string s = t_.substr(pos_ + 1, close - pos_ - 1);
    if (s.find('\\') != std::string::npos) fail(path_, "header has a string with a backslash: '" + printable(s) + "'");
    pos_ = close + 1;
    return s;
  }
  std::string identifier() {
    const std::size_t start = pos_;
    while (!at_end() && std::isalnum(static_cast<unsigned char>(t_[pos_]))) ++pos_;
    return t_.substr(start, pos_ - start);
  }
  void tuple_of_ints() {
    if (!eat('(')) fail(path_, "'shape' must be a tuple of integers such as (3, 4), found " + token());
    for (;;) {
      blanks();
      if (eat(')')) return;
      Dim d;
      const std::size_t start = pos_;
      if (peek() == '-' || peek() == '+') {
        d.negative = t_[pos_++] == '-';
        blanks();  // Python reads "- 2" as -2
      }
      if (!std::isdigit(static_cast<unsigned char>(peek()))) {
        pos_ = start;
        fail(path_, "'shape' must be a tuple of integers such as (3, 4), found " + token());
      }
      const std::size_t digits = pos_;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        const std::uint64_t digit = std::uint64_t(t_[pos_] - '0');
        d.value = d.value > (kHuge - digit) / 10 ? kHuge : d.value * 10 + digit;  // never wraps
        ++pos_;
      }
      d.text = t_.substr(start, pos_ - start);
      // Python (so np.load) reads no decimal integer with a leading zero but 0, 00, ...
      if (t_[digits] == '0' && d.value != 0)
        fail(path_, "'shape' has the integer " + printable(d.text, 24) +
                        " with a leading zero, which np.load does not read; write it without the zero");
      if (++rank_ <= 4) dims_.push_back(std::move(d));
      blanks();
      if (eat(',')) continue;
      if (eat(')')) return;
      fail(path_, "'shape' must be a tuple of integers such as (3, 4), found " + token() + " after " +
                      printable(t_.substr(start, pos_ - start), 24));
    }
  }

  const std::string& t_;
  const std::string& path_;
  std::size_t pos_ = 0;
  bool have_descr_ = false, have_fortran_ = false, have_shape_ = false;
  std::string descr_;
  bool fortran_ = false;
  std::vector<Dim> dims_;  // the first four, for messages
  std::size_t rank_ = 0;
};

// The spellings of 'descr' that np.load reads as little-endian float32 on a little-endian
// machine (numpy 1.24 and 2.1 agree): '<', '=' (native), '|' (no order) or no prefix, then
// 'f4' or 'f'; and the names 'float32' and 'single'.
bool is_float32(const std::string& descr) {
  static_assert(std::endian::native == std::endian::little, "the data is read as this machine's floats");
  if (descr == "float32" || descr == "single") return true;
  std::string_view code = descr;
  if (!code.empty() && (code[0] == '<' || code[0] == '=' || code[0] == '|')) code.remove_prefix(1);
  return code == "f4" || code == "f";
}

std::string dtype_hint(const std::string& descr) {
  if (descr == ">f4") return " (big-endian float32; convert with a.astype('<f4'))";
  if (descr == "<f8" || descr == ">f8") return " (float64; convert with a.astype(np.float32))";
  if (descr == "<f2" || descr == ">f2") return " (float16; convert with a.astype(np.float32))";
  return " (convert with a.astype(np.float32))";
}

}  // namespace

NpyFile::NpyFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: opening a FIFO never waits for a writer (it is refused below).
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail(path, std::string("cannot stat: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail(path, "is a directory, not a .npy file");
  if ((S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) && !is_std_stream(st, {0}))  // io.hpp: the rule
    fail(path, "is a pipe (FIFO), which can block; name a regular file, or pipe the data in as /dev/stdin");
  if (S_ISBLK(st.st_mode)) fail(path, "is a block device, not a .npy file");
  if (::isatty(fd_)) fail(path, "is a terminal, not a .npy file");
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK) != 0)  // reads of a pipe wait for data again
    fail(path, std::string("cannot read: ") + std::strerror(errno));
  regular_ = S_ISREG(st.st_mode);
  const std::uint64_t file_size = regular_ ? std::uint64_t(st.st_size) : 0;

  char lead[12];  // magic (6), version (2), header length (2 or 4)
  const std::size_t got = read_fully(fd_, lead, 8, path);
  if (got == 0) fail(path, "is empty, not a .npy file");
  if (got >= 2 && lead[0] == 'P' && lead[1] == 'K')
    fail(path, "is a zip archive (an .npz?), not a .npy file; save one array with np.save");
  if (got < 6 || std::memcmp(lead, "\x93NUMPY", 6) != 0) fail(path, "not a .npy file (no \\x93NUMPY magic)");
  if (got < 8) fail(path, "ends inside its version number");
  const int major = static_cast<unsigned char>(lead[6]), minor = static_cast<unsigned char>(lead[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    fail(path, "has .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   "; this reader knows 1.0, 2.0 and 3.0");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (read_fully(fd_, lead + 8, len_bytes, path) != len_bytes) fail(path, "ends inside its header length");
  std::uint64_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i) header_len |= std::uint64_t(static_cast<unsigned char>(lead[8 + i])) << (8 * i);
  if (header_len > kMaxNpyHeaderBytes)
    fail(path, "header length " + std::to_string(header_len) + " is more than the " +
                   std::to_string(kMaxNpyHeaderBytes) + " bytes this reader (like numpy's np.load) accepts");
  const std::uint64_t data_offset = 8 + len_bytes + header_len;
  if (regular_ && file_size < data_offset)
    fail(path, "ends inside its header (the header is " + std::to_string(header_len) + " bytes, the file " +
                   std::to_string(file_size) + ")");
  std::string header(header_len, '\0');
  if (read_fully(fd_, header.data(), header_len, path) != header_len) fail(path, "ends inside its header");

  HeaderParser h(header, path);
  h.parse();
  if (!is_float32(h.descr()))
    fail(path, "dtype must be little-endian float32 ('<f4'), found '" + printable(h.descr(), 24) + "'" +
                   dtype_hint(h.descr()));
  if (h.fortran()) fail(path, "is in Fortran order; save it with np.ascontiguousarray(a)");
  const std::string shape = "shape " + h.shape_text();
  if (h.rank() != 2)
    fail(path, shape + " has " + std::to_string(h.rank()) + " dimension" + (h.rank() == 1 ? "" : "s") +
                   "; a matrix has 2 (rows, cols)");
  for (const Dim& d : h.dims()) {
    if (d.negative && d.value != 0) fail(path, shape + " has a negative dimension");
    if (d.value == 0) fail(path, shape + " is empty; rows and cols must be at least 1");
  }
  const std::uint64_t rows = h.dims()[0].value, cols = h.dims()[1].value;
  constexpr std::uint64_t kMax = std::numeric_limits<int>::max();
  if (rows > kMax || cols > kMax || rows * cols > kMax)  // each < 2^31, so the product cannot wrap
    fail(path, shape + " is too large: a matrix must have fewer than 2^31 elements");
  rows_ = static_cast<int>(rows);
  cols_ = static_cast<int>(cols);
  data_bytes_in_file_ = regular_ ? file_size - data_offset : 0;
  if (regular_) {  // judged before anything is allocated for the data
    const std::uint64_t need = rows * cols * sizeof(float);
    if (data_bytes_in_file_ != need)
      fail(path, "holds " + std::to_string(data_bytes_in_file_) + " bytes of data, but " + shape + " of float32 needs " +
                     std::to_string(need) + (data_bytes_in_file_ < need ? " (the file is cut short)" : " (the shape or dtype is wrong)"));
  }
}

NpyFile::~NpyFile() {
  if (fd_ >= 0) ::close(fd_);
}

Matrix NpyFile::read() {
  Matrix out;
  out.rows = rows_;
  out.cols = cols_;
  const std::size_t count = std::size_t(rows_) * std::size_t(cols_);
  std::string shape = "(";
  shape.append(std::to_string(rows_)).append(", ").append(std::to_string(cols_)).append(")");
  if (regular_) {  // the size was checked against the shape when the header was read
    out.data.resize(count);
    if (read_fully(fd_, reinterpret_cast<char*>(out.data.data()), count * sizeof(float), path_) != count * sizeof(float))
      fail(path_, "is shorter than its shape " + shape + " (did it change while being read?)");
  } else {  // a pipe: memory grows with the data that actually arrives, never with the claim
    constexpr std::size_t kChunk = std::size_t(1) << 18;  // floats
    while (out.data.size() < count) {
      const std::size_t have = out.data.size(), want = std::min(kChunk, count - have);
      out.data.resize(have + want);
      const std::size_t got = read_fully(fd_, reinterpret_cast<char*>(out.data.data() + have), want * sizeof(float), path_);
      if (got != want * sizeof(float))
        fail(path_, "ends after " + std::to_string(have * sizeof(float) + got) + " bytes of data, but shape " + shape +
                        " of float32 needs " + std::to_string(count * sizeof(float)));
    }
  }
  char extra;
  if (read_fully(fd_, &extra, 1, path_) != 0)
    fail(path_, "has more data than its shape " + shape + " of float32 needs (the shape or dtype is wrong)");
  return out;
}

Matrix read_npy(const std::string& path) { return NpyFile(path).read(); }

void require_finite(const Matrix& m, const std::string& path) {
  std::size_t first = m.data.size(), bad = 0;
  for (std::size_t i = 0; i < m.data.size(); ++i)
    if (!std::isfinite(m.data[i])) {
      if (bad++ == 0) first = i;
    }
  if (bad == 0) return;
  const float v = m.data[first];
  const std::size_t r = first / std::size_t(m.cols), c = first % std::size_t(m.cols);
  fail(path, "element [" + std::to_string(r) + ", " + std::to_string(c) + "] (row, column from 0) is " +
                 (std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf") + ", and inputs must be finite (" +
                 std::to_string(bad) + " non-finite value" + (bad == 1 ? "" : "s") + " in all)");
}

std::string npy_header(int rows, int cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n' is padded to a multiple of 64.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  const std::uint16_t len = static_cast<std::uint16_t>(header.size());
  const char lead[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', '\x01', '\x00', static_cast<char>(len & 0xff),
                         static_cast<char>(len >> 8)};
  return std::string(lead, 10) + header;
}

void write_npy_data(OutputFile& out, const float* data, int rows, int cols, int ld) {
  std::string chunk;
  const std::size_t row_bytes = std::size_t(cols) * sizeof(float);
  for (int r = 0; r < rows; ++r) {
    chunk.append(reinterpret_cast<const char*>(data + std::size_t(r) * ld), row_bytes);
    if (chunk.size() >= (std::size_t(1) << 20) || r + 1 == rows) {
      out.write(chunk);
      chunk.clear();
    }
  }
}

void write_npy(const std::string& path, const float* data, int rows, int cols, int ld) {
  OutputFile out("", path, OutputFile::Mode::Replace);
  out.truncate();
  out.write(npy_header(rows, cols));
  write_npy_data(out, data, rows, cols, ld);
  out.close();
}

}  // namespace sgemm
