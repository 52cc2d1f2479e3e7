// A profile's timeline in the Chrome Trace Event Format (`edgec profile --trace FILE.json`),
// which Perfetto and chrome://tracing open: process 1 "CPU" (a thread per CPU thread that ran
// a share of a CPU node, thread 0 the one running the steps; the arena counter),
// process 2 "NPU" (a thread per core queue and per DMA engine, the SRAM occupancy and DRAM
// bandwidth counters). Slices are B/E pairs in time order per thread, timestamps in
// microseconds; a token between queues is a flow ("s" on the SIGNAL's slice, "f" bound to the
// enclosing WAIT slice) with its own id. Checked by tests/report/profile_trace_test.cc.
#pragma once

#include <nlohmann/json.hpp>

#include "report/profile.h"

namespace edgec::report {

nlohmann::json ChromeTrace(const Profile& p);

}  // namespace edgec::report
