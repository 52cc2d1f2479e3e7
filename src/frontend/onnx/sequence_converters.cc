// Converters for the optional ops whose ONNX form needs more than a one-to-one mapping:
//   Optional(x?) {type: TypeProto}  -> Optional(x?) {edgec_dtype, edgec_sequence}
// (the exporter writes `type` back: tests/frontend/sequence_test.cc: OptionalsAndExportRoundTrip).
#include "frontend/onnx/converter.h"

namespace edgec::onnx_fe {

Status ConvertOptional(ConvertContext& c) {
  Attributes a;
  for (const auto& attr : c.node().attribute()) {
    if (attr.name() != "type") return c.Error("unexpected attribute '{}'", attr.name());
    if (attr.type() != onnx::AttributeProto::TYPE_PROTO) return c.Error("attribute 'type' must be a type");
    onnx::ValueInfoProto vi;
    vi.set_name(c.node().output_size() ? c.node().output(0) : "");
    *vi.mutable_type() = attr.tp();
    auto t = TypeFromValueInfo(vi);
    if (!t.ok()) return t.status().WithContext(c.label() + ": attribute 'type'");
    if (t->optional) return c.Unsupported("attribute 'type' is an optional (optionals do not nest)");
    a.Set("edgec_dtype", static_cast<int64_t>(t->dtype));
    a.Set("edgec_sequence", static_cast<int64_t>(t->kind == ValueKind::kSequence ? 1 : 0));
  }
  std::vector<Value*> inputs;
  if (c.input(0)) inputs.push_back(c.input(0));
  if (inputs.empty() && !a.Has("edgec_dtype")) return c.Error("needs input 0 or attribute 'type'");
  c.Emit(OpKind::kOptional, std::move(inputs), std::move(a));
  return Status::Ok();
}

}  // namespace edgec::onnx_fe
