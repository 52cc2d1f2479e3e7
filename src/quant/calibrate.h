// Calibration: run the float model over the calibration set, observe the activations the
// quantized graph will hold as int8, and pick a scale and zero point for each.
// The table of choices can be written as readable JSON, edited, and read back:
//
//   { "format": "edgec-quant-scales/1", "method": "entropy", "dtype": "u8",
//     "symmetric": false, "samples": 64,
//     "activations": { "input": { "scale": 0.0312, "zero_point": 131,
//                                 "min": -4.1, "max": 3.9, "lo": -4.1, "hi": 3.85 }, ... } }
//
// scale and zero_point are what the rewrite uses; min/max (observed) and lo/hi (the
// calibrated range) are there to read. An entry with lo/hi but no scale gets its scale
// from the range when read back, so editing a range is enough.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"
#include "quant/calibration_data.h"
#include "quant/calibrator.h"

namespace edgec::quant {

struct ActivationScale {
  float scale = 1;
  int32_t zero_point = 0;
  double min = 0, max = 0;  // observed
  double lo = 0, hi = 0;    // calibrated range
};

struct ScaleTable {
  std::string method;
  DType dtype = DType::kU8;
  bool symmetric = false;
  int64_t samples = 0;
  std::map<std::string, ActivationScale> activations;
};

// Runs `g` (float, static shapes) on every sample (CPU plan; the reference executor if
// no plan can be built) and histograms each value named in `names`. `progress` prints a
// progress bar on stderr.
StatusOr<std::map<std::string, Histogram>> ObserveActivations(const Graph& g,
                                                              const std::vector<std::string>& names,
                                                              const std::vector<Sample>& samples,
                                                              bool progress);

ScaleTable ChooseScales(const std::map<std::string, Histogram>& observed, const CalibrationOptions& o,
                        int64_t samples);

Status WriteScaleTable(const ScaleTable& t, const std::string& path);
StatusOr<ScaleTable> ReadScaleTable(const std::string& path);

}  // namespace edgec::quant
