// Decoding calibration images: PNG (libpng) and JPEG (libjpeg), to 8-bit RGB, row-major
// height × width × 3. Errors name the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"

namespace edgec {

struct RgbImage {
  int64_t height = 0, width = 0;
  std::vector<uint8_t> pixels;  // h·w·3, RGB
};

// Picks the decoder by the file's magic bytes (not its extension).
StatusOr<RgbImage> ReadImage(const std::string& path);
// For tests and the calibration-data generator.
Status WritePng(const std::string& path, const RgbImage& image);

}  // namespace edgec
