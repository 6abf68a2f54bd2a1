/*
 * accel plugin API: the plain C boundary between the accel runtime (the host)
 * and a backend plugin. This header is the whole contract; a plugin includes
 * only headers from accel/plugin/.
 *
 * Rules that keep the boundary stable:
 *  - A plugin is a shared library `libaccel-plugin-<name>.so` exporting one
 *    symbol, ACCEL_PLUGIN_ENTRY_POINT, that returns a static AccelPluginApi.
 *  - Versions: a plugin's api_major must equal the host's; its api_minor must
 *    be at least the host's minimum minor (ACCEL_PLUGIN_API_MIN_MINOR).
 *  - Every struct starts with `struct_size`; fields are only ever appended, so
 *    a reader checks struct_size before touching a newer field.
 *  - No C++ type, exception or object crosses the boundary. Every fallible
 *    call returns an AccelStatus* (NULL means OK) made by the host's
 *    status_create, and owned by the host once returned.
 *  - Tensors are dense, row-major and contiguous. The host infers output
 *    shapes and allocates outputs before calling execute().
 *
 * docs/plugin-api.md keeps the changelog of this API.
 */
#ifndef ACCEL_PLUGIN_ACCEL_PLUGIN_H_
#define ACCEL_PLUGIN_ACCEL_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACCEL_PLUGIN_API_MAJOR 1
#define ACCEL_PLUGIN_API_MINOR 7
/* The oldest plugin minor version this host accepts. */
#define ACCEL_PLUGIN_API_MIN_MINOR 0

#define ACCEL_PLUGIN_ENTRY_POINT accel_get_plugin_api
#define ACCEL_PLUGIN_ENTRY_POINT_NAME "accel_get_plugin_api"

#if defined(_WIN32)
#define ACCEL_PLUGIN_EXPORT __declspec(dllexport)
#else
#define ACCEL_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#define ACCEL_MAX_RANK 8

/* Whether the struct at `pointer`, of C type `type`, is large enough to hold
   `field` as its writer sent it (struct_size covers the field): the check
   before reading a field appended in a later version. */
#define ACCEL_STRUCT_HOLDS(pointer, type, field) \
  ((pointer)->struct_size >= offsetof(type, field) + sizeof(((const type*)0)->field))

/* ------------------------------------------------------------------ status */

typedef enum AccelStatusCode {
  ACCEL_STATUS_OK = 0,
  ACCEL_STATUS_INVALID_ARGUMENT = 1,
  ACCEL_STATUS_NOT_FOUND = 2,
  ACCEL_STATUS_RESOURCE_EXHAUSTED = 3,
  ACCEL_STATUS_UNIMPLEMENTED = 4,
  ACCEL_STATUS_INTERNAL = 5,
  ACCEL_STATUS_FAILED_PRECONDITION = 6,
  ACCEL_STATUS_UNAVAILABLE = 7,
  ACCEL_STATUS_OUT_OF_RANGE = 8,
} AccelStatusCode;

/* Opaque; created by AccelHostApi.status_create, freed by the host. */
typedef struct AccelStatus AccelStatus;

/* ------------------------------------------------------------------ dtypes */

typedef enum AccelDType {
  ACCEL_DTYPE_F32 = 0,
  ACCEL_DTYPE_BF16 = 1,
  ACCEL_DTYPE_F16 = 2,
  ACCEL_DTYPE_I32 = 3,
  ACCEL_DTYPE_I64 = 4,
  ACCEL_DTYPE_U8 = 5,
  ACCEL_DTYPE_BOOL = 6, /* one byte per element, 0 or 1 */
  ACCEL_DTYPE_COUNT = 7,
} AccelDType;

/* ---------------------------------------------------------------- op set v1 */

/*
 * The primitive op set. Its version is the plugin API version: new ops are
 * appended with a minor bump and never renumbered. docs/op-set.md gives each
 * op's inputs, outputs, attributes and semantics.
 */
