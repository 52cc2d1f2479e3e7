// Decoder configs, layer lists and the per-layer estimate table.
#include "npu/estimate.h"

#include <map>
#include <sstream>

#include <fmt/format.h>

namespace edgec::npu {

int64_t DecoderConfig::parameters() const {
  const int64_t head_dim = hidden / heads, kv = int64_t{kv_heads} * head_dim;
  const int64_t per_layer = int64_t{hidden} * hidden * 2 + int64_t{hidden} * kv * 2 + 3 * int64_t{hidden} * ffn;
  return layers * per_layer + 2 * int64_t{vocab} * hidden;  // + embedding table and LM head
}

std::string DecoderConfig::ToString() const {
  return fmt::format("layers={},hidden={},heads={},kv_heads={},ffn={},seq={},context={},vocab={}{}", layers,
                     hidden, heads, kv_heads, ffn, seq, context, vocab, fp16 ? " (fp16)" : " (int8)");
}

StatusOr<DecoderConfig> ParseDecoderConfig(const std::string& text) {
  DecoderConfig c;
  if (text == "7b" || text.empty()) return c;
  if (text == "1b") {
    c.layers = 16; c.hidden = 2048; c.heads = 32; c.kv_heads = 8; c.ffn = 8192; c.vocab = 32000;
    return c;
  }
  if (text == "tiny") {
    c.layers = 2; c.hidden = 256; c.heads = 4; c.kv_heads = 4; c.ffn = 1024; c.vocab = 1000; c.context = 128;
    return c;
  }
  std::map<std::string, int*> keys = {{"layers", &c.layers}, {"hidden", &c.hidden}, {"heads", &c.heads},
                                      {"kv_heads", &c.kv_heads}, {"ffn", &c.ffn}, {"seq", &c.seq},
                                      {"context", &c.context}, {"vocab", &c.vocab}};
  std::stringstream ss(text);
  std::string item;
  bool kv_given = false;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      return InvalidArgument("decoder config '{}': expected KEY=VALUE, got '{}'", text, item);
    const std::string k = item.substr(0, eq);
    auto it = keys.find(k);
    if (it == keys.end())
      return InvalidArgument("decoder config: unknown key '{}' (layers, hidden, heads, kv_heads, ffn, seq, context, vocab)", k);
    try {
      size_t pos = 0;
      const long v = std::stol(item.substr(eq + 1), &pos);
      if (pos != item.size() - eq - 1 || v < 1 || v > (1 << 24)) throw 0;
      *it->second = static_cast<int>(v);
    } catch (...) {
      return InvalidArgument("decoder config: {} must be a positive integer, got '{}'", k, item.substr(eq + 1));
    }
    kv_given |= k == "kv_heads";
  }
  if (!kv_given) c.kv_heads = c.heads;
  if (c.hidden % c.heads) return InvalidArgument("decoder config: hidden {} is not a multiple of heads {}", c.hidden, c.heads);
  if (c.heads % c.kv_heads) return InvalidArgument("decoder config: heads {} is not a multiple of kv_heads {}", c.heads, c.kv_heads);
  return c;
}

std::vector<RepeatedLayer> DecoderLayers(const DecoderConfig& c) {
  const int head_dim = c.hidden / c.heads, kv = c.kv_heads * head_dim;
  auto mm = [&](const std::string& name, int m, int k, int n, int64_t count) {
    ConvLayer l = ConvLayer::MatMul(name, m, k, n);
    l.fp16 = c.fp16;
    return RepeatedLayer{l, count};
  };
  std::vector<RepeatedLayer> out = {
      mm("attn.q_proj", c.seq, c.hidden, c.hidden, c.layers),
      mm("attn.k_proj", c.seq, c.hidden, kv, c.layers),
      mm("attn.v_proj", c.seq, c.hidden, kv, c.layers),
      // Scores and context per head: the KV cache is the streamed operand.
      mm("attn.scores (q.kT)", c.seq, head_dim, c.context, int64_t{c.layers} * c.heads),
      mm("attn.context (p.v)", c.seq, c.context, head_dim, int64_t{c.layers} * c.heads),
      mm("attn.o_proj", c.seq, c.hidden, c.hidden, c.layers),
      mm("ffn.gate", c.seq, c.hidden, c.ffn, c.layers),
      mm("ffn.up", c.seq, c.hidden, c.ffn, c.layers),
      mm("ffn.down", c.seq, c.ffn, c.hidden, c.layers),
      mm("lm_head", c.seq, c.hidden, c.vocab, 1),
  };
  return out;
}

StatusOr<ModelEstimate> EstimateModel(const std::vector<RepeatedLayer>& layers, const Target& t,
                                      const TilerOptions& opt) {
  ModelEstimate e;
  for (const RepeatedLayer& r : layers) {
    auto choice = ChooseTiling(r.layer, t, opt);
    if (!choice.ok()) return choice.status();
    for (int64_t i = 0; i < r.count; ++i) e.total.Add(choice->stats);
    e.weight_bytes += r.count * r.layer.k() * r.layer.n() * r.layer.elem_bytes();
    e.layers.push_back({r, *choice});
  }
  return e;
}

std::string FormatEstimate(const ModelEstimate& e, const Target& t, bool show_tiling) {
  std::string s = fmt::format("{:<26} {:>5} {:>18} {:>12} {:>6} {:>6} {:>11} {:>10} {:>8}{}\n", "layer", "count",
                              "M x K x N", "cycles", "util", "map", "DRAM B", "roofline", "bound",
                              show_tiling ? "  tiling (runner-up cycles)" : "");
  for (const LayerEstimate& l : e.layers) {
    const Stats& st = l.tiling.stats;
    std::string tiling;
    if (show_tiling) {
      tiling = "  " + l.tiling.best.tiling.ToString();
      if (l.tiling.runner_up)
        tiling += fmt::format(" ({:.0f}: {})", l.tiling.runner_up->cycles, l.tiling.runner_up->tiling.ToString());
    }
    s += fmt::format("{:<26} {:>5} {:>18} {:>12.0f} {:>5.1f}% {:>5.1f}% {:>11} {:>10.0f} {:>8}{}\n",
                     l.layer.layer.name.substr(0, 26), l.layer.count,
                     fmt::format("{}x{}x{}", l.layer.layer.m(), l.layer.layer.k(), l.layer.layer.n()), st.cycles,
                     100 * st.mac_utilization(t), 100 * st.mapping_efficiency(), st.dram_read + st.dram_written,
                     st.roofline_cycles(t), st.compute_bound(t) ? "compute" : "memory", tiling);
  }
  const Stats& tot = e.total;
  s += fmt::format("total: {:.3f} ms ({:.0f} cycles at {:.2f} GHz), {} MACs, MAC utilization {:.1f}%, "
                   "DRAM {:.1f} MB read + {:.1f} MB written, weights {:.1f} MB, roofline {:.3f} ms ({})\n",
                   tot.cycles / t.clock_hz * 1e3, tot.cycles, t.clock_hz / 1e9, tot.macs,
                   100 * tot.mac_utilization(t), tot.dram_read / 1e6, tot.dram_written / 1e6, e.weight_bytes / 1e6,
                   tot.roofline_cycles(t) / t.clock_hz * 1e3, tot.compute_bound(t) ? "compute-bound" : "memory-bound");
  return s;
}

}  // namespace edgec::npu
