// The calibration set: the sample inputs calibration (and evaluation) feed the model.
//
// A folder in one of three forms, read in file-name order:
//   DIR/<sample>.npy          one file per sample, for a model with one input;
//   DIR/<sample>/<input>.npy  one subfolder per sample with a file per graph input (the
//                             same layout as the zoo's inputs/ folder; any character of an
//                             input name other than a letter, digit, '.', '_', '-' is '_');
//   DIR/<sample>.png|.jpg     images, for a model with one 4-d float input: decoded to RGB,
//                             preprocessed as ImagePreprocess says.
// Every sample must match the graph inputs' dtype and static dims.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"
#include "support/image.h"

namespace edgec::quant {

using Sample = std::map<std::string, Tensor>;

struct ImagePreprocess {
  int64_t resize = 0;             // shorter side to this many pixels first (0: no resize)
  // Center crop to the input's H×W (always; an image smaller than that is an error).
  float pixel_scale = 1.0f / 255; // pixel values × this, then (x − mean) / std per channel
  std::vector<float> mean = {0, 0, 0};
  std::vector<float> std = {1, 1, 1};
  bool bgr = false;               // channel order of the tensor
  std::string layout = "auto";    // nchw, nhwc, or auto (from where the input has 3 channels)
};

// `limit` > 0 reads only the first `limit` samples.
StatusOr<std::vector<Sample>> LoadCalibrationSet(const Graph& g, const std::string& dir,
                                                 const ImagePreprocess& pre, int64_t limit = 0);

// One image as the tensor of an input of dims [1, 3, H, W] (nchw) or [1, H, W, 3] (nhwc).
StatusOr<Tensor> PreprocessImage(const RgbImage& img, const Dims& dims, const ImagePreprocess& pre,
                                 const std::string& what);

}  // namespace edgec::quant
