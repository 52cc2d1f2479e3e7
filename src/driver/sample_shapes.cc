#include "driver/sample_shapes.h"

#include <algorithm>
#include <filesystem>

#include "runtime/shape_binding.h"

namespace edgec::driver {

namespace fs = std::filesystem;

StatusOr<std::map<std::string, Dims>> ShapesFromSamples(const Graph& g,
                                                        const std::vector<std::map<std::string, Tensor>>& samples,
                                                        const std::map<std::string, Dims>& given,
                                                        const std::vector<std::string>& sample_names) {
  std::map<std::string, Dims> shapes = given;
  auto name_of = [&](size_t k) {
    return k < sample_names.size() ? fmt::format("sample '{}'", sample_names[k])
                                   : fmt::format("sample {} (of {})", k + 1, samples.size());
  };
  for (const Value* in : g.inputs()) {
    if (given.count(in->name()) || in->type.IsStatic()) continue;
    std::optional<Dims> dims;
    for (size_t k = 0; k < samples.size(); ++k) {
      auto it = samples[k].find(in->name());
      if (it == samples[k].end()) continue;
      const Dims& d = it->second.dims();
      if (in->type.rank_known && static_cast<int>(d.size()) != in->type.rank()) {
        return InvalidArgument("{}: input '{}' is {}, the data has {} dims {}", name_of(k), in->name(),
                               in->type.ToString(), d.size(), DimsToString(d));
      }
      if (!dims) {
        dims = d;
      } else if (*dims != d) {
        return InvalidArgument("{} has dims {} for input '{}' ({}), {} has {}: the samples must agree to bind "
                               "its symbolic dims (or give --shape {}=...)",
                               name_of(k), DimsToString(d), in->name(), in->type.ToString(), name_of(0),
                               DimsToString(*dims), in->name());
      }
    }
    if (dims) shapes[in->name()] = *dims;
  }
  return shapes;
}

std::vector<std::string> CalibrationSampleNames(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string ext = e.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
    if (e.is_directory() || ext == ".npy" || ext == ".png" || ext == ".jpg" || ext == ".jpeg") {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<std::vector<quant::Sample>> BindShapesFromCalibration(Graph& g, const std::map<std::string, Dims>& given,
                                                               const std::string& calib_dir,
                                                               const quant::ImagePreprocess& pre, int64_t limit,
                                                               std::vector<std::string>* bound_from_data) {
  RETURN_IF_ERROR(BindInputShapes(g, given, 0));
  ASSIGN_OR_RETURN(std::vector<quant::Sample> samples, quant::LoadCalibrationSet(g, calib_dir, pre, limit));
  auto shapes = ShapesFromSamples(g, samples, given, CalibrationSampleNames(calib_dir));
  if (!shapes.ok()) return shapes.status().WithContext(calib_dir);
  if (bound_from_data) {
    for (const auto& [name, dims] : *shapes) {
      if (!given.count(name)) bound_from_data->push_back(fmt::format("{}={}", name, DimsToString(dims)));
    }
  }
  RETURN_IF_ERROR(BindInputShapes(g, *shapes, 1));
  return samples;
}

}  // namespace edgec::driver
