// The public C++ API (include/edgec/), seen as an application sees it: this file includes
// only edgec/ headers and links only libedgec (CMakeLists.txt: edgec_api_tests).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <unistd.h>

#include "edgec/edgec.h"

namespace {

const std::string kZoo = EDGEC_TEST_ZOO;
const std::string kModel = kZoo + "/squeezenet1_1/model.onnx";

// A file in the temporary folder of this process alone: suites of other build folders run
// the same tests at the same time.
std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)).string();
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// The input data of the tests: four seeded images [1, 3, 224, 224].
const std::vector<std::vector<float>>& Images() {
  static const std::vector<std::vector<float>> images = [] {
    std::vector<std::vector<float>> r;
    for (uint32_t s = 0; s < 4; ++s) r.push_back(Random(3 * 224 * 224, 11 + s));
    return r;
  }();
  return images;
}

edgec::TensorView Image(size_t i) {
  return edgec::TensorView(edgec::DataType::kF32, {1, 3, 224, 224}, Images()[i].data());
}

edgec::Model LoadOrDie(const std::string& path) {
  auto m = edgec::Model::Load(path);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

std::vector<float> Floats(const edgec::TensorView& t) {
  const float* p = t.data_as<float>();
  return std::vector<float>(p, p + t.numel());
}

// The zoo model quantized on the seeded images and compiled for edge-default, made once.
const edgec::CompiledModel& Compiled() {
  static edgec::CompiledModel* c = [] {
    edgec::Model m = LoadOrDie(kModel);
    std::vector<edgec::Sample> calib;
    for (size_t i = 0; i < Images().size(); ++i) calib.push_back({{m.inputs()[0].name, Image(i)}});
    edgec::Status st = m.Quantize(calib, {.method = "minmax", .per_channel = true, .dtype = edgec::DataType::kI8});
    EXPECT_TRUE(st.ok()) << st.ToString();
    auto compiled = edgec::CompiledModel::Compile(m);
    EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
    return new edgec::CompiledModel(std::move(compiled).value());
  }();
  return *c;
}

TEST(ApiModel, LoadsInputsAndOutputs) {
  edgec::Model m = LoadOrDie(kModel);
  ASSERT_EQ(m.inputs().size(), 1u);
  EXPECT_EQ(m.inputs()[0].dtype, edgec::DataType::kF32);
  EXPECT_EQ(m.inputs()[0].dims, (std::vector<int64_t>{1, 3, 224, 224}));
  ASSERT_EQ(m.outputs().size(), 1u);
  EXPECT_EQ(m.outputs()[0].dims.back(), 1000);
  EXPECT_FALSE(m.quantized());
  EXPECT_GT(m.node_count(), 10);
}

TEST(ApiModel, MissingFileNamesThePath) {
  auto m = edgec::Model::Load("/nonexistent/model.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("/nonexistent/model.onnx"), std::string::npos) << m.status().message();
}

TEST(ApiModel, BytesAreNotOnnx) {
  const char junk[] = "this is not a model";
  auto m = edgec::Model::FromBytes(junk, sizeof junk, "junk.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), edgec::StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("junk.onnx"), std::string::npos);
}

TEST(ApiSession, FromBytesRunsAsFromFile) {
  std::ifstream in(kModel, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  auto from_bytes = edgec::Model::FromBytes(bytes.data(), bytes.size());
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status().ToString();
  auto a = edgec::Session::Create(*from_bytes);
  auto b = edgec::Session::Create(LoadOrDie(kModel));
  ASSERT_TRUE(a.ok() && b.ok());
  auto ya = a->Run({{"input", Image(0)}});
  auto yb = b->Run({{"input", Image(0)}});
  ASSERT_TRUE(ya.ok()) << ya.status().ToString();
  ASSERT_TRUE(yb.ok()) << yb.status().ToString();
  EXPECT_EQ(Floats((*ya)[0].tensor), Floats((*yb)[0].tensor));
}

// Optimization keeps the numbers: -O0 and -O3 CPU plans agree within float rounding.
TEST(ApiSession, OptimizeKeepsOutputs) {
  edgec::Model m = LoadOrDie(kModel);
  edgec::Model o = m.Clone();
  ASSERT_TRUE(o.Optimize(3).ok());
  EXPECT_LT(o.node_count(), m.node_count());
  auto s0 = edgec::Session::Create(m, {.opt_level = 0});
  auto s3 = edgec::Session::Create(o, {.opt_level = 3});
  ASSERT_TRUE(s0.ok() && s3.ok());
  const std::string in = m.inputs()[0].name;
  auto y0 = s0->Run({{in, Image(1)}});
  auto y3 = s3->Run({{in, Image(1)}});
  ASSERT_TRUE(y0.ok() && y3.ok());
  const auto a = Floats((*y0)[0].tensor), b = Floats((*y3)[0].tensor);
  ASSERT_EQ(a.size(), 1000u);
  double worst = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, double(std::fabs(a[i] - b[i])));
    scale = std::max(scale, double(std::fabs(a[i])));
  }
  EXPECT_LT(worst, 1e-3 * std::max(scale, 1.0));
}

// Two sessions with different thread counts, run interleaved: each gives the same outputs
// as when it runs alone, and they agree with each other.
TEST(ApiSession, SessionsDoNotInterfere) {
  edgec::Model m = LoadOrDie(kModel);
  auto one = edgec::Session::Create(m, {.threads = 1});
  auto two = edgec::Session::Create(m, {.threads = 2, .tuning = {.winograd = false}});
  ASSERT_TRUE(one.ok() && two.ok());
  auto a1 = one->Run({{"input", Image(2)}});
  auto b1 = two->Run({{"input", Image(3)}});
  auto a2 = one->Run({{"input", Image(2)}});
  auto b2 = two->Run({{"input", Image(3)}});
  ASSERT_TRUE(a1.ok() && b1.ok() && a2.ok() && b2.ok());
  EXPECT_EQ(Floats((*a1)[0].tensor), Floats((*a2)[0].tensor));
  EXPECT_EQ(Floats((*b1)[0].tensor), Floats((*b2)[0].tensor));
  EXPECT_NE(Floats((*a1)[0].tensor), Floats((*b1)[0].tensor));
}

TEST(ApiSession, BadInputNamesTheInput) {
  auto s = edgec::Session::Create(LoadOrDie(kModel));
  ASSERT_TRUE(s.ok());
  auto y = s->Run({{"pixels", Image(0)}});
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("pixels"), std::string::npos) << y.status().message();
  std::vector<float> small(3 * 8 * 8);
  auto z = s->Run({{"input", edgec::TensorView(edgec::DataType::kF32, {1, 3, 8}, small.data())}});
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find("input"), std::string::npos) << z.status().message();
}

