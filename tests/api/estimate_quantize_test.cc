// The public API's NPU estimates (edgec/estimate.h) and its quantization pipeline with the
// per-layer error report, the accuracy budget and int16 (edgec/model.h), as `edgec estimate`,
// `edgec sweep` and `edgec quantize` use them. Only edgec/ headers, only libedgec.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "edgec/c_api.h"
#include "edgec/edgec.h"

namespace {

namespace fs = std::filesystem;
const std::string kZoo = EDGEC_TEST_ZOO;

std::string Scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("edgec_api_eq_" + std::to_string(::getpid())) / name;
  fs::create_directories(p.parent_path());
  return p.string();
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

edgec::Model Load(const std::string& name) {
  auto m = edgec::Model::Load(kZoo + "/" + name + "/model.onnx");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

// `count` seeded samples of every input of `m` (symbolic dims 1), and the same written as a
// calibration folder (<dir>/<sample>/<input>.npy).
std::vector<edgec::Sample> Samples(const edgec::Model& m, int count, uint64_t seed, const std::string& dir) {
  std::vector<edgec::Sample> out;
  for (int i = 0; i < count; ++i) {
    edgec::Sample s;
    fs::create_directories(fs::path(dir) / ("s" + std::to_string(i)));
    for (const auto& in : m.inputs()) {
      edgec::TensorView t = edgec::RandomTensor(in.dtype, in.dims, seed + i);
      EXPECT_TRUE(edgec::WriteNpyFile(dir + "/s" + std::to_string(i) + "/" + in.name + ".npy", t).ok());
      s.emplace(in.name, t);
    }
    out.push_back(std::move(s));
  }
  return out;
}

edgec::Target EdgeDefault() {
  auto t = edgec::Target::Load("edge-default");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

TEST(ApiEstimate, LayersAddUpToTheTotal) {
  auto w = edgec::NpuWorkload::FromModel(kZoo + "/squeezenet1_1/model.onnx");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_FALSE(w->quantized());
  const edgec::Target t = EdgeDefault();
  auto e = w->Estimate(t, {.listing = true});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_GT(e->layers.size(), 10u);
  double cycles = 0;
  int64_t macs = 0;
  for (const auto& l : e->layers) {
    cycles += l.cycles * l.count;
    macs += l.macs * l.count;
    EXPECT_FALSE(l.tiling.empty()) << l.name;
    EXPECT_NE(e->listing.find("; layer " + l.name + ": "), std::string::npos) << l.name;
  }
  EXPECT_NEAR(cycles, e->cycles, 1e-6 * e->cycles);
  EXPECT_EQ(macs, e->macs);
  EXPECT_DOUBLE_EQ(e->milliseconds, e->cycles / t.clock_hz() * 1e3);
  EXPECT_NEAR(e->mac_utilization, e->macs / (e->cycles * t.peak_int8_macs_per_cycle()), 1e-12);
  EXPECT_NE(e->table.find(e->layers[0].name.substr(0, 20)), std::string::npos);
  // Single buffering can only lose time; a float model has no segment schedule.
  auto single = w->Estimate(t, {.single_buffer = true});
  ASSERT_TRUE(single.ok());
  EXPECT_GE(single->cycles, e->cycles);
  auto seg = w->EstimateSegments(t);
  ASSERT_FALSE(seg.ok());
  EXPECT_NE(seg.status().message().find("not a quantized"), std::string::npos);
}

TEST(ApiEstimate, SmallerSramIsNotFaster) {
  auto w = edgec::NpuWorkload::FromModel(kZoo + "/squeezenet1_1/model.onnx");
  ASSERT_TRUE(w.ok());
  edgec::Target small = EdgeDefault(), large = EdgeDefault();
  ASSERT_TRUE(small.Set("shared_sram.bytes=64K").ok());
  ASSERT_TRUE(large.Set("shared_sram.bytes=4M").ok());
  auto a = w->Estimate(small), b = w->Estimate(large);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(a->milliseconds, b->milliseconds);
  EXPECT_EQ(a->macs, b->macs);
}

TEST(ApiEstimate, DecoderFp16StreamsTwiceTheWeights) {
  auto int8 = edgec::NpuWorkload::FromDecoder("tiny");
  auto fp16 = edgec::NpuWorkload::FromDecoder("tiny", true);
  ASSERT_TRUE(int8.ok() && fp16.ok());
  EXPECT_NE(int8->decoder().find("layers=2"), std::string::npos) << int8->decoder();
  EXPECT_GT(int8->decoder_parameters(), 0);
  const edgec::Target t = EdgeDefault();
  auto a = int8->Estimate(t), b = fp16->Estimate(t);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->weight_bytes, 2 * a->weight_bytes);
  EXPECT_GT(b->cycles, a->cycles);
  auto bad = edgec::NpuWorkload::FromDecoder("layers=x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("layers"), std::string::npos) << bad.status().message();
}

// Quantized in memory, saved as QDQ ONNX: the estimate compiles it as CompiledModel::Compile
// does (the same number of NPU segments).
TEST(ApiEstimate, QdqModelGetsTheCompilersSchedule) {
  edgec::Model m = Load("squeezenet1_1");
  auto calib = Samples(m, 2, 5, Scratch("sq_seg_calib"));
  ASSERT_TRUE(m.Quantize(calib, {.method = "minmax"}).ok());
  const std::string path = Scratch("sq_seg.onnx");
  ASSERT_TRUE(m.SaveOnnx(path).ok());
  auto w = edgec::NpuWorkload::FromModel(path);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->quantized());
  const edgec::Target t = EdgeDefault();
  auto s = w->EstimateSegments(t);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto c = edgec::CompiledModel::Compile(m, {.target = t});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(s->segments, c->npu_segment_count());
  EXPECT_GT(s->layers, 10);
  EXPECT_GT(s->macs, 0);
  EXPECT_DOUBLE_EQ(s->milliseconds, s->cycles / t.clock_hz() * 1e3);
  edgec::Target tiny = t;
  ASSERT_TRUE(tiny.Set("shared_sram.bytes=64K").ok());
  auto spill = w->EstimateSegments(tiny);
  ASSERT_TRUE(spill.ok()) << spill.status().ToString();
  EXPECT_GT(spill->spilled_bytes, s->spilled_bytes);
}

TEST(ApiEstimate, SweepPlotNamesTheField) {
  const std::string svg = edgec::SweepSvg("shared_sram.bytes", "m on t", {{"256K", 1.5, 10}, {"1M", 1.0, 0}});
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("shared_sram.bytes"), std::string::npos);
  EXPECT_NE(svg.find("256K"), std::string::npos);
}

// One pipeline: the same samples in memory (Python's quantize) and as a folder (`edgec
// quantize --calib`) give the same QDQ model, byte for byte, and the same report.
TEST(ApiQuantize, MemoryAndFolderAgree) {
  edgec::Model a = Load("squeezenet1_1"), b = Load("squeezenet1_1");
  const std::string dir = Scratch("sq_calib");
  auto calib = Samples(a, 3, 21, dir);
  edgec::QuantizeReport ra, rb;
  const edgec::QuantizeOptions o{.method = "entropy", .dtype = edgec::DataType::kU8};
  ASSERT_TRUE(a.Quantize(calib, o, &ra).ok());
  ASSERT_TRUE(b.QuantizeFromDirectory(dir, o, 0, &rb).ok());
  ASSERT_TRUE(a.SaveOnnx(Scratch("a.onnx")).ok());
  ASSERT_TRUE(b.SaveOnnx(Scratch("b.onnx")).ok());
  EXPECT_EQ(Bytes(Scratch("a.onnx")), Bytes(Scratch("b.onnx")));
  EXPECT_EQ(ra.samples, 3);
  EXPECT_EQ(rb.samples, 3);
  EXPECT_EQ(ra.method, "entropy");
  EXPECT_EQ(ra.activation_dtype, edgec::DataType::kU8);
  EXPECT_EQ(ra.quantized_nodes, rb.quantized_nodes);
  EXPECT_EQ(ra.activation_pairs, rb.activation_pairs);
  EXPECT_GT(ra.quantized_nodes, 20);
}

// The per-layer error report ranks every quantized layer, most harmful (lowest SQNR) first; the budget
// keeps layers in float until it is met, and those layers are the ones left in float.
TEST(ApiQuantize, SensitivityAndBudget) {
  edgec::Model m = Load("squeezenet1_1");
  auto calib = Samples(m, 2, 31, Scratch("sq_budget_calib"));
  edgec::QuantizeOptions o{.method = "minmax"};
  o.sensitivity = true;
  o.accuracy_budget = 0.99999;
  o.error_samples = 1;
  edgec::QuantizeReport r;
  edgec::Status st = m.Quantize(calib, o, &r);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(r.error_samples, 1);
  ASSERT_GT(r.sensitivity.size(), 20u);
  for (size_t i = 1; i < r.sensitivity.size(); ++i)
    EXPECT_LE(r.sensitivity[i - 1].sqnr_db, r.sensitivity[i].sqnr_db) << r.sensitivity[i].layer;
  ASSERT_TRUE(r.budget.ran);
  EXPECT_EQ(r.budget.target, "edge-default");
  EXPECT_TRUE(r.budget.int16.empty());  // squeezenet has no norm or softmax
  if (r.budget.met) {
    EXPECT_GE(r.budget.mean_cosine, 0.99999);
  }
  EXPECT_GE(r.budget.mean_cosine, r.budget.int8_cosine);
  ASSERT_FALSE(r.budget.kept_float.empty()) << "all int8 already reaches " << r.budget.int8_cosine;
  for (const auto& l : r.budget.kept_float) {
    bool skipped = false;
    for (const auto& s : r.skipped) skipped |= s.find(l.node) != std::string::npos;
    EXPECT_TRUE(skipped) << l.node << " kept in float but not reported as skipped";
  }
}

TEST(ApiQuantize, Int16AllAndEval) {
  edgec::Model m = Load("transformer");
  const std::string dir = Scratch("tf_calib");
  auto calib = Samples(m, 2, 41, dir);
  edgec::QuantizeOptions o{.int16 = {"all"}};
  o.eval_dir = dir;
  edgec::QuantizeReport r;
  edgec::Status st = m.Quantize(calib, o, &r);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_GT(r.int16_pairs, 0);
  ASSERT_FALSE(r.int16_layers.empty());
  for (const auto& l : r.int16_layers)
    EXPECT_TRUE(l.rfind("Softmax", 0) == 0 || l.rfind("LayerNormalization", 0) == 0) << l;
  EXPECT_EQ(r.eval_samples, 2);
  ASSERT_EQ(r.eval.size(), m.outputs().size());
  EXPECT_GT(r.eval[0].mean_cosine, 0.9);
  EXPECT_LE(r.eval[0].min_cosine, r.eval[0].mean_cosine + 1e-12);
}

// The C API's quantize runs the same pipeline: the same folder gives the same report and
// file as the C++ call.
TEST(ApiQuantize, CApiMatchesCpp) {
  edgec::Model cpp = Load("squeezenet1_1");
  const std::string dir = Scratch("sq_c_calib");
  Samples(cpp, 2, 61, dir);
  edgec::QuantizeOptions o{.method = "minmax"};
  o.accuracy_budget = 0.5;  // met by all int8: the budget runs, keeps nothing
  o.error_samples = 1;
  edgec::QuantizeReport r;
  ASSERT_TRUE(cpp.QuantizeFromDirectory(dir, o, 0, &r).ok());
  edgec_model* c = nullptr;
  ASSERT_EQ(edgec_model_load((kZoo + "/squeezenet1_1/model.onnx").c_str(), &c), EDGEC_OK);
  edgec_quantize_options co = edgec_quantize_options_default();
  co.method = "minmax";
  co.accuracy_budget = 0.5;
  co.error_samples = 1;
  edgec_quantize_result cr;
  ASSERT_EQ(edgec_model_quantize(c, dir.c_str(), &co, &cr), EDGEC_OK) << edgec_last_error();
  EXPECT_EQ(cr.quantized_nodes, r.quantized_nodes);
  EXPECT_EQ(cr.activation_pairs, r.activation_pairs);
  EXPECT_EQ(cr.budget_met, 1);
  EXPECT_EQ(cr.kept_float, 0);
  EXPECT_DOUBLE_EQ(cr.int8_cosine, r.budget.int8_cosine);
  edgec_model_destroy(c);
}

TEST(ApiQuantize, BadOptionsNameWhatIsWrong) {
  edgec::Model m = Load("squeezenet1_1");
  auto calib = Samples(m, 1, 51, Scratch("sq_bad_calib"));
  edgec::QuantizeOptions keep{.keep_float = {"no_such_node"}};
  edgec::Status st = m.Quantize(calib, keep);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'no_such_node'"), std::string::npos) << st.message();
  edgec::QuantizeOptions nothing;
  st = m.QuantizeFromDirectory("", nothing);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("calibration"), std::string::npos) << st.message();
  edgec::QuantizeOptions scales;
  scales.scales_in = Scratch("no_such_scales.json");
  st = m.QuantizeFromDirectory("", scales);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no_such_scales.json"), std::string::npos) << st.message();
  EXPECT_FALSE(m.quantized());
}

}  // namespace