typedef enum AccelOp {
  /* Linear algebra and convolution (MXU / GEMM class). */
  ACCEL_OP_MATMUL = 0,                 /* in: a[...,M,K] b[...,K,N] (after transposes) */
  ACCEL_OP_CONV2D = 1,                 /* in: x NHWC, filter HWIO; out: y NHWC */
  ACCEL_OP_CONV2D_BACKWARD_INPUT = 2,  /* in: dy, filter; out: dx */
  ACCEL_OP_CONV2D_BACKWARD_FILTER = 3, /* in: x, dy; out: dfilter */
  ACCEL_OP_MAX_POOL = 4,               /* in: x NHWC; out: y */
  ACCEL_OP_MAX_POOL_BACKWARD = 5,      /* in: x, dy; out: dx */
  ACCEL_OP_AVG_POOL = 6,
  ACCEL_OP_AVG_POOL_BACKWARD = 7,      /* in: dy; out: dx (shape from output) */

  /* Unary elementwise: in x; out y of the same shape. */
  ACCEL_OP_NEG = 8,
  ACCEL_OP_ABS = 9,
  ACCEL_OP_EXP = 10,
  ACCEL_OP_LOG = 11,
  ACCEL_OP_SQRT = 12,
  ACCEL_OP_RSQRT = 13,
  ACCEL_OP_SQUARE = 14,
  ACCEL_OP_RELU = 15,
  ACCEL_OP_SIGMOID = 16,
  ACCEL_OP_TANH = 17,
  ACCEL_OP_SIGN = 18,
  ACCEL_OP_RECIPROCAL = 19,
  ACCEL_OP_LOGICAL_NOT = 20,

  /* Binary elementwise with NumPy broadcasting: in a, b; out y. */
  ACCEL_OP_ADD = 21,
  ACCEL_OP_SUB = 22,
  ACCEL_OP_MUL = 23,
  ACCEL_OP_DIV = 24,
  ACCEL_OP_MAXIMUM = 25,
  ACCEL_OP_MINIMUM = 26,
  ACCEL_OP_POW = 27,
  ACCEL_OP_EQUAL = 28,         /* comparisons output BOOL */
  ACCEL_OP_NOT_EQUAL = 29,
  ACCEL_OP_LESS = 30,
  ACCEL_OP_LESS_EQUAL = 31,
  ACCEL_OP_GREATER = 32,
  ACCEL_OP_GREATER_EQUAL = 33,
  ACCEL_OP_RELU_BACKWARD = 34,    /* in: dy, x; out: dy * (x > 0) */
  ACCEL_OP_SIGMOID_BACKWARD = 35, /* in: dy, y; out: dy * y * (1 - y) */
  ACCEL_OP_TANH_BACKWARD = 36,    /* in: dy, y; out: dy * (1 - y^2) */
  ACCEL_OP_SELECT = 37,           /* in: cond(BOOL), a, b (broadcast); out: cond ? a : b */

  /* Reductions over a set of axes. */
  ACCEL_OP_REDUCE_SUM = 38,
  ACCEL_OP_REDUCE_MEAN = 39,
  ACCEL_OP_REDUCE_MAX = 40,
  ACCEL_OP_REDUCE_MIN = 41,
  ACCEL_OP_ARGMAX = 42,            /* out: I64 indices along one axis (removed) */

  /* Softmax family over the last axis. */
  ACCEL_OP_SOFTMAX = 43,
  ACCEL_OP_LOG_SOFTMAX = 44,
  ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY = 45, /* in: logits[B,C], labels[B] I32/I64;
                                                 out: loss[B], backprop[B,C] */

  /* Data movement and creation. */
  ACCEL_OP_CAST = 46,         /* out dtype gives the target */
  ACCEL_OP_FILL = 47,         /* no inputs; out filled with value */
  ACCEL_OP_RANDOM_UNIFORM = 48,          /* no inputs; [minval, maxval) */
  ACCEL_OP_RANDOM_NORMAL = 49,           /* no inputs; mean, stddev */
  ACCEL_OP_RANDOM_TRUNCATED_NORMAL = 50, /* no inputs; redrawn beyond 2 stddev */
  ACCEL_OP_TRANSPOSE = 51,
  ACCEL_OP_COPY = 52,          /* in x; out same shape (also reshape materialized) */
  ACCEL_OP_BROADCAST_TO = 53,  /* in x; out shape gives the target */
  ACCEL_OP_SLICE = 54,         /* begin from attributes, size from out shape */
  ACCEL_OP_CONCAT = 55,        /* N inputs along one axis */
  ACCEL_OP_PAD = 56,           /* constant padding */
  ACCEL_OP_GATHER = 57,        /* in: params, indices(I32/I64); along one axis */
  ACCEL_OP_ONE_HOT = 58,       /* in: indices; out [..., depth] */

  /* Fused optimizer updates: update the input buffers in place; no outputs. */
  ACCEL_OP_SGD_UPDATE = 59,     /* in: var, grad[, velocity when momentum != 0] */
  ACCEL_OP_ADAM_UPDATE = 60,    /* in: var, m, v, grad */
  ACCEL_OP_RMSPROP_UPDATE = 61, /* in: var, ms, mom, mg, grad */

  /* Since 1.2. A fusion of elementwise ops (and reductions of their results)
     run as one kernel; AccelFusedElementwiseAttributes holds its program.
     Optional: a plugin that does not claim it gets the unfused ops. */
  ACCEL_OP_FUSED_ELEMENTWISE = 62,

  /* Since 1.3. Elementwise unary, float dtypes only: y = erf(x), the Gauss
     error function (the exact GELU is built on it). */
  ACCEL_OP_ERF = 63,

  /* Since 1.4. CONV2D_BACKWARD_FILTER of a MAX_POOL_BACKWARD's result, run as
     one kernel so that the pooling gradient (the size of the convolution's
     output) need not go to memory and back. in: x (the convolution's input),
     pool_x (the pooling's input: the convolution's output, after its
     activation), pool_dy (the pooled gradient); out: dfilter =
     CONV2D_BACKWARD_FILTER(x, MAX_POOL_BACKWARD(pool_x, pool_dy)).
     AccelPoolFilterGradientAttributes holds both ops' attributes. Optional: a
     plugin that does not claim it gets the two ops. */
  ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER = 64,

  /* Since 1.6. Batch normalization of a training step over every axis but the
     last (NHWC's channels), as TensorFlow's FusedBatchNormV3 with is_training:
     in: x[..., C], scale[C], offset[C]; out: y (x's shape), mean[C],
     variance[C], the biased batch variance that y is normalized with:
       y = (x - mean) * rsqrt(variance + epsilon) * scale + offset.
     AccelBatchNormAttributes holds epsilon. Float dtypes; the statistics in
     x's dtype. Since 1.7, a bfloat16 or float16 x may come with float32
     scale and offset (FusedBatchNormV3's T and U): the op then computes in
     float32, mean and variance are float32 and only y is of x's dtype (the
     same for the gradient: dy, x and dx of x's dtype, the rest float32); the
     host sends that only to a plugin of 1.7 or later. Optional: where a device does not claim it the host composes
     the primitive ops (mean, subtract, square, ...). */
  ACCEL_OP_BATCH_NORM = 65,
  /* Since 1.6. BATCH_NORM's gradient (FusedBatchNormGradV3): in: dy, x,
     scale, mean, variance (BATCH_NORM's two statistics); out: dx, dscale,
     doffset. With xhat = (x - mean) * rsqrt(variance + epsilon) and n the
     elements per channel: doffset = sum(dy), dscale = sum(dy * xhat),
     dx = scale * rsqrt(variance + epsilon) * (dy - (doffset + xhat * dscale) / n).
     Optional, claimed together with BATCH_NORM. */
  ACCEL_OP_BATCH_NORM_BACKWARD = 66,

  ACCEL_OP_COUNT = 67,
} AccelOp;

