// A program on libedgec_runtime alone (no compiler, no protobuf): loads a compiled model,
// runs it on npu-sim and on cpu with x[i] = sin(i * 0.001), checks that the two agree bit
// for bit and writes the npu-sim output to OUT.bin, which ApiRuntime.RunsAsTheFullLibrary
// (tests/api/api_test.cc) compares with libedgec's run. Usage: edgec_runtime_test M.edgec OUT.bin
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "edgec/compiled_model.h"
#include "edgec/session.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.edgec OUT.bin\n", argv[0]);
    return 2;
  }
  auto model = edgec::CompiledModel::Load(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  const edgec::ValueInfo in = model->inputs()[0];
  int64_t n = 1;
  for (int64_t d : in.dims) n *= d;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(std::sin(static_cast<double>(i) * 0.001));
  const std::map<std::string, edgec::TensorView> feed = {{in.name, edgec::TensorView(in.dtype, in.dims, x.data())}};
  std::vector<edgec::TensorView> outs;
  for (edgec::Device d : {edgec::Device::kNpuSim, edgec::Device::kCpu}) {
    edgec::SessionOptions o;
    o.device = d;
    auto s = edgec::Session::Create(*model, o);
    auto y = s.ok() ? s->Run(feed) : edgec::StatusOr<std::vector<edgec::NamedTensor>>(s.status());
    if (!y.ok()) {
      std::fprintf(stderr, "%s\n", y.status().ToString().c_str());
      return 1;
    }
    outs.push_back((*y)[0].tensor);
  }
  if (outs[0].nbytes() != outs[1].nbytes() || std::memcmp(outs[0].data(), outs[1].data(), outs[0].nbytes()) != 0) {
    std::fprintf(stderr, "npu-sim != cpu\n");
    return 1;
  }
  std::FILE* f = std::fopen(argv[2], "wb");
  if (!f || std::fwrite(outs[0].data(), 1, outs[0].nbytes(), f) != outs[0].nbytes()) return 1;
  std::fclose(f);
  std::printf("runtime: %s on npu-sim == cpu, %zu bytes written\n", argv[1], outs[0].nbytes());
  return 0;
}
