// What `edgec estimate` and `edgec sweep` estimate: a model file or a generated decoder.
#pragma once

#include <string>
#include <vector>

#include "edgec/estimate.h"

namespace edgec::cli {

// The workload of MODEL (its symbolic dims bound by `--shape NAME=DIMS` flags, others 1) or,
// when `decoder` is given, of a generated decoder (estimate.cc).
StatusOr<NpuWorkload> WorkloadFor(const std::string& model, const std::string& decoder,
                                  const std::vector<std::string>& shapes, bool fp16);

}  // namespace edgec::cli
