/*
 * The NCCL extension table, "accel.nccl.v1": collectives over GPU buffers,
 * offered by the CUDA plugin (and by any plugin whose devices NCCL can drive).
 * The distribution strategies use it for MirroredStrategy across GPUs in one
 * process and for GPU tensors across MultiWorkerMirrored workers. Get it with
 *
 *   const AccelNcclExtension* nccl = (const AccelNcclExtension*)
 *       api->get_extension(context, ACCEL_NCCL_EXTENSION_NAME);
 *
 * Same rules as accel_plugin.h: structs start with struct_size (check it before
 * reading a field added later), statuses come from the host's status_create.
 *
 * A clique is made of ranks 0 .. world_size-1, one per GPU, spread over one or
 * more processes. Rank 0's process makes a unique id and hands it to the other
 * processes (the host does that over its own channel, Gloo); each process then
 * creates the communicators of its own devices in one call.
 */
#ifndef ACCEL_PLUGIN_NCCL_EXTENSION_H_
#define ACCEL_PLUGIN_NCCL_EXTENSION_H_

#include <accel/plugin/accel_plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACCEL_NCCL_EXTENSION_NAME "accel.nccl.v1"
#define ACCEL_NCCL_UNIQUE_ID_BYTES 128

/* One rank of a clique, bound to one opened device; owned by the plugin. */
typedef struct AccelNcclCommunicator AccelNcclCommunicator;

typedef enum AccelNcclReduction {
  ACCEL_NCCL_SUM = 0,
  ACCEL_NCCL_MAX = 1,
  ACCEL_NCCL_MIN = 2,
  ACCEL_NCCL_AVERAGE = 3
} AccelNcclReduction;

typedef struct AccelNcclExtension {
  size_t struct_size;
  /* The loaded NCCL's version code (e.g. 22803 for 2.28.3); loads NCCL on the
     first call. Fails with UNAVAILABLE, naming the library, when it cannot. */
  AccelStatus* (*version)(AccelPluginContext* context, int32_t* version);
  /* A new clique id (rank 0's process makes it, the others receive its bytes). */
  AccelStatus* (*unique_id)(AccelPluginContext* context, uint8_t id[ACCEL_NCCL_UNIQUE_ID_BYTES]);
  /* The communicators of this process's `devices[0 .. count)`, ranks
     first_rank .. first_rank + count - 1 of `world_size`, created together
     (one NCCL group, so one thread can create them all); communicators[i]
     drives devices[i], which must stay open until it is destroyed. Blocks
     until every rank of the clique has joined. Two ranks on one physical GPU
     are refused by NCCL (INVALID_ARGUMENT). */
  AccelStatus* (*communicators_create)(AccelPluginContext* context, AccelDevice* const* devices,
                                       int32_t count, const uint8_t id[ACCEL_NCCL_UNIQUE_ID_BYTES],
                                       int32_t first_rank, int32_t world_size,
                                       AccelNcclCommunicator** communicators);
  void (*communicator_destroy)(AccelNcclCommunicator* communicator);
  /* In place: `element_count` elements of `dtype` at buffers[i] + byte_offsets[i]
     (on the device of communicators[i]) become the reduction over every rank of
     the clique. Queued on each device's stream in one NCCL group: ops issued
     later on those devices see the result; the call returns once queued.
     dtypes: float32, bfloat16, float16, int32, int64, uint8. */
  AccelStatus* (*all_reduce)(AccelNcclCommunicator* const* communicators, int32_t count,
                             AccelBuffer* const* buffers, const uint64_t* byte_offsets,
                             uint64_t element_count, AccelDType dtype, AccelNcclReduction reduction);
} AccelNcclExtension;

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_PLUGIN_NCCL_EXTENSION_H_ */