TEST(ApiSession, OutputsOwnTheirMemoryAndProfileNamesNodes) {
  edgec::Model m = LoadOrDie(kModel);
  auto s = edgec::Session::Create(m);
  ASSERT_TRUE(s.ok());
  auto y = s->Run({{"input", Image(0)}});
  ASSERT_TRUE(y.ok());
  ASSERT_EQ(y->size(), 1u);
  EXPECT_EQ((*y)[0].name, m.outputs()[0].name);
  EXPECT_TRUE((*y)[0].tensor.owns_data());
  const edgec::Profile& p = s->profile();
  ASSERT_FALSE(p.nodes.empty());
  double sum = 0;
  int convs = 0;
  for (const auto& n : p.nodes) {
    sum += n.seconds;
    convs += n.op.find("Conv") != std::string::npos;
    EXPECT_FALSE(n.kernel.empty()) << n.node;
  }
  EXPECT_GT(convs, 0);
  EXPECT_GT(sum, 0);
  EXPECT_LE(sum, p.total_seconds * 1.01);
}

TEST(ApiCompile, FloatModelIsRefused) {
  auto c = edgec::CompiledModel::Compile(LoadOrDie(kModel));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("quantize"), std::string::npos) << c.status().message();
}

TEST(ApiCompile, PlacementsNameEveryNodeWithAReason) {
  const edgec::CompiledModel& c = Compiled();
  EXPECT_EQ(c.target_name(), "edge-default");
  int npu = 0;
  for (const auto& p : c.placements()) {
    npu += p.unit == edgec::Unit::kNpu;
    EXPECT_FALSE(p.reason.empty()) << p.node;
    EXPECT_FALSE(p.op.empty()) << p.node;
  }
  EXPECT_GT(npu, 0);
  EXPECT_GE(c.npu_segment_count(), 1);
  EXPECT_NE(c.PlacementReport().find("on the NPU"), std::string::npos);
}

