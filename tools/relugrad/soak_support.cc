#include "soak_support.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <utility>

#include "cli_args.h"

namespace relugrad {
namespace cli {

double ParseDuration(const std::string& text, const std::string& what) {
  if (text.empty()) throw UsageError(what + ": empty duration");
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
      ++i;
    if (i == start)
      throw UsageError(what + ": '" + text +
                       "' is not a duration (examples: 90s, 10m, 24h, 1h30m)");
    const std::string number = text.substr(start, i - start);
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !std::isfinite(v)) {
      throw UsageError(what + ": bad number '" + number + "' in '" + text + "'");
    }
    if (i >= text.size())
      throw UsageError(what + ": '" + text + "' needs a unit after " + number + " (s, m or h)");
    const char unit = text[i++];
    const double scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 0;
    if (scale == 0)
      throw UsageError(what + ": unknown unit '" + std::string(1, unit) + "' in '" + text +
                       "' (use s, m or h)");
    total += v * scale;
  }
  // A year is far beyond any soak; the bound keeps arithmetic on it exact.
  if (!(total > 0) || total > 366.0 * 24 * 3600)
    throw UsageError(what + ": '" + text + "' must be > 0 and at most a year");
  return total;
}

std::string FormatHms(double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  const long long s = static_cast<long long>(seconds + 0.5);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

std::string FormatBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

uint64_t ResidentBytes() {
  std::ifstream f("/proc/self/statm");
  unsigned long long size = 0, resident = 0;
  if (!(f >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

uint64_t AvailableBytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  unsigned long long value = 0;
  std::string unit;
  while (f >> key >> value >> unit) {
    if (key == "MemAvailable:") return value * 1024;
  }
  return 0;
}

MappedBuffer::MappedBuffer(size_t bytes) {
  if (bytes == 0) return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<unsigned char*>(p);
  size_ = bytes;
}

MappedBuffer::MappedBuffer(MappedBuffer&& other) noexcept { *this = std::move(other); }

MappedBuffer& MappedBuffer::operator=(MappedBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  return *this;
}

MappedBuffer::~MappedBuffer() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace cli
}  // namespace relugrad
