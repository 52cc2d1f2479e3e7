// A graph compiled for an NPU target, written to a temporary .edgec and loaded back: what the
// compiled-model tests (CPU segments, NPU segments, profile, trace, diff) run. The file is
// removed when the CompiledArtifact goes.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "lower/npu_compile.h"
#include "runtime/artifact_run.h"

namespace edgec::testing_compiled {

struct CompiledArtifact {
  std::string path;
  std::vector<partition::NodePlacement> placements;
  std::unique_ptr<artifact_io::MappedArtifact> file;
  LoadedArtifact loaded;
  ~CompiledArtifact() {
    if (!path.empty()) std::filesystem::remove(path);
  }
};

// Null (after a test failure) when compiling, writing or loading fails.
inline std::unique_ptr<CompiledArtifact> CompileAndLoad(const Graph& g, const npu::Target& t, const std::string& tag,
                                                        const partition::PartitionOptions& o) {
  auto c = std::make_unique<CompiledArtifact>();
  c->path = (std::filesystem::temp_directory_path() / ("edgec_test_" + tag + ".edgec")).string();
  auto r = lower::CompileGraph(g, t, tag, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return nullptr;
  c->placements = r->placements;
  const Status written = artifact_io::WriteArtifact(c->path, r->model);
  EXPECT_TRUE(written.ok()) << written.ToString();
  if (!written.ok()) return nullptr;
  auto m = artifact_io::MappedArtifact::Open(c->path);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return nullptr;
  c->file = std::move(*m);
  auto l = LoadArtifact(*c->file);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  if (!l.ok()) return nullptr;
  c->loaded = std::move(*l);
  return c;
}

}  // namespace edgec::testing_compiled
