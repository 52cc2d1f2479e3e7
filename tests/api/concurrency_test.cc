// One model shared by many threads, each running its own Session (the execution context):
// every output of every run must equal, bit for bit, what one thread alone computes for the
// same input. 8 threads x 200 runs on a float Model (each session's CPU plan), 8 x 25 on a
// CompiledModel's int8 CPU device (its kernels cost ~8x a float run) and 8 x 4 on the simulated
// NPU (a cycle-level model). Run also under the thread sanitizer:
// `make test SANITIZE=thread` (scripts/sanitize.sh). Only include/edgec/ and libedgec.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "edgec/edgec.h"

namespace {

const std::string kZoo = EDGEC_TEST_ZOO;
// The smallest zoo CNN (a 224x224 image, ~60 M multiply-adds): 1600 runs fit the suite's time,
// and under the thread sanitizer too.
const std::string kModel = kZoo + "/mobilenet_v3_small/model.onnx";
constexpr int kThreads = 8;
constexpr int kRuns = 200;
constexpr int kImages = 4;  // each thread cycles through these, starting at its own offset

const std::vector<std::vector<float>>& Images() {
  static const std::vector<std::vector<float>> images = [] {
    std::vector<std::vector<float>> r;
    for (int s = 0; s < kImages; ++s) {
      std::mt19937 rng(100 + s);
      std::uniform_real_distribution<float> u(-1.f, 1.f);
      std::vector<float> v(3 * 224 * 224);
      for (auto& x : v) x = u(rng);
      r.push_back(std::move(v));
    }
    return r;
  }();
  return images;
}

edgec::TensorView Image(int i) {
  return edgec::TensorView(edgec::DataType::kF32, {1, 3, 224, 224}, Images()[i].data());
}

using Bytes = std::vector<uint8_t>;

// All outputs of one run, concatenated as bytes.
Bytes Flatten(const std::vector<edgec::NamedTensor>& outs) {
  Bytes b;
  for (const auto& o : outs) {
    const auto* p = static_cast<const uint8_t*>(o.tensor.data());
    b.insert(b.end(), p, p + o.tensor.nbytes());
  }
  return b;
}

// Runs `make_session()` once per thread, `runs` inferences each, and counts runs whose outputs
// differ from `expected[image]`; `ok_runs` counts the runs that succeeded.
template <typename MakeSession>
void RunConcurrently(MakeSession make_session, const std::string& input, const std::vector<Bytes>& expected,
                     int runs, std::atomic<int>& ok_runs, std::atomic<int>& mismatches) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto s = make_session();
      if (!s.ok()) return;
      for (int r = 0; r < runs; ++r) {
        const int image = (t + r) % kImages;
        auto y = s->Run({{input, Image(image)}});
        if (!y.ok()) return;
        ok_runs.fetch_add(1);
        if (Flatten(*y) != expected[image]) mismatches.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
}

edgec::Model Load() {
  auto m = edgec::Model::Load(kModel);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

TEST(Concurrency, SharedModelEightThreadsEqualOneThread) {
  const edgec::Model m = Load();
  const std::string input = m.inputs()[0].name;
  const edgec::SessionOptions opt{.threads = 1, .profiling = false};
  std::vector<Bytes> expected;
  {
    auto alone = edgec::Session::Create(m, opt);
    ASSERT_TRUE(alone.ok()) << alone.status().ToString();
    for (int i = 0; i < kImages; ++i) {
      auto y = alone->Run({{input, Image(i)}});
      ASSERT_TRUE(y.ok()) << y.status().ToString();
      expected.push_back(Flatten(*y));
    }
  }
  ASSERT_NE(expected[0], expected[1]);  // the images give different outputs: a mix-up would show
  std::atomic<int> ok_runs{0}, mismatches{0};
  RunConcurrently([&] { return edgec::Session::Create(m, opt); }, input, expected, kRuns, ok_runs, mismatches);
  EXPECT_EQ(ok_runs.load(), kThreads * kRuns);
  EXPECT_EQ(mismatches.load(), 0);
}

// The compiled (int8) model, made once from the float one, shared by every thread.
const edgec::CompiledModel& Compiled() {
  static edgec::CompiledModel* c = [] {
    edgec::Model m = Load();
    std::vector<edgec::Sample> calib;
    for (int i = 0; i < kImages; ++i) calib.push_back({{m.inputs()[0].name, Image(i)}});
    edgec::Status st = m.Quantize(calib, {.method = "minmax", .per_channel = true, .dtype = edgec::DataType::kI8});
    EXPECT_TRUE(st.ok()) << st.ToString();
    auto compiled = edgec::CompiledModel::Compile(m);
    EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
    return new edgec::CompiledModel(std::move(compiled).value());
  }();
  return *c;
}

void CompiledCase(edgec::Device device, int runs) {
  const edgec::CompiledModel& c = Compiled();
  const edgec::SessionOptions opt{.device = device, .threads = 1, .profiling = false};
  auto alone = edgec::Session::Create(c, opt);
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  const std::string input = alone->inputs()[0].name;
  std::vector<Bytes> expected;
  for (int i = 0; i < kImages; ++i) {
    auto y = alone->Run({{input, Image(i)}});
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    expected.push_back(Flatten(*y));
  }
  ASSERT_NE(expected[0], expected[1]);
  std::atomic<int> ok_runs{0}, mismatches{0};
  RunConcurrently([&] { return edgec::Session::Create(c, opt); }, input, expected, runs, ok_runs, mismatches);
  EXPECT_EQ(ok_runs.load(), kThreads * runs);
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Concurrency, SharedCompiledModelCpuEightThreadsEqualOneThread) { CompiledCase(edgec::Device::kCpu, 25); }

TEST(Concurrency, SharedCompiledModelNpuSimEightThreadsEqualOneThread) { CompiledCase(edgec::Device::kNpuSim, 4); }

}  // namespace
