#include "quant/calibration_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "runtime/reference_executor.h"
#include "support/npy.h"

namespace edgec::quant {
namespace fs = std::filesystem;
namespace {

std::string Sanitize(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  }
  return s;
}

bool HasExt(const fs::path& p, std::initializer_list<const char*> exts) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* x : exts) if (e == x) return true;
  return false;
}

// Bilinear resize (half-pixel centres) of an RGB image.
RgbImage Resize(const RgbImage& in, int64_t h, int64_t w) {
  RgbImage out;
  out.height = h, out.width = w;
  out.pixels.resize(h * w * 3);
  const double sy = static_cast<double>(in.height) / h, sx = static_cast<double>(in.width) / w;
  for (int64_t y = 0; y < h; ++y) {
    const double fy = std::clamp((y + 0.5) * sy - 0.5, 0.0, in.height - 1.0);
    const int64_t y0 = static_cast<int64_t>(fy), y1 = std::min(y0 + 1, in.height - 1);
    const double dy = fy - y0;
    for (int64_t x = 0; x < w; ++x) {
      const double fx = std::clamp((x + 0.5) * sx - 0.5, 0.0, in.width - 1.0);
      const int64_t x0 = static_cast<int64_t>(fx), x1 = std::min(x0 + 1, in.width - 1);
      const double dx = fx - x0;
      for (int c = 0; c < 3; ++c) {
        auto at = [&](int64_t yy, int64_t xx) { return in.pixels[(yy * in.width + xx) * 3 + c]; };
        const double v = (1 - dy) * ((1 - dx) * at(y0, x0) + dx * at(y0, x1)) +
                         dy * ((1 - dx) * at(y1, x0) + dx * at(y1, x1));
        out.pixels[(y * w + x) * 3 + c] = static_cast<uint8_t>(std::clamp(std::lround(v), 0l, 255l));
      }
    }
  }
  return out;
}

}  // namespace

StatusOr<Tensor> PreprocessImage(const RgbImage& src, const Dims& dims, const ImagePreprocess& pre,
                                 const std::string& what) {
  if (dims.size() != 4 || dims[0] != 1)
    return InvalidArgument("{}: images feed an input of dims [1, 3, H, W] or [1, H, W, 3], got {}",
                           what, DimsToString(dims));
  std::string layout = pre.layout;
  if (layout == "auto") layout = dims[1] == 3 ? "nchw" : dims[3] == 3 ? "nhwc" : "";
  if (layout != "nchw" && layout != "nhwc")
    return InvalidArgument("{}: cannot tell the input's layout from {} (use --layout)", what, DimsToString(dims));
  const bool nchw = layout == "nchw";
  if ((nchw ? dims[1] : dims[3]) != 3)
    return InvalidArgument("{}: input {} has no 3-channel axis for layout {}", what, DimsToString(dims), layout);
  if (pre.mean.size() != 3 || pre.std.size() != 3)
    return InvalidArgument("mean and std need 3 values each (R,G,B)");
  const int64_t h = nchw ? dims[2] : dims[1], w = nchw ? dims[3] : dims[2];
  RgbImage img = src;
  if (pre.resize > 0) {
    const double f = static_cast<double>(pre.resize) / std::min(img.height, img.width);
    img = Resize(img, std::max<int64_t>(1, std::lround(img.height * f)),
                 std::max<int64_t>(1, std::lround(img.width * f)));
  }
  if (img.height < h || img.width < w)
    return InvalidArgument("{}: image {}x{} is smaller than the input's {}x{} (use --resize)", what,
                           img.width, img.height, w, h);
  const int64_t top = (img.height - h) / 2, left = (img.width - w) / 2;
  Tensor t(DType::kF32, dims);
  float* out = t.data<float>();
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        const int src_c = pre.bgr ? 2 - c : c;
        const float px = img.pixels[((top + y) * img.width + left + x) * 3 + src_c];
        const float v = (px * pre.pixel_scale - pre.mean[src_c]) / pre.std[src_c];
        out[nchw ? (c * h + y) * w + x : (y * w + x) * 3 + c] = v;
      }
    }
  }
  return t;
}

StatusOr<std::vector<Sample>> LoadCalibrationSet(const Graph& g, const std::string& dir,
                                                 const ImagePreprocess& pre, int64_t limit) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound("calibration folder '{}' does not exist", dir);
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  std::vector<fs::path> files, folders;
  for (const auto& p : entries) {
    if (fs::is_directory(p)) folders.push_back(p);
    else if (HasExt(p, {".npy", ".png", ".jpg", ".jpeg"})) files.push_back(p);
  }
  if (!files.empty() && !folders.empty())
    return InvalidArgument("calibration folder '{}' mixes sample files and sample folders", dir);
  std::vector<Sample> samples;
  auto full = [&] { return limit > 0 && static_cast<int64_t>(samples.size()) >= limit; };
  if (!folders.empty()) {
    for (const auto& f : folders) {
      if (full()) break;
      Sample s;
      for (const Value* in : g.inputs()) {
        const fs::path file = f / (Sanitize(in->name()) + ".npy");
        if (!fs::exists(file))
          return NotFound("{}: no {}.npy for model input '{}'", f.string(), Sanitize(in->name()), in->name());
        ASSIGN_OR_RETURN(s[in->name()], ReadNpy(file.string()));
      }
      RETURN_IF_ERROR(CheckInputs(g, s).WithContext(f.string()));
      samples.push_back(std::move(s));
    }
  } else {
    if (g.inputs().size() != 1)
      return InvalidArgument("{}: the model has {} inputs; give one subfolder per sample with a "
                             "<input>.npy for each", dir, g.inputs().size());
    const Value* in = g.inputs()[0];
    for (const auto& f : files) {
      if (full()) break;
      Sample s;
      if (HasExt(f, {".npy"})) {
        ASSIGN_OR_RETURN(s[in->name()], ReadNpy(f.string()));
      } else {
        if (!in->type.IsStatic() || in->type.dtype != DType::kF32)
          return InvalidArgument("{}: images need a float input with static dims, '{}' is {}",
                                 f.string(), in->name(), in->type.ToString());
        ASSIGN_OR_RETURN(RgbImage img, ReadImage(f.string()));
        ASSIGN_OR_RETURN(s[in->name()], PreprocessImage(img, in->type.dims, pre, f.string()));
      }
      RETURN_IF_ERROR(CheckInputs(g, s).WithContext(f.string()));
      samples.push_back(std::move(s));
    }
  }
  if (samples.empty()) return InvalidArgument("calibration folder '{}' holds no samples (.npy, .png, .jpg)", dir);
  return samples;
}

}  // namespace edgec::quant