// The project's invariant through the API: npu-sim equals cpu bit for bit, and a saved and
// reloaded file runs the same.
TEST(ApiCompile, NpuSimEqualsCpuAndSaveLoadKeepsIt) {
  const edgec::CompiledModel& c = Compiled();
  auto npu = edgec::Session::Create(c, {.device = edgec::Device::kNpuSim});
  auto cpu = edgec::Session::Create(c, {.device = edgec::Device::kCpu});
  ASSERT_TRUE(npu.ok() && cpu.ok());
  auto yn = npu->Run({{"input", Image(0)}});
  auto yc = cpu->Run({{"input", Image(0)}});
  ASSERT_TRUE(yn.ok()) << yn.status().ToString();
  ASSERT_TRUE(yc.ok()) << yc.status().ToString();
  const auto& tn = (*yn)[0].tensor;
  const auto& tc = (*yc)[0].tensor;
  ASSERT_EQ(tn.dims(), tc.dims());
  ASSERT_EQ(tn.nbytes(), tc.nbytes());
  EXPECT_EQ(std::memcmp(tn.data(), tc.data(), tn.nbytes()), 0);

  const edgec::Profile& p = npu->profile();
  EXPECT_TRUE(p.simulated);
  EXPECT_GT(p.npu_cycles, 0);
  double cycles = 0;
  for (const auto& n : p.nodes)
    if (n.unit == edgec::Unit::kNpu) cycles += n.cycles;
  EXPECT_GT(cycles, 0);
  // The nodes' seconds add up to the latency at most (NPU layers split the intervals they share).
  double seconds = 0;
  for (const auto& n : p.nodes) seconds += n.seconds;
  EXPECT_LE(seconds, p.total_seconds * (1 + 1e-9));

  const std::string path = TempPath("edgec_api_test.edgec");
  ASSERT_TRUE(c.Save(path).ok());
  auto loaded = edgec::CompiledModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  // The file keeps each node's unit, reason and reason code; the MACs are counted again from
  // its graph as the partitioner counted them.
  const auto before = c.placements(), after = loaded->placements();
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].node, before[i].node);
    EXPECT_EQ(after[i].unit, before[i].unit) << after[i].node;
    EXPECT_EQ(after[i].code, before[i].code) << after[i].node;
    EXPECT_FALSE(after[i].code.empty()) << after[i].node;
    EXPECT_EQ(after[i].macs, before[i].macs) << after[i].node;
  }
  const auto segs = loaded->segments();
  ASSERT_EQ(static_cast<int>(segs.size()), loaded->segment_count());
  size_t nodes = 0;
  int npu_segs = 0;
  for (const edgec::SegmentInfo& s : segs) {
    nodes += s.nodes.size();
    if (s.unit != edgec::Unit::kNpu) continue;
    ++npu_segs;
    EXPECT_GT(s.npu_program_bytes, 0);
    EXPECT_GT(s.npu_constant_bytes, 0);
    EXPECT_GT(s.npu_layers, 0);
    EXPECT_GT(s.sram_peak, 0);
  }
  EXPECT_EQ(nodes, after.size());
  EXPECT_EQ(npu_segs, loaded->npu_segment_count());
  EXPECT_EQ(loaded->source_model(), c.source_model());
  auto again = edgec::Session::Create(*loaded, {.device = edgec::Device::kNpuSim});
  ASSERT_TRUE(again.ok());
  auto ya = again->Run({{"input", Image(0)}});
  ASSERT_TRUE(ya.ok());
  EXPECT_EQ(std::memcmp((*ya)[0].tensor.data(), tn.data(), tn.nbytes()), 0);
  std::filesystem::remove(path);
}

