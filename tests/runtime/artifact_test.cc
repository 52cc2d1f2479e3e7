#include "runtime/artifact.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace edgec::artifact_io {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("edgec_artifact_test_" + name)).string();
}

CompiledModel Sample() {
  CompiledModel m;
  m.producer = "edgec test";
  m.source_model = "model.onnx";
  m.target_json = R"({"name": "edge-default"})";
  std::mt19937 rng(3);
  for (int i = 0; i < 5000; ++i) m.graph_onnx.push_back(static_cast<uint8_t>(rng()));
  Segment cpu;
  cpu.unit = Unit::kCpu;
  cpu.nodes = {"softmax"};
  cpu.inputs = {"logits"};
  cpu.outputs = {"probs"};
  Segment npu;
  npu.unit = Unit::kNpu;
  npu.nodes = {"conv1", "conv2"};
  npu.inputs = {"x"};
  npu.outputs = {"logits"};
  npu.npu.instructions = {1, 2, 3, 250, 7};
  npu.npu.task_names = {"conv1 (QLinearConv)", "conv2 (QLinearConv)"};
  npu.npu.regions = {{"x", 0, 3072}, {"conv1.w", 4096, 864}};
  npu.npu.dram_bytes = 1 << 20;
  for (int i = 0; i < 999; ++i) npu.npu.dram_init.push_back(static_cast<uint8_t>(i * 7));
  npu.npu.cores_used = 16;
  npu.npu.semaphores = 6;
  m.segments = {npu, cpu};
  m.placements = {{"conv1", Unit::kNpu, ""}, {"softmax", Unit::kCpu, "unsupported op Softmax"}};
  m.arena_bytes = 123456;
  m.values = {{"logits", 64, 4000}};
  return m;
}

TEST(Artifact, RoundTripsThroughAMappedFile) {
  const std::string path = TempPath("roundtrip.edgec");
  const CompiledModel m = Sample();
  ASSERT_TRUE(WriteArtifact(path, m).ok());
  auto a = MappedArtifact::Open(path);
  ASSERT_TRUE(a.ok()) << a.status().message();
  auto g = (*a)->graph_onnx();
  ASSERT_EQ(g.size(), m.graph_onnx.size());
  EXPECT_TRUE(std::equal(g.begin(), g.end(), m.graph_onnx.begin()));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(g.data()) % 32, 0u) << "weights must be aligned in the mapping";
  auto init = (*a)->npu_dram_init(0);
  ASSERT_EQ(init.size(), 999u);
  EXPECT_EQ(init[10], 70);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(init.data()) % 32, 0u);
  EXPECT_TRUE((*a)->npu_dram_init(1).empty());
  CompiledModel back = (*a)->Metadata();
  EXPECT_EQ(back.producer, m.producer);
  EXPECT_EQ(back.target_json, m.target_json);
  ASSERT_EQ(back.segments.size(), 2u);
  EXPECT_EQ(back.segments[0].unit, Unit::kNpu);
  EXPECT_EQ(back.segments[0].nodes, m.segments[0].nodes);
  EXPECT_EQ(back.segments[0].npu.instructions, m.segments[0].npu.instructions);
  EXPECT_EQ(back.segments[0].npu.task_names, m.segments[0].npu.task_names);
  ASSERT_EQ(back.segments[0].npu.regions.size(), 2u);
  EXPECT_EQ(back.segments[0].npu.regions[1].addr, 4096);
  EXPECT_EQ(back.segments[0].npu.cores_used, 16);
  EXPECT_EQ(back.segments[1].outputs, m.segments[1].outputs);
  ASSERT_EQ(back.placements.size(), 2u);
  EXPECT_EQ(back.placements[1].reason, "unsupported op Softmax");
  EXPECT_EQ(back.arena_bytes, 123456);
  ASSERT_EQ(back.values.size(), 1u);
  EXPECT_EQ(back.values[0].bytes, 4000);
  std::filesystem::remove(path);
}

TEST(Artifact, DamagedOrForeignFilesAreRefusedWithTheReason) {
  const std::string path = TempPath("damaged.edgec");
  ASSERT_TRUE(WriteArtifact(path, Sample()).ok());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
  };
  write(bytes.substr(0, bytes.size() / 2));  // truncated
  auto a = MappedArtifact::Open(path);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("damaged"), std::string::npos) << a.status().message();

  std::string flipped = bytes;  // one bit of the graph's weights
  flipped[bytes.size() / 3] ^= 0x10;
  write(flipped);
  a = MappedArtifact::Open(path);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("checksum does not match"), std::string::npos) << a.status().message();

  write(std::string("\x08\x00\x00\x00ONNX", 8) + std::string(100, 'x'));  // foreign identifier
  a = MappedArtifact::Open(path);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("not an edgec compiled model"), std::string::npos) << a.status().message();

  write("EDGC");  // too short
  a = MappedArtifact::Open(path);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("too short"), std::string::npos);

  a = MappedArtifact::Open(TempPath("does_not_exist.edgec"));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("cannot open"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(Artifact, AFailedWriteKeepsTheExistingFile) {
  const std::string dir = TempPath("dir_as_target");
  std::filesystem::create_directories(dir);
  // Renaming onto a directory fails: the write must report it and leave no temporary.
  Status st = WriteArtifact(dir, Sample());
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(std::filesystem::exists(dir + ".tmp"));
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace edgec::artifact_io
