// ONNX Runtime's side of the graph benchmark.
//   node ort_graph.js optimize MODEL LEVEL OUT.onnx   save ORT's optimized graph (level all|extended|basic)
//   node ort_graph.js shapes MODEL INPUT_DIR           run MODEL with optimization disabled and print
//                                                      every output's dtype and dims as JSON
const { loadOrt, readInputs, UsageError } = require('../tests/zoo/ort_run.js');

async function main(argv) {
  const ort = loadOrt();
  if (argv[0] === 'optimize' && argv.length === 4) {
    await ort.InferenceSession.create(argv[1], {
      graphOptimizationLevel: argv[2], optimizedModelFilePath: argv[3],
      intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3,
    });
    return;
  }
  if (argv[0] === 'shapes' && argv.length === 3) {
    const s = await ort.InferenceSession.create(argv[1], {
      graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, logSeverityLevel: 3,
    });
    const r = await s.run(readInputs(ort, argv[2], s.inputNames));
    const out = {};
    for (const k of Object.keys(r)) out[k] = { type: r[k].type, dims: r[k].dims };
    console.log(JSON.stringify(out));
    return;
  }
  throw new UsageError('usage: node ort_graph.js optimize MODEL LEVEL OUT | shapes MODEL INPUT_DIR');
}

main(process.argv.slice(2)).catch((e) => {
  console.error(`ort_graph: ${e.message}`);
  process.exit(1);
});