// libedgec_runtime (no compiler, no protobuf) loads the saved file and runs it as libedgec does
// (tests/api/runtime_test.cc: npu-sim == cpu there too).
TEST(ApiRuntime, RunsAsTheFullLibrary) {
  const std::string model = TempPath("edgec_api_runtime.edgec"), out = TempPath("edgec_api_runtime.bin");
  ASSERT_TRUE(Compiled().Save(model).ok());
  const std::string cmd = std::string(EDGEC_RUNTIME_TEST) + " " + model + " " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<float> x(3 * 224 * 224);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(static_cast<double>(i) * 0.001));
  auto s = edgec::Session::Create(Compiled(), {.device = edgec::Device::kNpuSim});
  ASSERT_TRUE(s.ok());
  auto y = s->Run({{"input", edgec::TensorView(edgec::DataType::kF32, {1, 3, 224, 224}, x.data())}});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  const edgec::TensorView& t = (*y)[0].tensor;
  std::ifstream in(out, std::ios::binary);
  std::vector<char> got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(got.size(), t.nbytes());
  EXPECT_EQ(std::memcmp(got.data(), t.data(), t.nbytes()), 0);
  std::filesystem::remove(model);
  std::filesystem::remove(out);
}

TEST(ApiCompile, LoadRefusesAFileThatIsNoCompiledModel) {
  auto c = edgec::CompiledModel::Load(kModel);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("model.onnx"), std::string::npos) << c.status().message();
}

TEST(ApiTarget, OverridesAndJson) {
  auto t = edgec::Target::Load("edge-default");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->name(), "edge-default");
  const std::string before = t->ToJson();
  ASSERT_TRUE(t->Set("shared_sram.bytes=512K").ok());
  EXPECT_NE(t->ToJson(), before);
  EXPECT_NE(t->ToJson().find("524288"), std::string::npos);
  edgec::Status bad = t->Set("no_such_field=1");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("no_such_field"), std::string::npos) << bad.message();
  auto round = edgec::Target::FromJson(t->ToJson());
  ASSERT_TRUE(round.ok()) << round.status().ToString();
  EXPECT_EQ(round->ToJson(), t->ToJson());
  EXPECT_FALSE(edgec::Target::FromJson("{ not json").ok());
  EXPECT_FALSE(edgec::Target::Load("no-such-target").ok());
}

// The C program (tests/api/c_api_test.c) and this API agree bit for bit on the same input
// and options (x[i] = sin(i * 0.001), one thread, -O3).
TEST(ApiC, MatchesTheCppApi) {
  const std::string out = TempPath("edgec_c_api_test.bin");
  std::filesystem::remove(out);
  const std::string cmd = std::string(EDGEC_C_API_TEST) + " " + kModel + " " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out, std::ios::binary);
  std::vector<float> from_c(1000);
  in.read(reinterpret_cast<char*>(from_c.data()), 1000 * sizeof(float));
  ASSERT_TRUE(in.good());
  std::vector<float> x(3 * 224 * 224);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(static_cast<double>(i) * 0.001));
  auto s = edgec::Session::Create(LoadOrDie(kModel), {.threads = 1});
  ASSERT_TRUE(s.ok());
  auto y = s->Run({{"input", edgec::TensorView(edgec::DataType::kF32, {1, 3, 224, 224}, x.data())}});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(Floats((*y)[0].tensor), from_c);
  std::filesystem::remove(out);
}

TEST(ApiSession, NpuSimNeedsACompiledModel) {
  auto s = edgec::Session::Create(LoadOrDie(kModel), {.device = edgec::Device::kNpuSim});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("compile"), std::string::npos);
}

}  // namespace

// The environment's tuning leaves the one-thread bound to each session (0), which takes 2^23
// under OMP_WAIT_POLICY=passive (the CLI's choice on a busy machine) and 2^20 otherwise;
// a copy of the kernels' default here kept `edgec bench` at 2^20 under passive.
TEST(ApiSession, TuningFromTheEnvironmentLeavesTheThreadBoundToTheSession) {
  EXPECT_EQ(edgec::KernelTuningFromEnvironment().min_parallel_macs, 0);
  EXPECT_TRUE(edgec::KernelTuningFromEnvironment().winograd);
}