/* --------------------------------------------------------------- op attributes */

/*
 * Since 1.2: an epilogue applied to the result of MATMUL, CONV2D or
 * CONV2D_BACKWARD_INPUT before it is stored, so that the result makes one
 * trip to memory. In this order, each step only when its flag is set:
 *   y = acc + bias          ACCEL_EPILOGUE_BIAS: one extra input, bias[N],
 *                           N the output's last dimension (after the op's inputs)
 *   y = activation(y)       ACCEL_EPILOGUE_ACTIVATION: `activation` is
 *                           ACCEL_OP_RELU, ACCEL_OP_SIGMOID or ACCEL_OP_TANH
 *   y = mask > 0 ? y : 0    ACCEL_EPILOGUE_RELU_MASK: one extra input (after
 *                           the bias, if any) of the output's shape; this is
 *                           RELU_BACKWARD(y, mask) fused into the gradient
 *                           that feeds it
 * The host sends an epilogue only to a device whose supports_epilogue says
 * yes; epilogue_flags 0 (or a struct from before 1.2) is the plain op.
 */
typedef enum AccelEpilogueFlag {
  ACCEL_EPILOGUE_BIAS = 1,
  ACCEL_EPILOGUE_ACTIVATION = 2,
  ACCEL_EPILOGUE_RELU_MASK = 4,
} AccelEpilogueFlag;

