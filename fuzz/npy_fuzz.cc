// libFuzzer target: the .npy reader on arbitrary bytes.
//
// Properties checked on every input (a violation aborts):
// - npy::Read on the bytes as a file either succeeds with a consistent
//   array (count = product of the shape, count * elem_size bytes of data,
//   exactly the file's payload), or fails with a non-empty message and
//   leaves no data allocated;
// - npy::ParseHeader on the bytes as a header never crashes and, on
//   failure, names the problem;
// - a successfully read array written back with npy::Write and read again
//   gives the same descr, shape and bytes (the writer's header is valid).
// Unbounded allocation is caught by running with -rss_limit_mb and
// -malloc_limit_mb (mk/reliability.mk): the reader may allocate at most the
// header (<= 1 MiB) and the payload actually present in the file.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "io/npy.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "npy_fuzz: property violated: %s\n", what);
    std::abort();
  }
}

// A memfd named through /proc/self/fd, so Read goes through its real
// open/fstat/read path without touching the disk.
class MemFile {
 public:
  MemFile() : fd_(::memfd_create("npy_fuzz", MFD_CLOEXEC)) { Check(fd_ >= 0, "memfd_create"); }
  ~MemFile() { ::close(fd_); }
  std::string Put(const uint8_t* data, size_t size) {
    Check(::ftruncate(fd_, 0) == 0 && ::lseek(fd_, 0, SEEK_SET) == 0, "truncate memfd");
    size_t done = 0;
    while (done < size) {
      const ssize_t put = ::write(fd_, data + done, size - done);
      Check(put > 0, "write memfd");
      done += static_cast<size_t>(put);
    }
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

std::string TempDir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/npy_fuzz-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    Check(d != nullptr, "mkdtemp");
    return std::string(d);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using relugrad::npy::Array;
  static MemFile file;

  // 1. The header parser alone, on the raw bytes.
  {
    std::string descr, error;
    bool fortran = false;
    std::vector<int64_t> shape;
    const bool ok = relugrad::npy::ParseHeader(
        std::string(reinterpret_cast<const char*>(data), size), &descr, &fortran, &shape, &error);
    Check(ok || !error.empty(), "ParseHeader failed without a message");
    if (ok) Check(shape.size() <= 64, "ParseHeader accepted more than 64 dimensions");
  }

  // 2. The whole reader, on the bytes as a file.
  Array a;
  std::string error;
  const std::string path = file.Put(data, size);
  if (!relugrad::npy::Read(path, &a, &error)) {
    Check(!error.empty(), "Read failed without a message");
    return 0;
  }
  int64_t count = 1;
  for (int64_t d : a.shape) {
    Check(d >= 0, "negative dimension accepted");
    count *= d;  // Read proved this does not overflow
  }
  Check(count == a.count, "count is not the product of the shape");
  Check(a.elem_size > 0 && a.elem_size == relugrad::npy::DescrElementSize(a.descr), "element size");
  const size_t bytes = static_cast<size_t>(a.count) * a.elem_size;
  Check(a.data.size() == bytes, "data size differs from count * elem_size");
  Check(bytes <= size, "more data than the file holds");
  Check(bytes == 0 || std::memcmp(a.data.data(), data + (size - bytes), bytes) == 0,
        "payload is not the file's tail");

  // 3. Round trip through the writer.
  const std::string out = TempDir() + "/roundtrip.npy";
  Check(relugrad::npy::Write(out, a.descr, a.shape, a.data.data(), bytes, &error),
        "Write failed on a valid array");
  Array b;
  Check(relugrad::npy::Read(out, &b, &error), "re-reading the written file failed");
  Check(b.descr == a.descr && b.shape == a.shape && b.data.size() == bytes &&
            (bytes == 0 || std::memcmp(a.data.data(), b.data.data(), bytes) == 0),
        "round trip changed the array");
  return 0;
}
