// Throughput of the fast CPU kernels on a few representative problems, at 1 and 2 threads
// (the benchmark argument). A measurement, not a test:
//   build-*/bin/bench_cpu_kernels [--benchmark_filter=Conv]
// The GFLOP counter is a rate (GFLOP/s). It counts 2 flops per multiply-add for conv and
// matmul, and nominal per-element operation counts for softmax (5: max, subtract, exp,
// sum, scale) and layer norm (8).
// GemmPeak is oneDNN's own sgemm on a large square problem: the machine's attainable f32
// rate, the yardstick bench/peer_cpu.py divides every model's GFLOP/s by.
#include <benchmark/benchmark.h>

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <random>

#include "driver/kernel_tuning.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/kernel.h"

namespace edgec {
namespace {

struct Problem {
  cpu::KernelRequest req;
  Attributes attrs;
  std::vector<Tensor> inputs;  // one per request input (constants included)
  std::vector<Tensor> outputs;
  double flops = 0;
};

Tensor RandomTensor(const Dims& dims, uint32_t seed) {
  Tensor t(DType::kF32, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

cpu::TensorDesc Desc(const Dims& dims, Layout layout = Layout::kRowMajor) {
  return cpu::TensorDesc{DType::kF32, dims, dims.size() == 4 ? layout : Layout::kRowMajor};
}

// Runs the problem's kernel for as long as the benchmark wants.
void RunProblem(benchmark::State& state, Problem& p) {
  p.req.attrs = &p.attrs;
  p.req.threads = static_cast<int>(state.range(0));
  p.req.tuning = driver::KernelTuningFromEnvironment();
  cpu::SetThreads(p.req.threads);
  auto kernel = cpu::CreateKernel(p.req);
  if (!kernel.ok()) {
    state.SkipWithError(kernel.status().message().c_str());
    return;
  }
  std::vector<const void*> in;
  for (const Tensor& t : p.inputs) in.push_back(t.raw());
  for (const cpu::TensorDesc& d : p.req.outputs) p.outputs.emplace_back(d.dtype, d.dims);
  std::vector<void*> out;
  for (Tensor& t : p.outputs) out.push_back(t.raw());
  Tensor scratch(DType::kU8, {static_cast<int64_t>(std::max<size_t>((*kernel)->scratch_bytes(), 1))});
  for (auto _ : state) {
    Status s = (*kernel)->Run(in, out, scratch.raw());
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP"] = benchmark::Counter(p.flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel((*kernel)->Describe());
}

Problem ConvProblem(int64_t c_in, int64_t c_out, int64_t hw, int64_t group, Layout layout, int64_t k = 3) {
  Problem p;
  p.req.op = OpKind::kConv;
  p.req.label = "Conv 'bench'";
  const int64_t pad = k / 2;
  p.attrs.Set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  p.attrs.Set("group", group);
  const Dims x = {1, c_in, hw, hw}, w = {c_out, c_in / group, k, k}, y = {1, c_out, hw, hw};
  p.inputs = {RandomTensor(x, 1), RandomTensor(w, 2), RandomTensor({c_out}, 3)};
  p.req.inputs = {Desc(x, layout), Desc(w), Desc({c_out})};
  p.req.constants = {nullptr, &p.inputs[1], &p.inputs[2]};
  p.req.outputs = {Desc(y, layout)};
  p.flops = 2.0 * c_out * (c_in / group) * k * k * hw * hw;
  return p;
}

Problem MatMulProblem(int64_t m, int64_t k, int64_t n) {
  Problem p;
  p.req.op = OpKind::kMatMul;
  p.req.label = "MatMul 'bench'";
  p.inputs = {RandomTensor({m, k}, 4), RandomTensor({k, n}, 5)};
  p.req.inputs = {Desc({m, k}), Desc({k, n})};
  p.req.constants = {nullptr, &p.inputs[1]};
  p.req.outputs = {Desc({m, n})};
  p.flops = 2.0 * m * k * n;
  return p;
}

void BM_Conv3x3_64x64_56(benchmark::State& state) {
  Problem p = ConvProblem(64, 64, 56, 1, Layout::kNHWC);
  RunProblem(state, p);
}
void BM_Conv3x3_64x64_56_RowMajor(benchmark::State& state) {
  Problem p = ConvProblem(64, 64, 56, 1, Layout::kRowMajor);
  RunProblem(state, p);
}
// Row-major 1x1 convs as in shufflenet's stages 3 and 4 (range(1) channels, range(2)
// pixels per side): blocked conv with reorders, or GEMM (EDGEC_CPU_CONV1X1_GEMM_MIN_PIXELS).
void BM_Conv1x1_RowMajor(benchmark::State& state) {
  Problem p = ConvProblem(state.range(1), state.range(1), state.range(2), 1, Layout::kRowMajor, 1);
  RunProblem(state, p);
}
// Row-major 3x3 convs as in unet_small (range(1) -> range(2) channels at range(3) pixels
// per side): direct or Winograd (EDGEC_CPU_WINOGRAD=0 turns it off).
void BM_Conv3x3_RowMajor(benchmark::State& state) {
  Problem p = ConvProblem(state.range(1), state.range(2), state.range(3), 1, Layout::kRowMajor);
  RunProblem(state, p);
}
// The same in NHWC (squeezenet1_1, resnet18 shapes): direct nhwc kernels need no reorders,
// Winograd still reorders in and out.
void BM_Conv3x3_Nhwc(benchmark::State& state) {
  Problem p = ConvProblem(state.range(1), state.range(2), state.range(3), 1, Layout::kNHWC);
  RunProblem(state, p);
}
// 3x3 stride-2 NHWC convs as in detector_nms's backbone (range(1) -> range(2) channels,
// range(3) input pixels per side, HardSwish): the own stride-2 Winograd kernel, or oneDNN's
// brgconv with EDGEC_CPU_WINOGRAD=0. GFLOP/s count the direct conv's multiply-adds.
void BM_Conv3x3s2_Nhwc(benchmark::State& state) {
  const int64_t c_in = state.range(1), c_out = state.range(2), hw = state.range(3), out = hw / 2;
  Problem p;
  p.req.op = OpKind::kFusedConv;
  p.req.label = "FusedConv 'bench'";
  p.attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  p.attrs.Set("strides", std::vector<int64_t>{2, 2});
  p.attrs.Set("activation", std::string("HardSwish"));
  const Dims x = {1, c_in, hw, hw}, w = {c_out, c_in, 3, 3}, y = {1, c_out, out, out};
  p.inputs = {RandomTensor(x, 1), RandomTensor(w, 2), RandomTensor({c_out}, 3)};
  p.req.inputs = {Desc(x, Layout::kNHWC), Desc(w), Desc({c_out})};
  p.req.constants = {nullptr, &p.inputs[1], &p.inputs[2]};
  p.req.outputs = {Desc(y, Layout::kNHWC)};
  p.flops = 2.0 * c_out * c_in * 9 * out * out;
  RunProblem(state, p);
}
void BM_Depthwise3x3_144_56(benchmark::State& state) {
  Problem p = ConvProblem(144, 144, 56, 144, Layout::kNHWC);
  RunProblem(state, p);
}
void BM_MatMul_1024(benchmark::State& state) {
  Problem p = MatMulProblem(1024, 1024, 1024);
  RunProblem(state, p);
}
void BM_MatMul_128x256x256(benchmark::State& state) {
  Problem p = MatMulProblem(128, 256, 256);
  RunProblem(state, p);
}
void BM_Softmax_128x128(benchmark::State& state) {
  Problem p;
  p.req.op = OpKind::kSoftmax;
  p.req.label = "Softmax 'bench'";
  p.inputs = {RandomTensor({128, 128}, 6)};
  p.req.inputs = {Desc({128, 128})};
  p.req.constants = {nullptr};
  p.req.outputs = {Desc({128, 128})};
  p.flops = 5.0 * 128 * 128;
  RunProblem(state, p);
}
void BM_LayerNorm_128x256(benchmark::State& state) {
  Problem p;
  p.req.op = OpKind::kLayerNormalization;
  p.req.label = "LayerNormalization 'bench'";
  p.inputs = {RandomTensor({128, 256}, 7), RandomTensor({256}, 8), RandomTensor({256}, 9)};
  p.req.inputs = {Desc({128, 256}), Desc({256}), Desc({256})};
  p.req.constants = {nullptr, &p.inputs[1], &p.inputs[2]};
  p.req.outputs = {Desc({128, 256})};
  p.flops = 8.0 * 128 * 256;
  RunProblem(state, p);
}

// Sigmoid over n floats (the costly half of SiLU, efficientnet's activation).
// 64K floats stay in L2; 1.2M (efficientnet_b0's 96x112x112 expand output) do not.
void BM_Sigmoid(benchmark::State& state) {
  const int64_t n = state.range(1);
  Problem p;
  p.req.op = OpKind::kSigmoid;
  p.req.label = "Sigmoid 'bench'";
  p.inputs = {RandomTensor({n}, 13)};
  for (int64_t i = 0; i < n; ++i) p.inputs[0].data<float>()[i] *= 8.f;
  p.req.inputs = {Desc({n})};
  p.req.constants = {nullptr};
  p.req.outputs = {Desc({n})};
  p.flops = static_cast<double>(n);  // counted as one operation per element: G elements/s
  RunProblem(state, p);
}

// The int8 kernels' requantization (int32 accumulators to u8, per-channel multipliers) of
// `rows` pixels of `channels`: 682 rows of 96 (256 KiB of accumulators, a band in L2),
// 12544 of 96 (mobilenet_v2's 112x112 expand layer, 4.8 MB), and narrow layers (16: the
// 112x112 stem of mobilenet_v3_small, 48, 24). Counter: G outputs/s.
void BM_Requant(benchmark::State& state) {
  const int64_t rows = state.range(0), channels = state.range(1);
  std::vector<float> w_scale(channels, 0.01f);
  std::vector<int32_t> bias(channels, 100);
  auto rq = cpu::MakeInt8Requant(Attributes(), "bench", 0.02f, w_scale, channels, 0.5f, 3, DType::kU8, bias.data());
  if (!rq.ok()) {
    state.SkipWithError(rq.status().message().c_str());
    return;
  }
  std::vector<int32_t> acc(rows * channels);
  std::mt19937 rng(5);
  for (int32_t& a : acc) a = static_cast<int32_t>(rng() % 20000) - 10000;
  std::vector<uint8_t> y(rows * channels);
  for (auto _ : state) {
    rq->Run(acc.data(), channels, 0, rows, y.data(), channels, 1);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP"] = benchmark::Counter(static_cast<double>(rows * channels) * 1e-9,
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(cpu::VectorIsa()));
}

// C = A x B, all n x n row-major, with oneDNN's sgemm (threads through OpenMP).
void BM_GemmPeak(benchmark::State& state) {
  const int64_t n = 2048;
  cpu::SetThreads(static_cast<int>(state.range(0)));
  omp_set_num_threads(static_cast<int>(state.range(0)));
  Tensor a = RandomTensor({n, n}, 11), b = RandomTensor({n, n}, 12), c(DType::kF32, {n, n});
  for (auto _ : state) {
    dnnl_status_t st = dnnl_sgemm('N', 'N', n, n, n, 1.f, a.data<float>(), n, b.data<float>(), n, 0.f,
                                  c.data<float>(), n);
    if (st != dnnl_success) {
      state.SkipWithError("dnnl_sgemm failed");
      return;
    }
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP"] = benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("onednn sgemm 2048^3");
}

BENCHMARK(BM_GemmPeak)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_Conv3x3_64x64_56)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_Conv3x3_64x64_56_RowMajor)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_Conv1x1_RowMajor)->Args({1, 116, 14})->Args({1, 232, 7})->Args({1, 24, 56})->Args({1, 64, 16})
    ->ArgNames({"threads", "c", "hw"})->UseRealTime();
BENCHMARK(BM_Conv3x3_RowMajor)->Args({1, 96, 32, 64})->Args({1, 32, 32, 64})->Args({1, 192, 64, 32})
    ->Args({1, 64, 64, 32})->ArgNames({"threads", "cin", "cout", "hw"})->UseRealTime();
BENCHMARK(BM_Conv3x3_Nhwc)->Args({1, 64, 256, 13})->Args({1, 32, 128, 27})->Args({1, 64, 64, 56})
    ->Args({1, 128, 128, 28})->Args({1, 256, 256, 14})->ArgNames({"threads", "cin", "cout", "hw"})->UseRealTime();
BENCHMARK(BM_Conv3x3s2_Nhwc)->Args({1, 32, 64, 64})->Args({1, 64, 64, 32})->Args({1, 64, 128, 16})
    ->Args({1, 64, 128, 56})->ArgNames({"threads", "cin", "cout", "hw"})->UseRealTime();
BENCHMARK(BM_Depthwise3x3_144_56)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_MatMul_1024)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_MatMul_128x256x256)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_Softmax_128x128)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_LayerNorm_128x256)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_Requant)->Args({682, 96})->Args({12544, 96})->Args({12544, 16})->Args({3136, 48})->Args({3136, 24})->ArgNames({"rows", "channels"})->UseRealTime();
BENCHMARK(BM_Sigmoid)->Args({1, 65536})->Args({1, 1204224})->Args({2, 1204224})->ArgNames({"threads", "n"})
    ->UseRealTime();

}  // namespace
}  // namespace edgec

int main(int argc, char** argv) {
  edgec::driver::ApplyCpuIsaFromEnvironment();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
