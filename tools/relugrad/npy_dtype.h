// Maps a .npy descr to a relugrad dtype, honouring --dtype bf16 for the
// 2-byte containers NumPy uses for ml_dtypes.bfloat16 ('<u2', '<i2', '|V2').
#ifndef RELUGRAD_TOOLS_NPY_DTYPE_H_
#define RELUGRAD_TOOLS_NPY_DTYPE_H_

#include <string>

#include "relugrad/relugrad.h"

namespace relugrad {
namespace cli {

// requested: "" (from the file) or a dtype name given with --dtype.
// Throws UsageError naming the file.
relugrad_dtype DtypeFromDescr(const std::string& file, const std::string& descr,
                              const std::string& requested);

}  // namespace cli
}  // namespace relugrad

#endif  // RELUGRAD_TOOLS_NPY_DTYPE_H_
