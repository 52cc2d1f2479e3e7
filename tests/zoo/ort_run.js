#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime (CPU) on .npy inputs and writes its outputs as .npy.
//
// Usage: node ort_run.js MODEL.onnx INPUT_DIR OUT_DIR
//
// Every INPUT_DIR/<name>.npy feeds the model input <name>. Each output is written as
// OUT_DIR/<sanitized output name>.npy, where any character other than a letter, digit,
// '.', '_' or '-' is replaced by '_'. Session: graphOptimizationLevel 'all', one intra-op
// thread. ONNX Runtime comes from tools/ort/node_modules (scripts/install-deps.sh).
'use strict';

const fs = require('fs');
const path = require('path');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const ORT_PATH = path.join(REPO_ROOT, 'tools', 'ort', 'node_modules', 'onnxruntime-node');

class UsageError extends Error {}

// .npy dtype descr <-> ONNX Runtime tensor type and typed array.
const NPY_TYPES = [
  { descr: '<f4', ort: 'float32', array: Float32Array },
  { descr: '<f8', ort: 'float64', array: Float64Array },
  { descr: '<i8', ort: 'int64', array: BigInt64Array },
  { descr: '<u8', ort: 'uint64', array: BigUint64Array },
  { descr: '<i4', ort: 'int32', array: Int32Array },
  { descr: '<u4', ort: 'uint32', array: Uint32Array },
  { descr: '<i2', ort: 'int16', array: Int16Array },
  { descr: '<u2', ort: 'uint16', array: Uint16Array },
  { descr: '<f2', ort: 'float16', array: Uint16Array },
  { descr: '|i1', ort: 'int8', array: Int8Array },
  { descr: '|u1', ort: 'uint8', array: Uint8Array },
  { descr: '|b1', ort: 'bool', array: Uint8Array },
];
// The input types this runner accepts (outputs may be any of NPY_TYPES).
const INPUT_DESCRS = new Set(['<f4', '<i8', '<i4', '|u1', '|i1', '|b1']);

function sanitize(name) {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}

// --- .npy reading (versions 1-3, little-endian, C order) -------------------------------

function parseHeaderField(header, key, pattern, file) {
  const m = header.match(new RegExp(`['"]${key}['"]\\s*:\\s*${pattern}`));
  if (!m) throw new UsageError(`${file}: .npy header has no readable '${key}': ${header}`);
  return m[1];
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const magic = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY
  if (buf.length < 10 || !buf.subarray(0, 6).equals(magic)) {
    throw new UsageError(`${file}: not a .npy file (bad magic)`);
  }
  const major = buf[6];
  let headerLen;
  let headerStart;
  if (major === 1) {
    headerLen = buf.readUInt16LE(8);
    headerStart = 10;
  } else if (major === 2 || major === 3) {
    headerLen = buf.readUInt32LE(8);
    headerStart = 12;
  } else {
    throw new UsageError(`${file}: unsupported .npy version ${major}.${buf[7]}`);
  }
  const header = buf.toString('latin1', headerStart, headerStart + headerLen);
  const descr = parseHeaderField(header, 'descr', `['"]([^'"]*)['"]`, file);
  const fortran = parseHeaderField(header, 'fortran_order', '(True|False)', file);
  const shapeText = parseHeaderField(header, 'shape', '\\(([^)]*)\\)', file);
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length > 0)
    .map((s) => {
      const d = Number(s.replace(/L$/, ''));
      if (!Number.isInteger(d) || d < 0) throw new UsageError(`${file}: bad shape (${shapeText})`);
      return d;
    });

  if (fortran === 'True') throw new UsageError(`${file}: Fortran-order arrays are not supported`);
  // Single-byte types may be written with '|' or '<' or '='.
  const normalized = /^[<=|][biu]1$/.test(descr) ? `|${descr.slice(1)}` : descr.replace(/^=/, '<');
  if (!INPUT_DESCRS.has(normalized)) {
    const why = normalized.startsWith('>') ? 'big-endian data is not supported'
      : 'supported: float32, int64, int32, uint8, bool';
    throw new UsageError(`${file}: unsupported dtype '${descr}' (${why})`);
  }
  const type = NPY_TYPES.find((t) => t.descr === normalized);
  const count = dims.reduce((a, b) => a * b, 1);
  const dataStart = headerStart + headerLen;
  const byteLen = count * type.array.BYTES_PER_ELEMENT;
  if (buf.length - dataStart !== byteLen) {
    throw new UsageError(`${file}: holds ${buf.length - dataStart} data bytes, shape ` +
      `(${dims.join(', ')}) of ${descr} needs ${byteLen}`);
  }
  // Copy into an aligned buffer of its own (the file buffer's offset may be unaligned).
  const bytes = new Uint8Array(byteLen);
  bytes.set(buf.subarray(dataStart, dataStart + byteLen));
  let data = new type.array(bytes.buffer, 0, count);
  if (type.ort === 'bool') data = Uint8Array.from(data, (v) => (v ? 1 : 0));
  return { type: type.ort, data, dims };
}

