#include "module_arrays.h"

#include <string>
#include <vector>

namespace relugrad_python {

int DtypeOf(const nb::dlpack::dtype& t, int declared) {
  if (t.lanes != 1) return 0;
  if (declared != 0) {
    const size_t want = relugrad_dtype_size(static_cast<relugrad_dtype>(declared));
    const bool raw_bits = t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::UInt) ||
                          t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Int);
    if (raw_bits && t.bits == want * 8) return declared;
  }
  if (t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float)) {
    switch (t.bits) {
      case 16:
        return RELUGRAD_F16;
      case 32:
        return RELUGRAD_F32;
      case 64:
        return RELUGRAD_F64;
    }
  }
  if (t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat) && t.bits == 16)
    return RELUGRAD_BF16;
  return 0;
}

std::string DescribeDtype(const nb::dlpack::dtype& t) {
  static const char* kCodes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  const char* code = t.code < 7 ? kCodes[t.code] : "code";
  return std::string(code) + std::to_string(t.bits) +
         (t.lanes != 1 ? "x" + std::to_string(t.lanes) : "");
}

std::string ShapeString(const std::vector<size_t>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

void Check(relugrad_status status) {
  if (status == RELUGRAD_OK) return;
  const std::string message = relugrad_last_error();
  switch (status) {
    case RELUGRAD_INVALID_ARGUMENT:
      throw nb::value_error(message.c_str());
    case RELUGRAD_UNSUPPORTED:
      throw nb::builtin_exception(nb::exception_type::runtime_error,
                                  ("unsupported: " + message).c_str());
    default:
      throw std::runtime_error(message);
  }
}

}  // namespace relugrad_python
