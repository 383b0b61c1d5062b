#include "io/npy.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <limits>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace relugrad {
namespace npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// NumPy refuses headers over 10000 bytes by default; allow more, but bound
// it so a hostile length field cannot make us allocate gigabytes.
constexpr uint32_t kMaxHeaderLen = 1u << 20;
constexpr size_t kMaxDims = 64;

// A tiny cursor over the Python-literal header dict.
class Cursor {
 public:
  explicit Cursor(const std::string& text) : s_(text) {}
  void SkipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpace();
    return i_ < s_.size() && s_[i_] == c;
  }
  bool String(std::string* out) {
    SkipSpace();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return false;
    const char quote = s_[i_++];
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != quote) ++i_;
    if (i_ >= s_.size()) return false;
    *out = s_.substr(start, i_ - start);
    ++i_;
    return true;
  }
  bool Word(const char* w) {
    SkipSpace();
    const size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) == 0) {
      i_ += n;
      return true;
    }
    return false;
  }
  bool Integer(int64_t* out) {
    SkipSpace();
    if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') return false;
    int64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      const int d = s_[i_++] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - d) / 10) return false;
      v = v * 10 + d;
    }
    if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs
    *out = v;
    return true;
  }
  bool AtEnd() {
    SkipSpace();
    return i_ >= s_.size();
  }

 private:
  const std::string& s_;
  size_t i_ = 0;
};

bool Fail(std::string* error, const std::string& message) {
  *error = message;
  return false;
}

std::string Errno() { return std::strerror(errno); }

bool ReadFully(int fd, void* buf, size_t n) {
  auto* p = static_cast<unsigned char*>(buf);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n > (size_t{1} << 30) ? (size_t{1} << 30) : n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool WriteFully(int fd, const void* buf, size_t n) {
  const auto* p = static_cast<const unsigned char*>(buf);
  while (n > 0) {
    const ssize_t put = ::write(fd, p, n > (size_t{1} << 30) ? (size_t{1} << 30) : n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() {
    const int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

}  // namespace

size_t DescrElementSize(const std::string& descr) {
  if (descr.size() < 3) return 0;
  if (descr[0] != '<' && descr[0] != '>' && descr[0] != '|' && descr[0] != '=') return 0;
  // numpy's kind codes are all letters (b i u f c m M O S U V); anything else is malformed, and
  // a quote or a backslash here would also not survive Write's single-quoted header.
  const char kind = descr[1];
  if ((kind < 'a' || kind > 'z') && (kind < 'A' || kind > 'Z')) return 0;
  size_t size = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9') return 0;
    size = size * 10 + static_cast<size_t>(descr[i] - '0');
    if (size > 1024) return 0;
  }
  return size;
}

bool ParseHeader(const std::string& header, std::string* descr, bool* fortran_order,
                 std::vector<int64_t>* shape, std::string* error) {
  Cursor c(header);
  bool have_descr = false, have_order = false, have_shape = false;
  if (!c.Eat('{')) return Fail(error, "malformed header: it does not start with '{'");
  while (!c.Peek('}')) {
    std::string key;
    if (!c.String(&key)) return Fail(error, "malformed header: expected a quoted key");
    if (!c.Eat(':')) return Fail(error, "malformed header: expected ':' after '" + key + "'");
    if (key == "descr") {
      if (!c.String(descr))
        return Fail(error,
                    "malformed header: 'descr' is not a simple type string (structured dtypes are "
                    "not supported)");
      have_descr = true;
    } else if (key == "fortran_order") {
      if (c.Word("True"))
        *fortran_order = true;
      else if (c.Word("False"))
        *fortran_order = false;
      else
        return Fail(error, "malformed header: 'fortran_order' is not True or False");
      have_order = true;
    } else if (key == "shape") {
      shape->clear();
      if (!c.Eat('(')) return Fail(error, "malformed header: 'shape' is not a tuple");
      while (!c.Peek(')')) {
        int64_t dim = 0;
        if (!c.Integer(&dim))
          return Fail(error, "malformed header: 'shape' holds a non-integer or negative dimension");
        shape->push_back(dim);
        if (shape->size() > kMaxDims)
          return Fail(error, "malformed header: more than 64 dimensions");
        if (!c.Eat(',')) break;
      }
      if (!c.Eat(')')) return Fail(error, "malformed header: 'shape' tuple is not closed");
      have_shape = true;
    } else {
      return Fail(error, "malformed header: unexpected key '" + key + "'");
    }
    if (!c.Eat(',')) break;
  }
  if (!c.Eat('}')) return Fail(error, "malformed header: dict is not closed");
  if (!c.AtEnd()) return Fail(error, "malformed header: trailing characters after the dict");
  if (!have_descr || !have_order || !have_shape) {
    return Fail(error, "malformed header: it needs 'descr', 'fortran_order' and 'shape'");
  }
  return true;
}

bool Read(const std::string& path, Array* out, std::string* error) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Fail(error, "cannot open: " + Errno());
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Fail(error, "cannot stat: " + Errno());
  if (!S_ISREG(st.st_mode)) return Fail(error, "not a regular file");
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);

  unsigned char prefix[12];
  if (file_size < 10 || !ReadFully(fd.get(), prefix, 10))
    return Fail(error, "truncated: shorter than the .npy preamble");
  if (std::memcmp(prefix, kMagic, kMagicLen) != 0)
    return Fail(error, "not a .npy file (wrong magic)");
  const int major = prefix[6];
  uint64_t header_len = 0;
  uint64_t preamble = 0;
  if (major == 1) {
    header_len = prefix[8] | (prefix[9] << 8);
    preamble = 10;
  } else if (major == 2 || major == 3) {
    if (file_size < 12 || !ReadFully(fd.get(), prefix + 10, 2))
      return Fail(error, "truncated: shorter than the .npy preamble");
    header_len = static_cast<uint64_t>(prefix[8]) | (static_cast<uint64_t>(prefix[9]) << 8) |
                 (static_cast<uint64_t>(prefix[10]) << 16) |
                 (static_cast<uint64_t>(prefix[11]) << 24);
    preamble = 12;
  } else {
    return Fail(error, "unsupported .npy format version " + std::to_string(major));
  }
  if (header_len > kMaxHeaderLen)
    return Fail(error, "header length " + std::to_string(header_len) + " is implausibly large");
  if (preamble + header_len > file_size)
    return Fail(error, "truncated: the header runs past the end of the file");
  std::string header(header_len, '\0');
  if (!ReadFully(fd.get(), &header[0], header_len)) return Fail(error, "truncated header");

  bool fortran = false;
  if (!ParseHeader(header, &out->descr, &fortran, &out->shape, error)) return false;
  if (fortran) return Fail(error, "Fortran-order arrays are not supported (save with order='C')");
  if (out->descr[0] == '>')
    return Fail(error, "big-endian data ('" + out->descr +
                           "') is not supported; use arr.astype(arr.dtype.newbyteorder('<'))");
  out->elem_size = DescrElementSize(out->descr);
  if (out->elem_size == 0) return Fail(error, "unsupported dtype '" + out->descr + "'");

  int64_t count = 1;
  for (int64_t dim : out->shape) {
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)
      return Fail(error, "shape's element count overflows");
    count *= dim;
  }
  out->count = count;
  const uint64_t data_offset = preamble + header_len;
  const uint64_t available = file_size - data_offset;
  if (static_cast<uint64_t>(count) > available / out->elem_size) {
    return Fail(error, "truncated: the header claims " + std::to_string(count) +
                           " elements but the file holds " +
                           std::to_string(available / out->elem_size));
  }
  const uint64_t bytes = static_cast<uint64_t>(count) * out->elem_size;
  if (bytes != available)
    return Fail(error, "file has " + std::to_string(available - bytes) +
                           " bytes of trailing data after the array");
  if (!out->data.Allocate(bytes))
    return Fail(error, "out of memory for " + std::to_string(bytes) + " bytes");
  if (bytes > 0 && !ReadFully(fd.get(), out->data.data(), bytes))
    return Fail(error, "read error: " + Errno());
  return true;
}

