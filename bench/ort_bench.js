#!/usr/bin/env node
// ONNX Runtime's side of the CPU peer benchmark (bench/peer_cpu.py): measures one model the
// way `edgec bench` does and prints one JSON object.
//
// Usage: node ort_bench.js MODEL.onnx INPUT_DIR THREADS RUNS WARMUP
//
// Session: CPU provider, graphOptimizationLevel 'all', intraOpNumThreads THREADS,
// interOpNumThreads 1, sequential execution. WARMUP untimed runs, then RUNS timed runs, each
// timed alone (wall clock around one session.run). Peak RSS is this process's maximum
// resident set (Node itself included; `rss_before_session_bytes` is what Node and the
// loaded ONNX Runtime module held before the session was made).
'use strict';

const { loadOrt, readInputs, UsageError } = require('../tests/zoo/ort_run.js');

function percentile(sorted, p) {
  const idx = p * (sorted.length - 1);
  const lo = Math.floor(idx);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (idx - lo);
}

function nowMs() {
  return Number(process.hrtime.bigint()) / 1e6;
}

async function main(argv) {
  if (argv.length !== 5) {
    throw new UsageError('usage: node ort_bench.js MODEL.onnx INPUT_DIR THREADS RUNS WARMUP');
  }
  const [model, inputDir] = argv;
  const [threads, runs, warmup] = argv.slice(2).map(Number);
  if (!(threads >= 1 && runs >= 1 && warmup >= 0)) throw new UsageError('THREADS, RUNS >= 1 and WARMUP >= 0');
  const ort = loadOrt();
  const rssBefore = process.resourceUsage().maxRSS * 1024;
  const t0 = nowMs();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    logSeverityLevel: 3,
  });
  const createMs = nowMs() - t0;
  const feeds = readInputs(ort, inputDir, session.inputNames);
  for (let i = 0; i < warmup; ++i) await session.run(feeds);
  const ms = [];
  const all0 = nowMs();
  for (let i = 0; i < runs; ++i) {
    const a = nowMs();
    await session.run(feeds);
    ms.push(nowMs() - a);
  }
  const totalS = (nowMs() - all0) / 1000;
  const sorted = [...ms].sort((x, y) => x - y);
  console.log(JSON.stringify({
    model, threads, runs, warmup,
    latency_ms: {
      min: sorted[0], median: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), p99: percentile(sorted, 0.99),
    },
    samples_ms: ms,
    throughput_per_s: runs / totalS,
    peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
    rss_before_session_bytes: rssBefore,
    session_create_ms: createMs,
  }));
}

main(process.argv.slice(2)).catch((e) => {
  console.error(`ort_bench: ${e instanceof UsageError ? e.message : e.stack || e}`);
  process.exit(1);
});
