// Input shapes from the data: a model exported with symbolic dims ([?, 3, ?, ?]) is bound to
// the dims its calibration samples have, so `quantize` and `compile` need no --shape.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "quant/calibration_data.h"

namespace edgec::driver {

// The dims to bind per graph input: `given` (--shape) first; an input with symbolic dims
// that `given` does not name takes its samples' dims, which every sample must agree on
// (else the error names the first sample that differs, by `sample_names[k]` when given);
// inputs with static dims are left out. Fails when a sample's rank differs from the input's.
StatusOr<std::map<std::string, Dims>> ShapesFromSamples(const Graph& g,
                                                        const std::vector<std::map<std::string, Tensor>>& samples,
                                                        const std::map<std::string, Dims>& given,
                                                        const std::vector<std::string>& sample_names = {});

// The names of the samples of a calibration folder in the order quant::LoadCalibrationSet
// reads them (its entries sorted by name: sample files, or sample subfolders).
std::vector<std::string> CalibrationSampleNames(const std::string& dir);

// What `quantize` and `compile` do with --calib: binds `given` (symbolic dims elsewhere stay
// symbolic), loads the calibration folder, binds every input still symbolic to its samples'
// dims (ShapesFromSamples) and the rest to 1, and returns the samples. `bound_from_data`
// (optional) receives "NAME=DIMS" per input bound from the samples.
StatusOr<std::vector<quant::Sample>> BindShapesFromCalibration(Graph& g, const std::map<std::string, Dims>& given,
                                                               const std::string& calib_dir,
                                                               const quant::ImagePreprocess& pre, int64_t limit,
                                                               std::vector<std::string>* bound_from_data = nullptr);

}  // namespace edgec::driver
