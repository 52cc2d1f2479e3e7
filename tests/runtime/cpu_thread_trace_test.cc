// Which threads ran a parallel region (runtime/cpu_thread_trace.h): a recording sees every
// team member's share of the regions its thread opens — the own kernels' ParallelFor and
// oneDNN's primitives alike — and nothing another thread opens or anything after it closed.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "kernels/cpu/context.h"
#include "runtime/cpu_thread_trace.h"

namespace edgec::cpu_trace {
namespace {

std::set<int64_t> Threads(const std::vector<RegionSlice>& v) {
  std::set<int64_t> out;
  for (const RegionSlice& s : v) out.insert(s.tid);
  return out;
}

void Work(int threads) {
  std::vector<double> x(1 << 16, 1.0);
  cpu::ParallelFor(threads, static_cast<int64_t>(x.size()), 1024, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) x[i] = x[i] * 1.5 + 1;
  });
}

TEST(CpuThreadTrace, EveryTeamMemberOfTheOwnRegions) {
  ThreadRecording rec;
  const int64_t before = NowNs();
  Work(2);
  const int64_t after = NowNs();
  const auto slices = rec.Take();
  ASSERT_EQ(slices.size(), 2u);
  const auto tids = Threads(slices);
  EXPECT_EQ(tids.size(), 2u);
  EXPECT_TRUE(tids.count(ThisThread()));
  for (const RegionSlice& s : slices) {
    EXPECT_LE(before, s.begin_ns);
    EXPECT_LE(s.begin_ns, s.end_ns);
    EXPECT_LE(s.end_ns, after);
  }
  EXPECT_TRUE(rec.Take().empty());  // taken once
}

TEST(CpuThreadTrace, OnlyTheRecordingThreadsRegions) {
  ThreadRecording rec;
  std::thread other([] { Work(2); });
  other.join();
  EXPECT_TRUE(rec.Take().empty());
  {
    ThreadRecording closed;
  }
  Work(2);
  EXPECT_EQ(rec.Take().size(), 2u);
}

TEST(CpuThreadTrace, NothingWhenNoRecordingIsOpen) {
  Work(2);
  ThreadRecording rec;
  EXPECT_TRUE(rec.Take().empty());
}

// libdnnl's parallel regions reach the entry of this binary: a oneDNN primitive at two
// threads leaves two threads' shares.
TEST(CpuThreadTrace, OneDnnRegionsToo) {
  ASSERT_TRUE(LibraryRegionsVisible());
  cpu::UseThreads(2);
  cpu::DnnlContext& ctx = cpu::GetDnnlContext(2);
  const dnnl::memory::desc md({1 << 20}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
  dnnl::memory src(md, ctx.engine), dst(md, ctx.engine);
  std::fill_n(static_cast<float*>(src.get_data_handle()), 1 << 20, -1.0f);
  dnnl::eltwise_forward relu(dnnl::eltwise_forward::primitive_desc(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_relu, md, 0.f), ctx.engine));
  relu.execute(ctx.stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});  // set-up outside the recording
  ctx.stream.wait();
  ThreadRecording rec;
  relu.execute(ctx.stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  ctx.stream.wait();
  EXPECT_EQ(Threads(rec.Take()).size(), 2u);
  EXPECT_EQ(static_cast<float*>(dst.get_data_handle())[12345], 0.0f);
}

}  // namespace
}  // namespace edgec::cpu_trace
