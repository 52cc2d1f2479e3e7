// The project's own small .npy reader and writer (format versions 1.0-3.0; C order;
// little-endian numeric and bool dtypes). Errors name the file and what was wrong.
#pragma once

#include <string>

#include "support/status.h"
#include "ir/tensor.h"

namespace edgec {

StatusOr<Tensor> ReadNpy(const std::string& path);
Status WriteNpy(const std::string& path, const Tensor& t);

// Parses a .npy image already in memory; `what` names it in errors.
StatusOr<Tensor> ParseNpy(std::string_view bytes, const std::string& what);

}  // namespace edgec
