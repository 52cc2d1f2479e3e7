// One NPU program for a segment: a run of layers lowered one by one, assembled into one task
// (one dispatch) with one instruction stream per core.
//
// Each layer is lowered alone, as for a one-layer program (lower.h, move.h): its own DRAM
// image (constants first, then its tensors' regions "<layer>.input", ".input1", ...,
// ".output", ".output1", ...), SRAM from 0, semaphores from 0, cores from 0, and every DMA
// tagged with the region it addresses (Instr::region). That is the whole contract a layer
// kind has with the segment: a new kind plugs in by lowering to such a program.
//
// AssembleSegment binds every region to its place and relocates the layer:
//   - a tensor region to the tensor's location: a DRAM address of the segment's image, or an
//     SRAM address when the residency plan (sram_plan.h) keeps the tensor on chip; a DMA to
//     or from an SRAM-resident tensor becomes an on-chip DMA (Instr::on_chip), no DRAM byte;
//   - a constant region (weights, parameters, tables) to the layer's slot in the image's
//     constant prefix (dram_init);
//   - SRAM addresses by the layer's working-area base, cores by its first core, semaphores
//     by its own block (every layer has its own semaphores: a layer's token counts never mix
//     with another's).
// Tokens across layers, per core of each layer:
//   - end of the layer: its load, exec and vector queues signal E, the store queue waits for
//     the three and then signals D ("layer done", for the load queues) and DP (the same, for
//     the prefetch queues) on every core of the target;
//   - before its first DMA that reads a tensor produced by layer i, a core waits for D_i from
//     each of i's cores (the producer's stores, or its SRAM-resident output, are complete);
//     except where nothing else orders the two layers (the tensor has one writer and no
//     slices, the producer writes it by store-queue DMAs only, the reader writes no SRAM the
//     producer uses): then each of i's cores signals P (one token per store) to the reader's
//     cores after every store, and each load of the reader waits, per producer core, for the
//     tokens up to the last store over the bytes it reads. The reader's first tiles thus run
//     while the producer stores its last ones (layer pipelining). Guarded by
//     NpuSegmentTest.ConsumerTilesStartBeforeTheProducerEnds;
//   - before any of its SRAM writes (the head of its load queue) a core waits for D_i of each
//     earlier layer i whose SRAM (working area, resident tensors) overlaps what this layer
//     writes (its working area, its resident outputs): the SRAM write-after-read hazard;
//   - the head of its exec queue waits for the vector queue of the previous MATMUL layer on
//     that core (V): the accumulators are per core and every layer uses them from 0.
//   A core waits for a given D at most once (its load queue is in layer order), so no layer
//   takes another's token. Weight loads that come before the first input load (weights
//   resident) therefore start while the producer still computes: weight prefetch, when the
//   plan gives consecutive layers disjoint working areas.
// Weight streaming (a layer with a weight slot, SegmentLayer::weights_from = p < its index):
//   - its constant image moves DRAM -> slot in chunks on the prefetch queues (isa.h; in layer
//     order, apart from the layers' own loads, and yielding the DRAM to them: sim.h), dealt
//     round-robin over the program's cores layer p leaves idle (else over all of them); before
//     its chunks a core's prefetch queue waits DP (the "done" token of the prefetch queues) of
//     every earlier layer whose SRAM overlaps the slot, after them it signals F (the layer's
//     fourth token) to each core of the layer;
//   - the layer's cores wait for F from each issuing core, and its constant DMAs read the
//     slot on chip (no DRAM byte); the slot counts as SRAM the layer uses (later writers
//     wait for its D). Guarded by NpuSegmentTest.WeightsStreamSeveralLayersAhead.
// Resident weights (SegmentLayer::weights_resident): the slots held between calls are filled
// by a task of their own before the segment's task (the program's first task; a session runs
// it on its first call only), and their layers read them on chip without waiting.
// Guarded by NpuSegmentTest.ResidentWeightsSkipTheirLoadOnTheSecondCall.
// Cascades (lower/npu_cascade.h): a stripe layer's regions bind to slices of tensors
// (SegmentTensor::slice_of); a layer reading a tensor or a slice of it waits D of every layer
// that wrote any part of it. Guarded by NpuCascadeTest.StripesReproduceTheUnstripedOutput.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"
#include "npu/isa.h"
#include "npu/target.h"

namespace edgec::npu {

struct SegmentTensor {
  std::string name;
  int64_t bytes = 0;
  bool in_sram = false;  // kept in the shared SRAM (else in DRAM)
  int64_t addr = 0;      // SRAM address when in_sram; the DRAM address is assigned by the assembler
  int producer = -1;     // layer index; -1: a segment input, in DRAM before the task starts
  // A row stripe of another tensor (a cascade's stripe layer reads or writes it): its bytes
  // are [slice_offset, slice_offset + bytes) of tensor `slice_of`, wherever that one is.
  int slice_of = -1;
  int64_t slice_offset = 0;
};

struct SegmentLayer {
  std::string name;
  Program program;                   // lowered alone (see above), one task
  std::vector<int> inputs, outputs;  // tensor indices of its regions ".input", ".input1", ... / ".output", ...
  int core_base = 0;                 // its cores: [core_base, core_base + program.cores_used)
  int64_t sram_base = 0;             // its working tiles: [sram_base, sram_base + SramFootprint(program))
  int weights_from = -1;             // its constant image streams into a slot from this earlier layer on
  int64_t weights_addr = 0;          // the slot: [weights_addr, weights_addr + ConstantExtent(program))
  bool weights_resident = false;     // the slot is held between calls (filled by the first task)
  // A lead-in slot (sram_plan.h): it holds this prefix of the image (-1: all of it), and its
  // chunks load at the head of layer weights_from + 1's loads, on that layer's cores.
  int64_t weights_bytes = -1;
  // A ring slot's chunks spread over the steps weights_from .. this layer's - 1 (each step's
  // share on the cores its layer leaves idle) instead of all ahead of layer weights_from's loads.
  bool weights_spread = false;
  // A stripe of the same node as this earlier layer (a cascade): when its constant image is
  // byte for byte that layer's, it reads that copy (no second copy in the DRAM image).
  int constants_of = -1;
};

// Bytes of a layer program's constant image (the prefix of its DRAM image before its tensors).
int64_t ConstantExtent(const Program& p);

// A layer program's DRAM loads of its constant image, by the end of the bytes each may touch:
// {end, DRAM bytes of every such load ending at or before it}, ascending in both.
std::vector<std::pair<int64_t, int64_t>> ConstantReads(const Program& p);

// The assembled program: one task named `task_name` (after the resident weights' task, when a
// layer has one), layer_names = the layers' names, regions
// = every DRAM tensor under its own name and every layer's constant regions. DRAM tensors get
// their addresses here (written back into `tensors`), after the constants.
StatusOr<Program> AssembleSegment(const std::vector<SegmentLayer>& layers, std::vector<SegmentTensor>& tensors,
                                  const Target& t, const std::string& task_name);

// The region suffix ".input", ".input1", ".output", ... names which operand a region holds:
// {is_output, index}, or {false, -1} for a constant region.
std::pair<bool, int> RegionOperand(const std::string& region_name);

}  // namespace edgec::npu
