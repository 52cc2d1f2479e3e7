// The one quantization pipeline of the API: Model::Quantize (samples in memory; the Python
// module's quantize) and Model::QuantizeFromDirectory (a folder; `edgec quantize`) both run it.
#pragma once

#include <string>
#include <vector>

#include "edgec/model.h"
#include "ir/graph.h"
#include "quant/calibration_data.h"

namespace edgec::api {

// Where the calibration samples come from: `given` (in memory), else the folder `dir` (its
// first `limit` samples when > 0; may be empty when options.scales_in is given).
struct CalibrationSource {
  const std::vector<quant::Sample>* given = nullptr;
  std::string dir;
  int64_t limit = 0;
};

// Binds `g`'s input dims (options.shapes, then the samples'), calibrates (or reads
// options.scales_in), measures the per-layer error and fits the accuracy budget when asked,
// rewrites `g` to the QDQ form and compares int8 with FP32 on options.eval_dir. `name` names
// the model in messages; `report` may be null. On failure `g` is left half done: run it on a
// copy.
Status QuantizeGraph(Graph& g, const std::string& name, const CalibrationSource& source,
                     const QuantizeOptions& options, QuantizeReport* report);

}  // namespace edgec::api
