// What `edgec run` shares between an ONNX model (run.cc) and a compiled one
// (run_compiled.cc): its flags, the summary of each output, the .npy files, the --json form.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "edgec/profile.h"
#include "edgec/status.h"
#include "edgec/tensor.h"

namespace edgec::cli {

struct RunFlags {
  std::vector<std::string> freeze;  // --freeze NAME=VALUE (ONNX models)
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::string output_dir;
  uint64_t seed = 0;
  int top = 5;
  int level = -1;  // -O not given: 3 for the CPU plan, 0 with --reference
  std::string passes;
  int threads = 0;
  bool reference = false;
  bool measure_cpu = false;
  bool int8 = false;
  bool fixed_point = false;
  bool verbose = false;
  bool quiet = false;
  bool json = false;
  std::string device;
  std::string report;
};

// Runs a compiled model file (.edgec) on npu-sim or the CPU.
int RunCompiled(const RunFlags& f);

// One summary line per output plus its `top` largest values (e.g. the top classes).
void PrintOutput(const std::string& name, const TensorView& t, int top);

// --json: an output's name, type, dims and the same figures as PrintOutput.
nlohmann::json OutputJson(const std::string& name, const TensorView& t, int top);
// --json: the inputs, each with how it was made (a file or seeded random data).
nlohmann::json InputsJson(const std::map<std::string, TensorView>& inputs, const std::vector<std::string>& random,
                          uint64_t seed);
// --json: the profile's per-node rows (unit, kernel, ms, cycles, bytes).
nlohmann::json NodesJson(const Profile& p);

// Writes `<output name>.npy` per output into `dir` (created); fails naming the file, or two
// outputs whose file names collide.
Status WriteOutputs(const std::string& dir, const std::vector<NamedTensor>& outputs);

}  // namespace edgec::cli
