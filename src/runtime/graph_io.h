// ir::Graph to bytes and back (src/runtime/graph.fbs): the compiled model file's graph, read
// without the ONNX importer, so a runtime that only loads and runs `.edgec` files needs no
// protobuf (libedgec_runtime). Everything the graph holds round-trips — names, types, symbolic
// dim names, quantization parameters, attributes, provenance, constants — except the physical
// layout annotations (the compiled graph is the integer graph before any layout pass).
// tests/runtime/graph_io_test.cc: RoundTripsEveryField, CompiledZooGraphRunsTheSame,
// DamagedBytesFail.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace edgec::graph_io {

std::vector<uint8_t> SerializeGraph(const Graph& g);

// Verifies the bytes (offsets, file identifier), rebuilds the graph and checks it
// (ir::Verify); `what` names the file in messages.
StatusOr<Graph> DeserializeGraph(std::span<const uint8_t> bytes, const std::string& what);

// The graph of a format-2 compiled model, stored as ONNX (runtime/artifact_onnx_graph.cc; a
// runtime without the ONNX importer says the file must be recompiled instead).
StatusOr<Graph> ImportOnnxGraph(std::span<const uint8_t> onnx_bytes, const std::string& what);

}  // namespace edgec::graph_io
