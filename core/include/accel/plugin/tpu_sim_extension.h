/*
 * The TPU emulator's extension table, "accel.tpu_sim.v1": what the tpu_sim
 * plugin offers beyond the plugin API, for the experiment runner and the
 * TPU distribution strategy. Get it with
 *
 *   const AccelTpuSimExtension* tpu = (const AccelTpuSimExtension*)
 *       api->get_extension(context, ACCEL_TPU_SIM_EXTENSION_NAME);
 *
 * and pass the same plugin context back to its functions. Same rules as
 * accel_plugin.h: every struct starts with struct_size (check it before
 * reading a field added later), statuses come from the host's status_create.
 * docs/tpu-emulator.md describes the figures.
 */
#ifndef ACCEL_PLUGIN_TPU_SIM_EXTENSION_H_
#define ACCEL_PLUGIN_TPU_SIM_EXTENSION_H_

#include <accel/plugin/accel_plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACCEL_TPU_SIM_EXTENSION_NAME "accel.tpu_sim.v1"

/* What one emulated TensorCore (physical device) has run since the plugin
   started or since reset_totals: its simulated timeline's totals. */
typedef struct AccelTpuSimDeviceTotals {
  size_t struct_size;
  int64_t ops;
  int64_t cycles;          /* the end of the device's simulated timeline: op cycles
                              plus, when collectives ran, collective_cycles and idle_cycles */
  double seconds;          /* cycles / clock_hz */
  double clock_hz;
  int64_t hbm_bytes;       /* HBM traffic of all ops */
  int64_t stall_cycles;    /* cycles spent waiting on HBM */
  int64_t useful_macs;     /* multiply-accumulates of the MXU ops */
  double mxu_utilization;  /* useful_macs / (peak MACs per cycle of the core x cycles) */
  /* Appended (check struct_size): */
  int64_t collective_cycles;  /* cycles in all-reduces over the interconnect (run_all_reduce) */
  int64_t idle_cycles;        /* cycles waiting at a collective for slower cores */
  /* Appended (check struct_size): dynamic energy in joules of the ops and of
     this core's share of the all-reduces, from the preset's energy figures
     (docs/tpu-emulator.md, "Energy"). energy_known = 0: the preset has none
     and every *_energy_j is 0. energy_missing: ACCEL_TPU_SIM_ENERGY_* bits of
     the kinds of work that ran without a figure (left out of energy_j). */
  int32_t energy_known;
  int32_t energy_missing;
  double energy_j;            /* the sum of the parts below */
  double mac_energy_j;        /* MXU multiply-accumulates */
  double sram_energy_j;       /* on-chip SRAM (VMEM) reads and writes */
  double hbm_energy_j;        /* HBM reads and writes */
  double link_energy_j;       /* bytes sent over the inter-chip links */
  double vector_energy_j;     /* vector-unit element-instructions */
} AccelTpuSimDeviceTotals;

/* Bits of AccelTpuSimDeviceTotals.energy_missing. */
#define ACCEL_TPU_SIM_ENERGY_LINK_MISSING 1
#define ACCEL_TPU_SIM_ENERGY_VECTOR_MISSING 2

/* Simulated time of an all-reduce over the system's interconnect. */
typedef struct AccelTpuSimAllReduce {
  size_t struct_size;
  double seconds;          /* total */
  double link_seconds;     /* bandwidth term over the inter-chip links */
  double latency_seconds;  /* per-step link latency term */
  double on_chip_seconds;  /* combining the cores of each chip through HBM */
  int32_t chips;           /* chips taking part */
  int32_t steps;           /* communication steps over the links */
} AccelTpuSimAllReduce;

/* Kinds of AccelTpuSimExtension.estimate_collective. */
#define ACCEL_TPU_SIM_ALL_REDUCE 0
#define ACCEL_TPU_SIM_ALL_GATHER 1
#define ACCEL_TPU_SIM_REDUCE_SCATTER 2
#define ACCEL_TPU_SIM_ALL_TO_ALL 3

/* Simulated time of one collective among some of the system's chips. */
typedef struct AccelTpuSimCollective {
  size_t struct_size;
  double seconds;              /* total */
  double link_seconds;         /* bandwidth term over the inter-chip links */
  double latency_seconds;      /* per-hop link latency term */
  double link_bytes_per_chip;  /* what each chip sends over its links */
  double link_energy_j;        /* every taking part chip's link energy; 0 when unknown */
  int32_t chips;               /* chips taking part */
  int32_t steps;               /* hops of latency */
  int32_t link_energy_known;   /* 0: the preset has no energy per link byte */
  /* Appended (check struct_size): the chip's own work, not in `seconds`:
     summing what arrives in a reduction (reduce-scatter, all-reduce), its
     own partial and the one that came in read and the sum written through
     HBM. The caller schedules it on the chip. */
  double chip_seconds;
} AccelTpuSimCollective;

typedef struct AccelTpuSimExtension {
  size_t struct_size;
  /* Totals of physical device `physical_index` (TPU:index). */
  AccelStatus* (*device_totals)(AccelPluginContext* context, int32_t physical_index,
                                AccelTpuSimDeviceTotals* totals);
  /* Zeroes the totals and restarts the simulated timeline at 0; -1 = every device. */
  AccelStatus* (*reset_totals)(AccelPluginContext* context, int32_t physical_index);
  /* All-reduce of `bytes` over the first `cores` TensorCores of the system
     (whole chips first: cores 0 and 1 are chip 0 on a 2-core chip). */
  AccelStatus* (*all_reduce)(AccelPluginContext* context, double bytes, int32_t cores,
                             AccelTpuSimAllReduce* estimate);
  /* The emulated system as one JSON object (preset, source, chips, cores,
     mode, convention, and the hardware figures); valid for the plugin's life. */
  const char* (*system_json)(AccelPluginContext* context);
  /* Appended (check struct_size): runs an all-reduce of `bytes` over the
     TensorCores `core_indices[0 .. count)` on their simulated timelines, as
     a synchronous collective: it starts when the last of them is free (the
     others wait: idle_cycles) and ends on all of them at once, after the
     all_reduce estimate for that many cores (collective_cycles). *estimate
     gets that estimate and *start_seconds the simulated start. */
  AccelStatus* (*run_all_reduce)(AccelPluginContext* context, double bytes, const int32_t* core_indices,
                                 int32_t count, AccelTpuSimAllReduce* estimate, double* start_seconds);
  /* Appended (check struct_size): estimates, without touching any timeline,
     one collective (ACCEL_TPU_SIM_ALL_GATHER, ...) of `bytes` (the whole
     array: what an all-gather gathers, what a reduce-scatter or all-reduce
     reduces, what each chip of an all-to-all exchanges) among the chips of
     `span_count` spans: span i is `sizes[i]` chips `strides[i]` apart in
     the system's row-major chip order (a device mesh's axes laid on the
     slice). Systems of one device per chip (or megacore) only. */
  AccelStatus* (*estimate_collective)(AccelPluginContext* context, int32_t kind, double bytes, const int64_t* sizes,
                                      const int64_t* strides, int32_t span_count, AccelTpuSimCollective* estimate);
  /* Appended (check struct_size): estimates an all-reduce of `bytes` (each
     chip's part) among the counterpart chips of `slices` slices over the
     data-center network (interconnect.dcn_*), on no timeline. */
  AccelStatus* (*estimate_dcn_all_reduce)(AccelPluginContext* context, double bytes, int32_t slices,
                                          AccelTpuSimCollective* estimate);
} AccelTpuSimExtension;

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_PLUGIN_TPU_SIM_EXTENSION_H_ */