typedef struct AccelMatmulAttributes {
  size_t struct_size;
  int32_t transpose_a;
  int32_t transpose_b;
  /* Since 1.2. */
  int32_t epilogue_flags; /* AccelEpilogueFlag bits */
  AccelOp activation;     /* with ACCEL_EPILOGUE_ACTIVATION */
} AccelMatmulAttributes;

/* Padding is explicit: the host resolves "same"/"valid" into these four. */
typedef struct AccelConv2dAttributes {
  size_t struct_size;
  int32_t stride_h, stride_w;
  int32_t dilation_h, dilation_w;
  int32_t pad_top, pad_bottom, pad_left, pad_right;
  /* Since 1.2; CONV2D and CONV2D_BACKWARD_INPUT only. */
  int32_t epilogue_flags; /* AccelEpilogueFlag bits */
  AccelOp activation;     /* with ACCEL_EPILOGUE_ACTIVATION */
} AccelConv2dAttributes;

typedef struct AccelPoolAttributes {
  size_t struct_size;
  int32_t window_h, window_w;
  int32_t stride_h, stride_w;
  int32_t pad_top, pad_bottom, pad_left, pad_right;
} AccelPoolAttributes;

/* Since 1.4: MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER. `convolution` carries
   no epilogue (epilogue_flags 0). */
typedef struct AccelPoolFilterGradientAttributes {
  size_t struct_size;
  AccelConv2dAttributes convolution;
  AccelPoolAttributes pool;
} AccelPoolFilterGradientAttributes;

/* Since 1.6: BATCH_NORM and BATCH_NORM_BACKWARD. */
typedef struct AccelBatchNormAttributes {
  size_t struct_size;
  double epsilon;
} AccelBatchNormAttributes;

/* Reduce over `axes` (sorted, unique, non-negative) of the input. */
typedef struct AccelReduceAttributes {
  size_t struct_size;
  int32_t num_axes;
  int32_t axes[ACCEL_MAX_RANK];
  int32_t keep_dims;
} AccelReduceAttributes;

typedef struct AccelAxisAttributes { /* ARGMAX, CONCAT, GATHER */
  size_t struct_size;
  int32_t axis;
} AccelAxisAttributes;

typedef struct AccelFillAttributes {
  size_t struct_size;
  double value;
} AccelFillAttributes;

/*
 * Stateless counter-based random numbers (Philox-4x32-10, see
 * accel/plugin/philox.h): element i of the output depends only on
 * (seed, counter_offset + i), so every device produces the same numbers.
 */
typedef struct AccelRandomAttributes {
  size_t struct_size;
  uint64_t seed;
  uint64_t counter_offset;
  double a; /* minval (uniform) or mean (normal) */
  double b; /* maxval (uniform) or stddev (normal) */
} AccelRandomAttributes;

typedef struct AccelTransposeAttributes {
  size_t struct_size;
  int32_t permutation[ACCEL_MAX_RANK];
} AccelTransposeAttributes;

typedef struct AccelSliceAttributes {
  size_t struct_size;
  int64_t begin[ACCEL_MAX_RANK];
} AccelSliceAttributes;

typedef struct AccelPadAttributes {
  size_t struct_size;
  int64_t before[ACCEL_MAX_RANK];
  int64_t after[ACCEL_MAX_RANK];
  double value;
} AccelPadAttributes;

typedef struct AccelOneHotAttributes {
  size_t struct_size;
  double on_value;
  double off_value;
} AccelOneHotAttributes;

typedef struct AccelSgdAttributes {
  size_t struct_size;
  double learning_rate;
  double momentum;
  int32_t nesterov;
} AccelSgdAttributes;

/* Keras rule: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t);
   var -= lr_t * m / (sqrt(v) + epsilon), with t = step (1-based). */
typedef struct AccelAdamAttributes {
  size_t struct_size;
  double learning_rate;
  double beta1, beta2;
  double epsilon;
  int64_t step;
} AccelAdamAttributes;

typedef struct AccelRmspropAttributes {
  size_t struct_size;
  double learning_rate;
  double rho;
  double momentum;
  double epsilon;
  int32_t centered;
} AccelRmspropAttributes;