bool Write(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
           const void* data, size_t bytes, std::string* error) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) dict += ",";
    if (i + 1 < shape.size()) dict += " ";
  }
  dict += "), }";
  // Pad so the data starts on a 64-byte boundary, header ends with '\n'.
  const bool v2 = dict.size() + 1 + 10 > 65535;
  const size_t preamble = v2 ? 12 : 10;
  const size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - preamble - dict.size() - 1, ' ');
  dict += '\n';
  std::string head(kMagic, kMagicLen);
  head += static_cast<char>(v2 ? 2 : 1);
  head += '\0';
  const uint32_t len = static_cast<uint32_t>(dict.size());
  head += static_cast<char>(len & 0xff);
  head += static_cast<char>((len >> 8) & 0xff);
  if (v2) {
    head += static_cast<char>((len >> 16) & 0xff);
    head += static_cast<char>((len >> 24) & 0xff);
  }
  head += dict;

  // What the path names decides how it is written. A FIFO, socket or device (/dev/null,
  // /dev/stdout) takes the bytes as they come: there is no file to replace, and replacing the
  // node by a regular file would destroy it. A regular file (through any symlinks: the link
  // stays, its target is replaced) or a new name gets a temporary file beside it, renamed
  // into place on success, so a failed write leaves no partial file.
  struct stat st;
  std::string target = path;
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
      Fd out(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
      if (out.get() < 0) return Fail(error, "cannot open for writing: " + Errno());
      if (!WriteFully(out.get(), head.data(), head.size()) || !WriteFully(out.get(), data, bytes))
        return Fail(error, "write failed: " + Errno());
      return true;
    }
    std::vector<char> resolved(PATH_MAX + 1, '\0');
    if (::realpath(path.c_str(), resolved.data()) != nullptr) target = resolved.data();
  }
  const size_t slash = target.find_last_of('/');
  const std::string dir =
      slash == std::string::npos ? "." : target.substr(0, slash == 0 ? 1 : slash);
  std::string tmpl = (slash == std::string::npos ? std::string("") : target.substr(0, slash + 1)) +
                     ".relugrad-tmp-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  Fd fd(::mkstemp(name.data()));
  if (fd.get() < 0)
    return Fail(error, "cannot create a temporary file in '" + dir + "': " + Errno());
  ::fchmod(fd.get(), 0644);
  const bool ok =
      WriteFully(fd.get(), head.data(), head.size()) && WriteFully(fd.get(), data, bytes);
  const int raw = fd.release();
  const bool closed = ::close(raw) == 0;
  if (!ok || !closed) {
    const std::string why = Errno();
    ::unlink(name.data());
    return Fail(error, "write failed: " + why);
  }
  if (::rename(name.data(), target.c_str()) != 0) {
    const std::string why = Errno();
    ::unlink(name.data());
    return Fail(error, "cannot rename the temporary file into place: " + why);
  }
  return true;
}

}  // namespace npy
}  // namespace relugrad
