// Room for the late weights of a segment: early layers tiled for less SRAM (see npu_segment_room.h).
#include "lower/npu_segment_room.h"

#include <algorithm>

#include <fmt/format.h>

#include "support/status.h"

namespace edgec::lower {

RoomCut CriticalCut(const std::vector<double>& cycles, const std::vector<int64_t>& const_bytes,
                    const std::vector<int64_t>& live_bytes, int64_t sram_bytes, double dram_bytes_per_cycle) {
  const int L = static_cast<int>(std::min({cycles.size(), const_bytes.size(), live_bytes.size()}));
  std::vector<double> after(L + 1, 0);  // constant bytes of the layers after each cut
  for (int i = L - 1; i >= 0; --i) after[i] = after[i + 1] + static_cast<double>(const_bytes[i]);
  RoomCut cut;
  double compute = 0;
  for (int k = 0; k < L; ++k) {
    compute += std::max(0.0, cycles[k] - static_cast<double>(const_bytes[k]) / dram_bytes_per_cycle);
    const double room = static_cast<double>(std::max<int64_t>(0, sram_bytes - live_bytes[k]));
    const double t = compute + std::max(0.0, after[k + 1] - room) / dram_bytes_per_cycle;
    if (t > cut.cycles) cut = {k, t};
  }
  return cut;
}

Status TryRoomForLateWeights(const std::vector<double>& cycles, const std::vector<int64_t>& work_bytes,
                             const std::vector<int64_t>& const_bytes, const std::vector<int64_t>& live_bytes,
                             const npu::Target& t, double base,
                             const TryCaps& attempt, std::string& listing) {
  const RoomCut cut = CriticalCut(cycles, const_bytes, live_bytes, t.shared_sram.bytes, t.dram_bytes_per_cycle());
  const int L = static_cast<int>(work_bytes.size());
  const int behind = cut.layer + 1;  // the early layers: 0 .. cut.layer
  // Worth trying only when later layers have weights to stream into the room.
  int64_t late = 0;
  for (int i = behind; i < L; ++i) late += const_bytes[i];
  if (behind < 2 || late < t.shared_sram.bytes / 8) return Status::Ok();
  std::string figures;
  double best = base;
  std::string kept = "none";
  std::vector<int64_t> held(work_bytes);  // each layer's SRAM bound after the variants kept
  for (const int early : {behind, behind / 2}) {
    for (const int64_t cap : {t.shared_sram.bytes / 4, t.shared_sram.bytes / 8}) {
      std::vector<int64_t> caps(early, 0);
      bool shrinks = false;  // a variant within what is kept changes nothing
      for (int i = 0; i < early; ++i)
        if (held[i] > cap) caps[i] = cap, shrinks = true;
      if (!shrinks) continue;
      ASSIGN_OR_RETURN(double cycles_with, attempt(caps, best));
      figures += fmt::format("{}layers 0..{} at {} B: {:.0f}", figures.empty() ? "" : ", ", early - 1, cap, cycles_with);
      if (cycles_with < best) {
        best = cycles_with;
        kept = fmt::format("{}layers 0..{} at {} B", kept == "none" ? "" : kept + " then ", early - 1, cap);
        for (int i = 0; i < early; ++i) held[i] = std::min(held[i], cap);
      }
    }
  }
  if (!figures.empty())
    listing += fmt::format(";   room for late weights (critical cut after layer {}, {:.0f} cycles): {}; as tiled "
                           "{:.0f} cycles; kept: {}\n",
                           cut.layer, cut.cycles, figures, base, kept);
  return Status::Ok();
}

}  // namespace edgec::lower
