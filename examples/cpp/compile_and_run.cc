// Quantizes an ONNX image model on seeded inputs, compiles it for the default NPU target,
// prints where each node runs and why, runs it on the simulated NPU and on the CPU, and
// checks that both give the same bytes. Usage: compile_and_run MODEL.onnx
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <edgec/edgec.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
    return 2;
  }
  auto model = edgec::Model::Load(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  const edgec::ValueInfo in = model->inputs()[0];
  int64_t n = 1;
  for (int64_t d : in.dims) n *= d;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<std::vector<float>> images(4, std::vector<float>(n));
  for (auto& im : images)
    for (auto& x : im) x = u(rng);

  std::vector<edgec::Sample> calib;
  for (auto& im : images) calib.push_back({{in.name, edgec::TensorView(in.dtype, in.dims, im.data())}});
  if (edgec::Status st = model->Quantize(calib, {.method = "minmax"}); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  auto compiled = edgec::CompiledModel::Compile(*model);
  if (!compiled.ok()) {
    std::fprintf(stderr, "%s\n", compiled.status().ToString().c_str());
    return 1;
  }
  std::printf("%s", compiled->PlacementReport().c_str());

  const std::map<std::string, edgec::TensorView> feed = {{in.name, edgec::TensorView(in.dtype, in.dims, images[0].data())}};
  auto npu = edgec::Session::Create(*compiled, {.device = edgec::Device::kNpuSim});
  auto cpu = edgec::Session::Create(*compiled, {.device = edgec::Device::kCpu});
  auto y_npu = npu->Run(feed);
  auto y_cpu = cpu->Run(feed);
  if (!y_npu.ok() || !y_cpu.ok()) {
    std::fprintf(stderr, "run failed\n");
    return 1;
  }
  const edgec::TensorView& a = (*y_npu)[0].tensor;
  const edgec::TensorView& b = (*y_cpu)[0].tensor;
  const bool same = a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
  std::printf("simulated NPU latency %.3f ms (%.0f NPU cycles); npu-sim %s cpu\n",
              npu->profile().total_seconds * 1e3, npu->profile().npu_cycles, same ? "==" : "!=");
  return same ? 0 : 1;
}