// --- .npy writing (version 1.0) -------------------------------------------------------

function writeNpy(file, tensor) {
  const type = NPY_TYPES.find((t) => t.ort === tensor.type);
  if (!type) throw new Error(`output type '${tensor.type}' cannot be written as .npy`);
  const dims = tensor.dims.map(Number);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${type.descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  const unpadded = 10 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(10);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(prefix);
  prefix.writeUInt16LE(header.length, 8);
  let data = tensor.data;
  if (tensor.type === 'bool') data = Uint8Array.from(data, (v) => (v ? 1 : 0));
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]));
}

// --- main ------------------------------------------------------------------------------

function loadOrt() {
  if (!fs.existsSync(path.join(ORT_PATH, 'package.json'))) {
    throw new UsageError(`ONNX Runtime not found at ${ORT_PATH}; run scripts/install-deps.sh`);
  }
  return require(ORT_PATH);
}

function readInputs(ort, inputDir, inputNames) {
  if (!fs.existsSync(inputDir) || !fs.statSync(inputDir).isDirectory()) {
    throw new UsageError(`input directory ${inputDir} does not exist`);
  }
  const files = fs.readdirSync(inputDir).filter((f) => f.endsWith('.npy')).sort();
  const feeds = {};
  for (const f of files) {
    const name = f.slice(0, -'.npy'.length);
    if (!inputNames.includes(name)) {
      throw new UsageError(`${path.join(inputDir, f)}: the model has no input '${name}' ` +
        `(inputs: ${inputNames.join(', ')})`);
    }
    const { type, data, dims } = readNpy(path.join(inputDir, f));
    feeds[name] = new ort.Tensor(type, data, dims);
  }
  const missing = inputNames.filter((n) => !(n in feeds));
  if (missing.length > 0) {
    throw new UsageError(`no .npy in ${inputDir} for model input(s): ${missing.join(', ')}`);
  }
  return feeds;
}

async function main(argv) {
  if (argv.length !== 3) {
    throw new UsageError('usage: node ort_run.js MODEL.onnx INPUT_DIR OUT_DIR');
  }
  const [modelPath, inputDir, outDir] = argv;
  if (!fs.existsSync(modelPath)) throw new UsageError(`model ${modelPath} does not exist`);
  const ort = loadOrt();

  let session;
  try {
    session = await ort.InferenceSession.create(modelPath, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
    });
  } catch (e) {
    throw new UsageError(`ONNX Runtime cannot load ${modelPath}: ${e.message}`);
  }
  const feeds = readInputs(ort, inputDir, session.inputNames);

  let results;
  const start = process.hrtime.bigint();
  try {
    results = await session.run(feeds);
  } catch (e) {
    throw new UsageError(`ONNX Runtime failed to run ${modelPath}: ${e.message}`);
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;

  fs.mkdirSync(outDir, { recursive: true });
  const written = new Set();
  for (const name of session.outputNames) {
    const file = `${sanitize(name)}.npy`;
    if (written.has(file)) throw new UsageError(`two outputs sanitize to the same name ${file}`);
    written.add(file);
    writeNpy(path.join(outDir, file), results[name]);
  }
  console.log(`ort_run: ${modelPath}: ${session.outputNames.length} output(s) ` +
    `in ${seconds.toFixed(3)} s -> ${outDir}`);
}

module.exports = { loadOrt, readInputs, readNpy, writeNpy, sanitize, UsageError };

if (require.main === module) {
  main(process.argv.slice(2)).catch((e) => {
    console.error(`ort_run: ${e instanceof UsageError ? e.message : e.stack || e}`);
    process.exit(1);
  });
}
