#!/usr/bin/env node
// ONNX Runtime's per-node profile, to set beside `edgec bench --profile` when a model is
// behind in bench/peer_cpu.py: where does ORT spend its time, op by op and node by node?
//
// Usage: node ort_profile.js MODEL.onnx INPUT_DIR THREADS [RUNS] [TOP]
//
// Session as in ort_bench.js (graph optimization 'all', intraOpNumThreads THREADS); 5 warm-up
// runs and RUNS (default 30) profiled runs. Prints the time per run inside nodes, by op type,
// then the TOP (default 25) nodes with their input shapes. ORT's profiler adds a few us per
// node, so on small models its totals exceed the unprofiled latency: compare shares and
// single nodes, not totals.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { loadOrt, readInputs, UsageError } = require('../tests/zoo/ort_run.js');

async function main(argv) {
  if (argv.length < 3 || argv.length > 5) {
    throw new UsageError('usage: node ort_profile.js MODEL.onnx INPUT_DIR THREADS [RUNS] [TOP]');
  }
  const [model, inputs, threads] = argv;
  const runs = Number(argv[3] || 30), top = Number(argv[4] || 25), warmup = 5;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-'));
  const ort = loadOrt();
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all', intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    enableProfiling: true, profileFilePrefix: path.join(dir, 'ort'), logSeverityLevel: 3,
  });
  const feeds = readInputs(ort, inputs, session.inputNames);
  for (let i = 0; i < warmup + runs; i++) await session.run(feeds);
  session.endProfiling();
  const file = fs.readdirSync(dir).map((f) => path.join(dir, f))[0];
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(dir, { recursive: true, force: true });

  // Kernel-time events of the profiled runs only (the warm-up runs come first).
  const runStarts = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').map((e) => e.ts).sort((a, b) => a - b);
  const from = runStarts.length > warmup ? runStarts[warmup] : 0;
  const byOp = new Map(), byNode = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < from) continue;
    const name = e.name.slice(0, -'_kernel_time'.length), op = e.args.op_name;
    byOp.set(op, (byOp.get(op) || 0) + e.dur);
    const n = byNode.get(name) || { op, us: 0, shapes: (e.args.input_type_shape || []).map((s) => Object.values(s)[0]) };
    n.us += e.dur;
    byNode.set(name, n);
  }
  const ms = (us) => (us / runs / 1000).toFixed(3);
  const total = [...byOp.values()].reduce((a, b) => a + b, 0);
  console.log(`ONNX Runtime ${path.basename(model)}, ${threads} thread(s), ${runs} profiled runs: ${ms(total)} ms per run in nodes`);
  console.log('by op:');
  for (const [op, us] of [...byOp].sort((a, b) => b[1] - a[1])) console.log(`  ${op.padEnd(24)} ${ms(us).padStart(8)} ms  ${(100 * us / total).toFixed(1).padStart(5)}%`);
  console.log(`top ${top} nodes:`);
  for (const [name, n] of [...byNode].sort((a, b) => b[1].us - a[1].us).slice(0, top)) {
    const shapes = n.shapes.map((s) => `[${s.join('x')}]`).join(' ');
    console.log(`  ${n.op.padEnd(18)} ${ms(n.us).padStart(8)} ms  ${name.slice(-48).padEnd(48)} ${shapes}`);
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err instanceof UsageError ? err.message : `ort_profile: ${err.stack || err}`);
  process.exit(err instanceof UsageError ? 2 : 1);
});