/*
 * Since 1.2: the program of ACCEL_OP_FUSED_ELEMENTWISE.
 *
 * The fusion iterates over one shape, `shape[rank]`. Every input broadcasts
 * to it by NumPy's rules (aligned on the last axis). Instructions run in
 * order for each element; instruction i yields one value, named i, of
 * `dtype`:
 *   ACCEL_FUSED_LOAD      input `operands[0]`, at this element
 *   ACCEL_FUSED_CONSTANT  `value`, converted to `dtype`
 *   ACCEL_FUSED_OP        `op` on earlier values operands[0..2]: a unary
 *                         elementwise op (NEG .. LOGICAL_NOT, or ERF since
 *                         1.3, sent only to plugins of 1.3 on), a binary one
 *                         (ADD .. TANH_BACKWARD, with the operand order of
 *                         the op), SELECT (cond, a, b) or CAST (to `dtype`)
 * The op's semantics, and the dtype each yields, are exactly the plain op's
 * (docs/op-set.md); a value is computed as the plain op would compute it, so
 * a fusion gives the same numbers as its ops run one by one.
 *
 * Output j stores value `outputs[j].value`. With `reduce_op` 0 it has the
 * iteration shape; otherwise it is that value reduced as REDUCE_SUM,
 * REDUCE_MEAN, REDUCE_MAX or REDUCE_MIN would with `axes` and `keep_dims`.
 * An output may share its buffer with an input of the same shape and dtype
 * that no later element reads (the host's buffer planner writes in place);
 * an unreduced output never overlaps anything else.
 */
typedef enum AccelFusedInstructionKind {
  ACCEL_FUSED_LOAD = 0,
  ACCEL_FUSED_CONSTANT = 1,
  ACCEL_FUSED_OP = 2,
} AccelFusedInstructionKind;

typedef struct AccelFusedInstruction {
  AccelFusedInstructionKind kind;
  AccelOp op;          /* ACCEL_FUSED_OP */
  AccelDType dtype;    /* of the value */
  int32_t operands[3]; /* LOAD: the input index; OP: earlier instruction indices */
  double value;        /* CONSTANT */
} AccelFusedInstruction;

typedef struct AccelFusedOutput {
  int32_t value;     /* the instruction whose value is stored */
  AccelOp reduce_op; /* 0: none; else ACCEL_OP_REDUCE_SUM / _MEAN / _MAX / _MIN */
  int32_t num_axes;  /* reduced axes of the iteration shape (sorted, unique) */
  int32_t axes[ACCEL_MAX_RANK];
  int32_t keep_dims;
} AccelFusedOutput;

/* Limits a plugin may rely on. */
#define ACCEL_FUSED_MAX_INSTRUCTIONS 64
#define ACCEL_FUSED_MAX_INPUTS 16
#define ACCEL_FUSED_MAX_OUTPUTS 8

typedef struct AccelFusedElementwiseAttributes {
  size_t struct_size;
  int32_t rank;
  int64_t shape[ACCEL_MAX_RANK]; /* the iteration shape */
  int32_t num_instructions;
  const AccelFusedInstruction* instructions;
  int32_t num_outputs; /* equals AccelOpCall.num_outputs */
  const AccelFusedOutput* outputs;
} AccelFusedElementwiseAttributes;

/* ------------------------------------------------------------------ tensors */

typedef struct AccelBuffer AccelBuffer; /* opaque, owned by the plugin */

typedef struct AccelTensor {
  size_t struct_size;
  AccelDType dtype;
  int32_t rank;
  int64_t shape[ACCEL_MAX_RANK];
  AccelBuffer* buffer;
  uint64_t byte_offset; /* where the tensor starts inside the buffer */
} AccelTensor;

typedef enum AccelTimeSource {
  ACCEL_TIME_WALL = 0,      /* measured host wall time */
  ACCEL_TIME_DEVICE = 1,    /* measured on the device (e.g. CUDA events) */
  ACCEL_TIME_SIMULATED = 2, /* simulated cycles at a clock */
} AccelTimeSource;

typedef enum AccelBound {
  ACCEL_BOUND_UNKNOWN = 0,
  ACCEL_BOUND_COMPUTE = 1,
  ACCEL_BOUND_MEMORY = 2,
} AccelBound;

