// NumPy .npy files (format versions 1, 2 and 3; little-endian, C order).
//
// Reading never trusts the header: the shape's element count is computed
// with overflow checks and must match the bytes actually in the file before
// anything is allocated. Writing goes to a temporary file in the target's
// folder and is renamed into place, so a failure never leaves a partial file.
#ifndef RELUGRAD_IO_NPY_H_
#define RELUGRAD_IO_NPY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/aligned_buffer.h"

namespace relugrad {
namespace npy {

struct Array {
  std::string descr;           // as in the file, e.g. "<f4", "|V2"
  std::vector<int64_t> shape;  // () for a scalar
  int64_t count = 0;           // product of shape
  size_t elem_size = 0;        // from descr
  AlignedBuffer data;          // count * elem_size bytes, 2 MiB aligned when large
};

// Reads `path`. On failure returns false and sets *error to a sentence that
// names the problem (the caller prefixes the file name).
bool Read(const std::string& path, Array* out, std::string* error);

// Parses just a header held in memory (exposed for the fuzzer and tests).
// header is everything after the magic/version/length prefix.
bool ParseHeader(const std::string& header, std::string* descr, bool* fortran_order,
                 std::vector<int64_t>* shape, std::string* error);

// Writes a version 1 (or 2 when the header needs it) file atomically.
bool Write(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
           const void* data, size_t bytes, std::string* error);

// Element size of a descr such as "<f4"/"|V2": a byte-order character, a letter
// for the kind, digits for the size (0 if the text is malformed).
size_t DescrElementSize(const std::string& descr);

}  // namespace npy
}  // namespace relugrad

#endif  // RELUGRAD_IO_NPY_H_
