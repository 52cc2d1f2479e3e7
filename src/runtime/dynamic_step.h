// DynamicStep: one node of a plan's dynamic part (runtime/plan.h), run on a fast kernel made
// for the shapes its inputs have at run time, its outputs allocated then.
//
// - Outputs whose shapes follow from the input shapes and small values (at most 64
//   elements: a Reshape's target, a Gather's indices): the fast kernel for those shapes,
//   created once and kept (keyed by the input and output shapes; a kernel that bakes a
//   small value in is keyed by the value too).
// - Outputs whose sizes the data decides (NonMaxSuppression): a SizedByDataKernel
//   (kernels/cpu/kernel.h) that allocates them.
// - Control flow (If, Loop, Scan, SequenceMap): the subgraphs on fast plans
//   (runtime/subgraph_plans.h), sequence and optional values given to them included.
// - The sequence family and an Identity of a sequence: the runtime's own sequence steps
//   (runtime/sequence_step.h).
// - Otherwise the reference kernel, with the reason no fast kernel fits (kernel()).
// tests/runtime/dynamic_step_test.cc: the detector tail, a loop whose shapes change per
// iteration, and If/Loop/Scan graphs, each against the reference executor;
// tests/runtime/sequence_step_test.cc: sequences, SequenceMap and a loop carrying a sequence.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/plan.h"
#include "support/status.h"

namespace edgec {

class SubgraphPlans;

class DynamicStep {
 public:
  DynamicStep(const Node& n, const PlanOptions& options);
  ~DynamicStep();

  // The node's outputs for these inputs (nullptr: an absent optional input).
  StatusOr<std::vector<Tensor>> Run(const std::vector<const Tensor*>& inputs);

  // What the last Run ran: the fast kernel's description ("own nms f32", "subgraphs on fast
  // plans (...)") or "reference: <why no fast kernel fits>".
  const std::string& kernel() const { return kernel_; }
  // The steps of the last Run that ran reference kernels, here and in subgraph plans
  // ("Gemm '/head/Gemm' in subgraph 'then_branch': <reason>"); empty when all were fast.
  std::vector<std::string> ReferenceSteps() const;

 private:
  struct Fast {
    std::unique_ptr<cpu::Kernel> kernel;
    std::unique_ptr<cpu::SizedByDataKernel> sized;
    Tensor scratch;
    std::string refused;  // why neither fits (then the reference kernel runs)
    bool needs_values = false;  // refused without the small inputs' values: look them up
  };
  StatusOr<Fast*> FastFor(const std::vector<const Tensor*>& inputs, const std::vector<TensorType>& outputs,
                          bool outputs_known);
  StatusOr<std::vector<Tensor>> RunReference(const std::vector<const Tensor*>& inputs, const std::string& why);

  Status Choose(const std::vector<const Tensor*>& inputs);
  bool SameAsLast(const std::vector<const Tensor*>& inputs) const;
  void RememberLast(const std::vector<const Tensor*>& inputs, const std::vector<TensorType>& outputs, Fast* fast);

  const Node& node_;
  PlanOptions options_;
  // The last Run's input types and small values and what they chose: the next Run with the
  // same ones skips inference and the cache key.
  std::vector<TensorType> last_in_;
  std::vector<Tensor> last_small_;  // copies of the small inputs that are not constants
  std::vector<TensorType> last_out_;
  Fast* last_ = nullptr;
  std::map<std::string, std::unique_ptr<Fast>> cache_;
  std::unique_ptr<SubgraphPlans> subgraphs_;
  std::string kernel_;
  bool reference_ = false;
};

}  // namespace edgec