/* Time and work of one executed op, reported through AccelHostApi.report_op. */
typedef struct AccelOpProfile {
  size_t struct_size;
  uint64_t sequence;  /* AccelOpCall.sequence of the op */
  AccelOp op;
  AccelTimeSource time_source;
  double start_seconds;    /* device timeline; simulated for ACCEL_TIME_SIMULATED */
  double duration_seconds;
  uint64_t cycles;         /* 0 when not simulated */
  double clock_hz;         /* 0 when not simulated */
  double flops;            /* useful floating-point operations, 0 if unknown */
  double bytes_accessed;   /* off-chip memory traffic, 0 if unknown */
  double utilization;      /* fraction of peak compute, 0 if unknown */
  AccelBound bound;
  const char* detail_json; /* optional extra figures as a JSON object, may be NULL */
  /* Since 1.1. Work that is no primitive op (a plugin's collective): the name
     and category it has in the trace, e.g. "AllReduce" and "collective"; `op`
     and `sequence` are then ignored. NULL for ops. */
  const char* name;
  const char* category;
} AccelOpProfile;

typedef struct AccelOpCall {
  size_t struct_size;
  AccelOp op;
  int32_t num_inputs;
  const AccelTensor* inputs;
  int32_t num_outputs;
  const AccelTensor* outputs;
  const void* attributes; /* the op's Accel*Attributes, or NULL for none */
  uint64_t sequence;      /* increasing id, echoed in AccelOpProfile */
  /* Since 1.7 (read it only where struct_size holds it): ACCEL_OP_CALL_*
     bits. */
  uint32_t flags;
} AccelOpCall;

/* The call is one op of a compiled step (accel::function, Keras's
   jit_compile) being run again from its graph: the ops around it belong to
   the same program, which a compiler for the device would fuse (a timing
   model may cost it so). Not set for eager ops, nor while a step is traced. */
#define ACCEL_OP_CALL_COMPILED 0x1u

/* ----------------------------------------------------------------- devices */

typedef struct AccelProperty {
  const char* key;
  const char* value;
} AccelProperty;

/* Strings stay valid for the life of the plugin. */
typedef struct AccelDeviceInfo {
  size_t struct_size;
  const char* type;        /* "CPU", "GPU", "TPU" or the plugin's own */
  const char* description; /* human-readable model name */
  uint64_t memory_bytes;   /* total memory of the physical device */
  int32_t num_properties;
  const AccelProperty* properties;
} AccelDeviceInfo;

/* How the host opens one logical device on a physical device. */
typedef struct AccelDeviceOptions {
  size_t struct_size;
  int32_t physical_index;
  int32_t logical_index;         /* index among the logical devices of this physical one */
  int32_t logical_count;         /* how many logical devices share the physical one */
  uint64_t memory_limit_bytes;   /* 0 = no limit beyond the device's own */
  int32_t memory_growth;         /* 1 = grow on demand, 0 = reserve up front */
  const char* options;           /* plugin-specific "key=value;key=value", may be NULL */
  void* host_context;            /* pass back to report_op */
} AccelDeviceOptions;

typedef struct AccelMemoryInfo {
  size_t struct_size;
  uint64_t current_bytes;
  uint64_t peak_bytes;
  uint64_t limit_bytes;
} AccelMemoryInfo;

typedef struct AccelDevice AccelDevice;               /* opaque, plugin-owned */
typedef struct AccelPluginContext AccelPluginContext; /* opaque, plugin-owned */
typedef struct AccelRecording AccelRecording;         /* opaque, plugin-owned (since 1.5) */

/* --------------------------------------------------------------- host API */

typedef enum AccelLogLevel {
  ACCEL_LOG_DEBUG = 0,
  ACCEL_LOG_INFO = 1,
  ACCEL_LOG_WARNING = 2,
  ACCEL_LOG_ERROR = 3,
} AccelLogLevel;

/* What the host offers a plugin; valid for the life of the process. */
typedef struct AccelHostApi {
  size_t struct_size;
  uint32_t api_major;
  uint32_t api_minor;
  AccelStatus* (*status_create)(AccelStatusCode code, const char* message);
  void (*log)(AccelLogLevel level, const char* plugin_name, const char* message);
  /* Time and work of an op; may be called after execute() returns (async devices). */
  void (*report_op)(void* host_context, const AccelOpProfile* profile);
  /* A runtime setting ("tpu_sim.preset", ...), or NULL when unset. */
  const char* (*get_setting)(const char* key);
} AccelHostApi;

