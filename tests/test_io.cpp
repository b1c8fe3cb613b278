// The harness's files: inputs judged and outputs opened before any GPU work (io.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "io.hpp"
#include "npy.hpp"

using namespace sgemm;

namespace {
std::string tmp(const std::string& name) { return std::string(SGEMM_TEST_TMP) + "/io_" + name; }
bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
template <class F>
std::string usage_error_of(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}
void save(const std::string& path, std::vector<float> v, int rows, int cols) {
  write_npy(path, v.data(), rows, cols, cols);
}
ResultRow row() {
  ResultRow r;
  r.step = "01_initial";
  r.m = r.n = r.k = 4;
  return r;
}
}  // namespace

TEST_CASE("an output file that is never written is removed again; an existing one is kept") {
  const std::string fresh = tmp("fresh.csv");
  ::unlink(fresh.c_str());
  { const CsvOutput csv(fresh); CHECK(exists(fresh)); }  // probed: created
  CHECK_FALSE(exists(fresh));                           // nothing written: gone again
  std::ofstream(tmp("kept.npy")) << "old";
  { NpyOutput out(tmp("kept.npy"), 2, 2); }
  CHECK(slurp(tmp("kept.npy")) == "old");  // not truncated by opening
}

TEST_CASE("output paths that cannot be written are usage errors when opened") {
  CHECK(contains(usage_error_of([] { CsvOutput c("/dev/full"); }), "--csv /dev/full: write failed: No space left on device"));
  CHECK(contains(usage_error_of([] { NpyOutput n("/dev/full", 2, 2); }), "--save-c /dev/full: write failed"));
  CHECK(contains(usage_error_of([] { CsvOutput c(SGEMM_TEST_TMP); }), "cannot open for writing: Is a directory"));
  CHECK(contains(usage_error_of([] { CsvOutput c(tmp("no/such/dir.csv")); }), "No such file or directory"));
  if (::geteuid() != 0) {  // root writes anywhere
    std::ofstream(tmp("readonly.csv")) << "";
    ::chmod(tmp("readonly.csv").c_str(), 0444);
    CHECK(contains(usage_error_of([] { CsvOutput c(tmp("readonly.csv")); }), "Permission denied"));
  }
}

TEST_CASE("csv: the header is judged before the run, and appended rows are whole lines") {
  const std::string path = tmp("rows.csv");
  ::unlink(path.c_str());
  CsvOutput(path).append(row());
  CsvOutput(path).append(row());
  const std::string text = slurp(path);
  CHECK(text.rfind(csv_header() + "\n", 0) == 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);
  std::ofstream(tmp("foreign.csv")) << "a,b,c\n1,2,3\n";
  CHECK(contains(usage_error_of([] { CsvOutput c(tmp("foreign.csv")); }), "not this harness's CSV header"));
  std::ofstream(tmp("cut.csv")) << csv_header() << "\n01_initial,,4";
  CHECK(contains(usage_error_of([] { CsvOutput c(tmp("cut.csv")); }), "last line is cut off"));
  // A stream gets its header at once, so /dev/null (any stream) is written, never read.
  CHECK_NOTHROW(CsvOutput("/dev/null").append(row()));
}

TEST_CASE("npy output (--save-c) replaces a regular file only when the result is written") {
  const std::string path = tmp("save_c.npy");  // its own name: CTest runs test cases in parallel
  std::ofstream(path) << "previous contents, longer than the new file will be ........................................"
                         "..............................................................................";
  NpyOutput out(path, 1, 2);
  const float c[2] = {1.5f, -2.0f};
  out.write(c, 1, 2, 2);
  const Matrix m = read_npy(path);
  CHECK(m.rows == 1);
  CHECK(m.data[1] == -2.0f);
}

