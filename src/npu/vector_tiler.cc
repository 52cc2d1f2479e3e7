#include "npu/vector_tiler.h"

#include <algorithm>
#include <set>

namespace edgec::npu {
namespace {


// Single buffering is always a candidate (double may not pay on a vector layer whose loads
// are short); double only when allowed.
std::vector<bool> Bufferings(const TilerOptions& opt) {
  std::vector<bool> b = {false};
  if (opt.allow_double) b.push_back(true);
  return b;
}

// Items per tile for a layer of `items` independent items (rows, groups, indices): all of them
// spread over 1, 2, 4, ... cores, in 1, 2, 4 or 8 steps each.
std::set<int64_t> ItemChunks(int64_t items, const Target& t) {
  std::set<int64_t> chunks;
  for (int64_t cores = 1; cores <= t.ai_cores.count; cores *= 2)
    for (int64_t steps = 1; steps <= 8; steps *= 2) chunks.insert(std::max<int64_t>(1, CeilDiv(items, cores * steps)));
  return chunks;
}

// Keeps the fastest of the candidates that lower; `why` collects the last refusal.
struct Best {
  VectorTiling best;
  bool found = false;
  std::string why;
  const TilerOptions* opt = nullptr;
  void Offer(StatusOr<Program> p, const Target& t, VectorTiling c) {
    if (!p.ok()) {
      why = p.status().message();
      return;
    }
    if (opt) MarkOnChip(*p, *opt);
    auto s = Simulate(*p, t);
    if (!s.ok()) {
      why = s.status().message();
      return;
    }
    c.cycles = s->total.cycles;
    if (!found || c.cycles < best.cycles) best = c, found = true;
  }
};

}  // namespace

std::string VectorTiling::ToString() const {
  const char* buf = double_buffer ? "double" : "single";
  if (chunk > 0) return fmt::format("chunk {} {}", chunk, buf);
  return fmt::format("tile {} rows x {}ch {}", tile_rows, tile_c, buf);
}

StatusOr<VectorTiling> ChooseEltwiseTiling(const EltwiseLayer& l, const Target& t, const TilerOptions& opt) {
  // A row-broadcast op moves whole rows: the candidates count rows, not elements.
  const bool rows = l.whole_rows() && l.cols > 0;
  const int64_t unit = rows ? l.cols : 1, units = rows ? CeilDiv(l.elements, l.cols) : l.elements;
  std::set<int64_t> chunks;
  for (int64_t cores = 1; cores <= t.ai_cores.count; cores *= 2)
    for (int64_t steps = 1; steps <= 8; steps *= 2) chunks.insert(CeilDiv(units, cores * steps) * unit);
  for (int64_t c = 256; c < l.elements; c *= 2) chunks.insert(rows ? std::max<int64_t>(1, c / unit) * unit : c);
  EltwiseLayer shape = l;  // timing does not need the data
  if (l.op == VecOp::kLut) shape.table.assign(l.table.size(), 0);  // 256, 65536 (an int16 index) or 256 per channel
  Best b;
  b.opt = &opt;
  for (int64_t chunk : chunks) {
    if (chunk < 1) continue;
    for (bool db : Bufferings(opt)) {
      int64_t a, bb, y;
      b.Offer(LowerEltwise(shape, t, chunk, db, &a, &bb, &y), t, VectorTiling{.chunk = chunk, .double_buffer = db});
    }
  }
  if (!b.found) return InvalidArgument("eltwise layer '{}': no chunk fits: {}", l.name, b.why);
  return b.best;
}

StatusOr<VectorTiling> ChooseMoveTiling(const MoveLayer& l, const Target& t, const TilerOptions& opt) {
  // Chunks of 4 KiB ... a quarter of the SRAM, the whole layer when smaller, and its share on
  // 2, 4, ... all cores.
  std::set<int64_t> chunks;
  const int64_t total = std::max<int64_t>(1, l.bytes());
  for (int64_t c = 4096; c <= t.shared_sram.bytes / 4; c *= 2) chunks.insert(std::min(c, total));
  if (total < 4096) chunks.insert(total);
  for (int64_t cores = 2; cores <= t.ai_cores.count; cores *= 2) chunks.insert(std::max<int64_t>(64, CeilDiv(total, cores)));
  Best b;
  b.opt = &opt;
  for (int64_t chunk : chunks)
    for (bool db : Bufferings(opt))
      b.Offer(LowerMove(l, t, chunk, db), t, VectorTiling{.chunk = chunk, .double_buffer = db});
  if (!b.found) return InvalidArgument("move layer '{}': no chunk fits: {}", l.name, b.why);
  return b.best;
}

StatusOr<VectorTiling> ChooseGatherTiling(const GatherLayer& l, const Target& t, const TilerOptions& opt) {
  const std::set<int64_t> chunks = ItemChunks(l.count, t);  // indices per tile
  Best b;
  b.opt = &opt;
  for (int64_t chunk : chunks)
    for (bool db : Bufferings(opt))
      b.Offer(LowerGather(l, t, chunk, db), t, VectorTiling{.chunk = chunk, .double_buffer = db});
  if (!b.found) return InvalidArgument("gather layer '{}': no chunk fits: {}", l.name, b.why);
  return b.best;
}

StatusOr<VectorTiling> ChooseArgMaxTiling(const ArgMaxLayer& l, const Target& t, const TilerOptions& opt) {
  const std::set<int64_t> chunks = ItemChunks(l.rows, t);  // rows per tile
  Best b;
  b.opt = &opt;
  for (int64_t chunk : chunks)
    for (bool db : Bufferings(opt))
      b.Offer(LowerArgMax(l, t, chunk, db), t, VectorTiling{.chunk = chunk, .double_buffer = db});
  if (!b.found) return InvalidArgument("argmax layer '{}': no chunk fits: {}", l.name, b.why);
  return b.best;
}

StatusOr<VectorTiling> ChooseNormTiling(const NormLayer& l, const Target& t, const TilerOptions& opt) {
  const std::set<int64_t> chunks = ItemChunks(l.items, t);
  Best b;
  for (int64_t chunk : chunks)
    for (bool db : Bufferings(opt))
      b.Offer(LowerNorm(l, t, chunk, db), t, VectorTiling{.chunk = chunk, .double_buffer = db});
  if (!b.found) return InvalidArgument("norm layer '{}': no tile fits: {}", l.name, b.why);
  return b.best;
}

namespace {

// Tiles of 1, 2, 4, ... up to all output rows by 16, 32, ... up to all channels.
template <typename LowerFn>
StatusOr<VectorTiling> ChooseWindowTiling(const std::string& what, int out_h, int channels, const Target& t,
                                          const TilerOptions& opt, LowerFn lower) {
  std::set<int> rows, chans;
  for (int r = 1; r < out_h; r *= 2) rows.insert(r);
  rows.insert(std::max(1, out_h));
  for (int c = 16; c < channels; c *= 2) chans.insert(c);
  chans.insert(channels);
  Best b;
  b.opt = &opt;
  for (int r : rows)
    for (int c : chans)
      for (bool db : Bufferings(opt))
        b.Offer(lower(r, c, db), t, VectorTiling{.tile_rows = r, .tile_c = c, .double_buffer = db});
  if (!b.found) return InvalidArgument("{}: no tile fits: {}", what, b.why);
  return b.best;
}

}  // namespace

StatusOr<VectorTiling> ChoosePoolTiling(const PoolLayer& l, const Target& t, const TilerOptions& opt) {
  return ChooseWindowTiling(fmt::format("pool layer '{}'", l.name), l.out_h(), l.channels, t, opt,
                            [&](int r, int c, bool db) { return LowerPool(l, t, r, c, db, nullptr); });
}

StatusOr<VectorTiling> ChooseResizeTiling(const ResizeLayer& l, const Target& t, const TilerOptions& opt) {
  return ChooseWindowTiling(fmt::format("resize layer '{}'", l.name), l.replicates() ? l.in_h : l.out_h, l.channels, t,
                            opt, [&](int r, int c, bool db) { return LowerResize(l, t, r, c, db); });
}

StatusOr<VectorTiling> ChooseDepthwiseTiling(const DepthwiseLayer& l, const Target& t, const TilerOptions& opt) {
  DepthwiseLayer shape = l;  // timing does not need the data
  shape.weights.clear();
  return ChooseWindowTiling(fmt::format("depthwise layer '{}'", l.name), l.out_h(), l.out_channels(), t, opt,
                            [&](int r, int c, bool db) { return LowerDepthwise(shape, t, r, c, db); });
}

}  // namespace edgec::npu