/* ------------------------------------------------------------- plugin API */

typedef struct AccelPluginApi {
  size_t struct_size;
  uint32_t api_major;
  uint32_t api_minor;
  const char* name;    /* short name, e.g. "cpu"; unique among loaded plugins */
  const char* version; /* the plugin's own version string */

  /* Called once, before anything else. A failure skips the plugin. */
  AccelStatus* (*initialize)(const AccelHostApi* host, AccelPluginContext** context);

  AccelStatus* (*physical_device_count)(AccelPluginContext* context, int32_t* count);
  AccelStatus* (*physical_device_info)(AccelPluginContext* context, int32_t index,
                                       AccelDeviceInfo* info);
  /* Why there are no devices (e.g. "no CUDA driver"), or NULL. */
  const char* (*no_device_reason)(AccelPluginContext* context);

  AccelStatus* (*device_open)(AccelPluginContext* context, const AccelDeviceOptions* options,
                              AccelDevice** device);
  void (*device_close)(AccelDevice* device);

  /* Nonzero when the device runs `op` with principal dtype `dtype`: that of the
     first input, except the values (a, b) of SELECT, and the output for ops
     without inputs (FILL, RANDOM_*). docs/op-set.md lists it per op. */
  int32_t (*supports_op)(AccelDevice* device, AccelOp op, AccelDType dtype);

  AccelStatus* (*buffer_allocate)(AccelDevice* device, uint64_t bytes, AccelBuffer** buffer);
  void (*buffer_free)(AccelDevice* device, AccelBuffer* buffer);
  AccelStatus* (*copy_host_to_device)(AccelDevice* device, const void* source,
                                      AccelBuffer* destination, uint64_t offset, uint64_t bytes);
  AccelStatus* (*copy_device_to_host)(AccelDevice* device, AccelBuffer* source,
                                      uint64_t offset, void* destination, uint64_t bytes);
  AccelStatus* (*copy_device_to_device)(AccelDevice* device, AccelBuffer* source,
                                        uint64_t source_offset, AccelBuffer* destination,
                                        uint64_t destination_offset, uint64_t bytes);

  AccelStatus* (*execute)(AccelDevice* device, const AccelOpCall* call);
  /* Waits for every op and copy issued on the device. */
  AccelStatus* (*synchronize)(AccelDevice* device);
  /* Optional (may be NULL): the device's own memory figures. */
  AccelStatus* (*memory_info)(AccelDevice* device, AccelMemoryInfo* info);
  /* Optional (may be NULL): an extension table by name, or NULL. */
  const void* (*get_extension)(AccelPluginContext* context, const char* name);
  /* Since 1.2. Optional (may be NULL: no epilogues): nonzero when the device
     runs `op` (MATMUL, CONV2D, CONV2D_BACKWARD_INPUT) with principal dtype
     `dtype` and the epilogue `epilogue_flags` / `activation` (AccelEpilogueFlag). */
  int32_t (*supports_epilogue)(AccelDevice* device, AccelOp op, AccelDType dtype, int32_t epilogue_flags,
                               AccelOp activation);
  /* Since 1.5. Optional (all four NULL: the device does not record). Between
     recording_begin and recording_end the device records the execute() and
     copy_device_to_device() calls it is given instead of running them; the
     recording runs them again, on the same buffers and offsets with the same
     attributes, at each recording_replay (on a GPU: a CUDA graph, one launch
     for a whole compiled step). The host records only ops the device claims,
     never copies to or from the host, and keeps every buffer and everything
     the attributes point to alive and unchanged until recording_release.
     A call the device cannot record fails; recording_end must still be
     called, fails as well and gives no recording. */
  AccelStatus* (*recording_begin)(AccelDevice* device);
  AccelStatus* (*recording_end)(AccelDevice* device, AccelRecording** recording);
  AccelStatus* (*recording_replay)(AccelDevice* device, AccelRecording* recording);
  void (*recording_release)(AccelDevice* device, AccelRecording* recording);
} AccelPluginApi;

typedef const AccelPluginApi* (*AccelGetPluginApiFunction)(void);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_PLUGIN_ACCEL_PLUGIN_H_ */
