#include "npy_dtype.h"

#include "cli_args.h"

namespace relugrad {
namespace cli {

relugrad_dtype DtypeFromDescr(const std::string& file, const std::string& descr,
                              const std::string& requested) {
  const std::string body = descr.size() > 1 ? descr.substr(1) : descr;
  const bool bf16_container = body == "u2" || body == "i2" || body == "V2";
  if (requested == "bf16") {
    if (!bf16_container) {
      throw UsageError(file +
                       ": --dtype bf16 needs 2-byte '<u2', '<i2' or '|V2' data, the file holds '" +
                       descr + "'");
    }
    return RELUGRAD_BF16;
  }
  relugrad_dtype d;
  if (body == "f2")
    d = RELUGRAD_F16;
  else if (body == "f4")
    d = RELUGRAD_F32;
  else if (body == "f8")
    d = RELUGRAD_F64;
  else if (bf16_container)
    throw UsageError(file + ": 2-byte non-float data '" + descr +
                     "': pass --dtype bf16 to read it as bfloat16");
  else if (!body.empty() && (body[0] == 'i' || body[0] == 'u' || body[0] == 'b'))
    throw UsageError(file + ": integer/bool dtype '" + descr +
                     "' is not supported (floating types only)");
  else
    throw UsageError(file + ": unsupported dtype '" + descr +
                     "' (f16, f32, f64, or bf16 with --dtype bf16)");
  if (!requested.empty() && requested != relugrad_dtype_name(d)) {
    throw UsageError(file + ": --dtype " + requested + " does not match the file's dtype '" +
                     descr + "'");
  }
  return d;
}

}  // namespace cli
}  // namespace relugrad