TEST_CASE("load_matrices: shapes first, then data, every problem named with its option") {
  save(tmp("a.npy"), {1, 2, 3, 4, 5, 6}, 2, 3);
  save(tmp("b.npy"), {1, 2, 3, 4, 5, 6}, 3, 2);
  save(tmp("b_bad.npy"), {1, 2, 3, 4}, 2, 2);
  save(tmp("c.npy"), {1, 2, 3, 4}, 2, 2);
  save(tmp("c_nan.npy"), {1, 2, std::numeric_limits<float>::quiet_NaN(), 4}, 2, 2);
  Options o;
  o.load_a = tmp("a.npy");
  o.load_b = tmp("b.npy");
  const LoadedMatrices in = load_matrices(o);
  CHECK(in.shape == Shape{2, 2, 3});
  CHECK(in.C.empty());
  o.load_c = tmp("c.npy");
  CHECK(load_matrices(o).C.size() == 4);
  o.load_c = tmp("c_nan.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "--load-c " + tmp("c_nan.npy") + ": element [1, 0]"));
  o.load_c = tmp("a.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "is 2 x 3 but A * B is 2 x 2"));
  o.load_c.clear();
  o.load_b = tmp("b_bad.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "A's columns (K) and B's rows must match"));
  o.load_b = tmp("missing.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "--load-b " + tmp("missing.npy") + ": cannot open: No such file"));
}

TEST_CASE("load_matrices: loaded sizes obey the harness's limits") {
  // 46341 x 1 times 1 x 46341: small files, but C (46341 x 46345) is past 2^31 elements.
  save(tmp("col.npy"), std::vector<float>(46341, 1.0f), 46341, 1);
  save(tmp("row.npy"), std::vector<float>(46341, 1.0f), 1, 46341);
  Options o;
  o.load_a = tmp("col.npy");
  o.load_b = tmp("row.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "C is stored as 46341 x 46345"));
  save(tmp("tall.npy"), std::vector<float>(1000001, 1.0f), 1000001, 1);
  o.load_a = tmp("tall.npy");
  o.load_b = tmp("one.npy");
  save(tmp("one.npy"), {2.0f}, 1, 1);
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "M = 1000001 is more than 1000000"));
}

TEST_CASE("a pipe (FIFO) is refused at once as an input or an output, never waited on") {
  const std::string fifo = tmp("refused.fifo");
  ::unlink(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Nobody at the other end: open() would wait for ever without O_NONBLOCK.
  std::string e;
  try {
    read_npy(fifo);
  } catch (const std::runtime_error& x) {
    e = x.what();
  }
  CHECK(contains(e, fifo + ": is a pipe (FIFO), which can block"));
  CHECK(contains(usage_error_of([&] { CsvOutput c(fifo); }), "--csv " + fifo + ": is a pipe (FIFO), which can block"));
  CHECK(contains(usage_error_of([&] { NpyOutput n(fifo, 2, 2); }), "--save-c " + fifo + ": is a pipe (FIFO)"));
  // Someone reading it: still refused (the open succeeds, the file's type is judged).
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  CHECK(contains(usage_error_of([&] { CsvOutput c(fifo); }), "is a pipe (FIFO)"));
  ::close(reader);
  CHECK(exists(fifo));  // refused, not removed: it was there before
  // Character devices are fine.
  CHECK_NOTHROW(CsvOutput("/dev/null"));
  e.clear();
  try {
    read_npy("/dev/null");
  } catch (const std::runtime_error& x) {
    e = x.what();
  }
  CHECK(contains(e, "/dev/null: is empty"));
}

TEST_CASE("this process's own pipes are streams: /dev/stdin as an input, /dev/stdout as an output") {
  const std::string npy = npy_header(1, 2) + std::string("\0\0\x80?\0\0\0@", 8);  // 1.0f, 2.0f
  int in[2], out[2];
  REQUIRE(::pipe(in) == 0);
  REQUIRE(::pipe(out) == 0);
  REQUIRE(::write(in[1], npy.data(), npy.size()) == static_cast<ssize_t>(npy.size()));
  ::close(in[1]);
  std::fflush(stdout);  // what the test runner printed so far stays out of the pipe
  const int saved_in = ::dup(0), saved_out = ::dup(1);
  ::dup2(in[0], 0);
  ::dup2(out[1], 1);
  Matrix m;
  std::string stdin_error, stdout_error;
  try {
    m = read_npy("/dev/stdin");
  } catch (const std::runtime_error& x) {
    stdin_error = x.what();
  }
  try {
    CsvOutput csv("/dev/stdout");  // a stream: the header goes out at once
  } catch (const std::runtime_error& x) {
    stdout_error = x.what();
  }
  ::dup2(saved_in, 0);
  ::dup2(saved_out, 1);
  ::close(out[1]);
  std::string written(4096, '\0');
  written.resize(static_cast<std::size_t>(std::max<ssize_t>(0, ::read(out[0], written.data(), written.size()))));
  for (const int fd : {in[0], out[0], saved_in, saved_out}) ::close(fd);
  CHECK(stdin_error.empty());
  CHECK(m.cols == 2);
  CHECK(m.data == std::vector<float>{1.0f, 2.0f});
  CHECK(stdout_error.empty());
  CHECK(written == csv_header() + "\n");
}

TEST_CASE("an output is never an input or the other output, however the path is spelled") {
  const std::string dir = SGEMM_TEST_TMP;
  save(tmp("dist_a.npy"), {1, 2, 3, 4, 5, 6}, 2, 3);
  ::unlink(tmp("dist_link.npy").c_str());
  REQUIRE(::symlink(tmp("dist_a.npy").c_str(), tmp("dist_link.npy").c_str()) == 0);
  ::unlink(tmp("dist_hard.npy").c_str());
  REQUIRE(::link(tmp("dist_a.npy").c_str(), tmp("dist_hard.npy").c_str()) == 0);
  Options o;
  o.load_a = tmp("dist_a.npy");
  o.load_b = tmp("dist_b.npy");
  for (const std::string& same : {tmp("dist_a.npy"), dir + "/./io_dist_a.npy", dir + "/../" +
                                  dir.substr(dir.find_last_of('/') + 1) + "/io_dist_a.npy",
                                  tmp("dist_link.npy"), tmp("dist_hard.npy")}) {
    INFO(same);
    o.save_c = same;
    CHECK(contains(usage_error_of([&] { check_distinct_files(o); }),
                   "--save-c " + same + " is the same file as --load-a " + o.load_a));
    o.save_c.clear();
    o.csv_path = same;
    CHECK(contains(usage_error_of([&] { check_distinct_files(o); }), "--csv " + same + " is the same file as --load-a"));
    o.csv_path.clear();
  }
  // Files that do not exist yet: compared as the file each would create.
  ::unlink(tmp("dist_new.csv").c_str());
  o.csv_path = tmp("dist_new.csv");
  o.save_c = dir + "/./io_dist_new.csv";
  CHECK(contains(usage_error_of([&] { check_distinct_files(o); }),
                 "--csv " + o.csv_path + " and --save-c " + o.save_c + " are the same file"));
  o.load_c = dir + "/../" + dir.substr(dir.find_last_of('/') + 1) + "/io_dist_new.csv";
  o.save_c.clear();
  CHECK(contains(usage_error_of([&] { check_distinct_files(o); }), "--csv " + o.csv_path + " is the same file as --load-c"));
  o.load_c.clear();
  o.save_c = tmp("dist_new.npy");
  CHECK(usage_error_of([&] { check_distinct_files(o); }).empty());
  CHECK_FALSE(exists(tmp("dist_new.csv")));  // judging creates nothing
  // load_matrices judges the paths before it reads a byte.
  o.save_c = tmp("dist_link.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o); }), "is the same file as --load-a"));
}

TEST_CASE("load_matrices: large inputs wait for the caller's GPU check; small ones and bad headers do not") {
  // Sparse files: a valid 8192 x 8192 A (256 MiB of zeros that take no disk) and an 8192 x 2 B.
  auto sparse = [](const std::string& path, int rows, int cols) {
    std::ofstream(path, std::ios::binary) << npy_header(rows, cols);
    REQUIRE(::truncate(path.c_str(), off_t(npy_header(rows, cols).size()) + off_t(rows) * cols * 4) == 0);
  };
  sparse(tmp("large_a.npy"), 8192, 8192);
  sparse(tmp("large_b.npy"), 8192, 2);
  struct NoGpuHere {};
  int calls = 0;
  auto no_gpu = [&] {
    ++calls;
    throw NoGpuHere{};  // what the harness does where there is no GPU: stop before the data
  };
  Options o;
  o.load_a = tmp("large_a.npy");
  o.load_b = tmp("large_b.npy");
  CHECK_THROWS_AS(load_matrices(o, no_gpu), NoGpuHere);
  CHECK(calls == 1);
  // Under the limit: read, judged, no check asked for.
  save(tmp("small_a.npy"), {1, 2, 3, 4, 5, 6}, 2, 3);
  save(tmp("small_b.npy"), {1, 2, 3, 4, 5, 6}, 3, 2);
  o.load_a = tmp("small_a.npy");
  o.load_b = tmp("small_b.npy");
  CHECK(load_matrices(o, no_gpu).A.size() == 6);
  CHECK(calls == 1);
  // A large file that does not fit its partner is a usage error first: headers before the GPU.
  o.load_a = tmp("large_a.npy");
  CHECK(contains(usage_error_of([&] { load_matrices(o, no_gpu); }), "A's columns (K) and B's rows must match"));
  CHECK(calls == 1);
  // Without a check (the default), large inputs are simply read.
  o.load_b = tmp("large_b.npy");
  CHECK(load_matrices(o).shape == Shape{8192, 2, 8192});
  for (const char* f : {"large_a.npy", "large_b.npy"}) ::unlink(tmp(f).c_str());
}
