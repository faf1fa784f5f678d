/*
 * tensorgl runtime: loads an ONNX model, plans it once for one device of a tensorgl plugin and
 * runs it many times. C API (C99 and C++), built as libtensorgl_runtime.
 *
 *   tglrt_device* dev;  tglrt_model* m;
 *   tglrt_device_open("gles", 0, &dev);
 *   tglrt_model_load(dev, "model.onnx", &m);        // parse, check, infer shapes, plan, upload weights
 *   tglrt_model_run(m, inputs, input_bytes, n_in, outputs, output_bytes, n_out);
 *   tglrt_model_free(m);  tglrt_device_close(dev);
 *
 * Everything is planned at load: every shape is static, shape-only subgraphs (Shape, Gather,
 * Concat, ... on int64) are folded on the host, and every other tensor computation is an op of the
 * plugin. Whatever the runtime cannot run exactly (an op, an attribute value, a dtype, a dynamic
 * shape) is refused at load with TGLRT_ERROR_UNSUPPORTED and a message naming the node, its op
 * type and what is missing. See docs/runtime.md.
 *
 * Handles are opaque; every function is safe to call with NULL handles (an error, never a crash).
 * A model is used by one thread at a time; distinct models may run on distinct threads.
 * Errors: each failing call sets a message for the calling thread, read by tglrt_last_error().
 */
#ifndef TENSORGL_RUNTIME_H
#define TENSORGL_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TGLRT_VERSION_MAJOR 0
#define TGLRT_VERSION_MINOR 2
#define TGLRT_MAX_RANK 8

/* Exported symbols (the library is built with hidden visibility). */
#if defined(__GNUC__)
#define TGLRT_API __attribute__((visibility("default")))
#else
#define TGLRT_API
#endif

typedef int32_t tglrt_status;
enum {
    TGLRT_OK = 0,
    TGLRT_ERROR_INVALID_ARGUMENT = 1, /* a bad argument of this API (NULL, wrong count or size) */
    TGLRT_ERROR_IO = 2,               /* a file could not be read or written */
    TGLRT_ERROR_INVALID_MODEL = 3,    /* not a valid ONNX model (parse, checker, shape inference,
                                         sizes, external data outside the model's directory) */
    TGLRT_ERROR_UNSUPPORTED = 4,      /* valid ONNX that this runtime or plugin cannot run */
    TGLRT_ERROR_OUT_OF_RANGE = 5,     /* an int64 value does not fit the int32 the device holds */
    TGLRT_ERROR_PLUGIN = 6,           /* the loader or the plugin failed (its status and message) */
    TGLRT_ERROR_INTERNAL = 7          /* a bug in the runtime; the message says where */
};

/* Element types: ONNX's TensorProto.DataType numbers. */
typedef int32_t tglrt_dtype;
enum {
    TGLRT_DTYPE_UNDEFINED = 0,
    TGLRT_DTYPE_FLOAT = 1,
    TGLRT_DTYPE_UINT8 = 2,
    TGLRT_DTYPE_INT8 = 3,
    TGLRT_DTYPE_UINT16 = 4,  /* held in int32 on the device (docs/runtime.md, "Types the ABI lacks") */
    TGLRT_DTYPE_INT16 = 5,   /* held in int32 */
    TGLRT_DTYPE_INT32 = 6,
    TGLRT_DTYPE_INT64 = 7,   /* held in int32, range-checked */
    TGLRT_DTYPE_BOOL = 9,
    TGLRT_DTYPE_FLOAT16 = 10,
    TGLRT_DTYPE_DOUBLE = 11, /* computed in f32, only with tglrt_load_options.f64_as_f32 */
    TGLRT_DTYPE_UINT32 = 12, /* held in int32, range-checked */
    TGLRT_DTYPE_UINT64 = 13, /* held in int32, range-checked */
    TGLRT_DTYPE_BFLOAT16 = 16
};

typedef struct tglrt_device tglrt_device;
typedef struct tglrt_model tglrt_model;

/* A graph input or output: name, element type and static shape. */
typedef struct tglrt_tensor_info {
    const char* name;  /* owned by the model, valid until tglrt_model_free */
    tglrt_dtype dtype;
    uint32_t rank;
    int64_t shape[TGLRT_MAX_RANK];
    uint64_t bytes;    /* element count * element size (int64: 8 bytes per element) */
} tglrt_tensor_info;

/* One planned node: its time over the runs made while profiling was on. */
typedef struct tglrt_profile_entry {
    const char* node_name; /* the ONNX node's name, or "<op_type>#<index>" when it has none */
    const char* op_type;   /* ONNX op type */
    uint32_t device_ops;   /* plugin ops the node was lowered to (0: folded on the host, or a view) */
    uint32_t runs;         /* profiled runs */
    uint64_t total_ns;     /* summed over the profiled runs */
    uint32_t device_timer; /* 1: the plugin's GPU timer (ABI 1.1); 0: host wall time around
                              run_op + synchronize (the plugin has no timer) */
} tglrt_profile_entry;

/* Message of the most recent failing call on this thread ("" if none). */
TGLRT_API const char* tglrt_last_error(void);
/* "TGLRT_ERROR_UNSUPPORTED" etc. */
TGLRT_API const char* tglrt_status_name(tglrt_status status);

/* Loads a plugin by name ("gles", "cpu") or path through libtensorgl and opens its device
 * `index`. */
TGLRT_API tglrt_status tglrt_device_open(const char* plugin, uint32_t index, tglrt_device** out);
/* Closes the device. Every model of it must have been freed first (else nothing is closed and
 * TGLRT_ERROR_INVALID_ARGUMENT is returned). NULL is ignored. */
TGLRT_API tglrt_status tglrt_device_close(tglrt_device* device);
/* The plugin's short name ("gles"). */
TGLRT_API const char* tglrt_device_plugin_name(const tglrt_device* device);

/* Loads an .onnx file (external data files are read from the model's directory only) or the bytes
 * of a serialized ModelProto (external data refused), and plans it on the device. */
TGLRT_API tglrt_status tglrt_model_load(tglrt_device* device, const char* path, tglrt_model** out);
TGLRT_API tglrt_status tglrt_model_load_bytes(tglrt_device* device, const void* data, size_t size,
                                    tglrt_model** out);
TGLRT_API void tglrt_model_free(tglrt_model* model);

/* An input bound to a value at load: it becomes a constant of the model (shape parameters such as
 * Reshape's shape, Slice's starts, TopK's k that a graph takes as inputs), no longer a run-time
 * input. data: the input's declared dtype and static shape, C order; bytes must match. */
typedef struct tglrt_fixed_input {
    const char* name;
    const void* data;
    uint64_t bytes;
} tglrt_fixed_input;

/* An output carried on the device into an input of the next run (a decoder's KV cache): after
 * every run the output is copied, on the device, into the input's buffer, which the plan keeps
 * for it alone. Same dtype and element count. Once a run has carried it, a run may pass NULL
 * (and 0 bytes) for the input to keep the carried value, instead of uploading one. */
typedef struct tglrt_carry {
    const char* output;
    const char* input;
} tglrt_carry;

typedef struct tglrt_load_options {
    uint32_t struct_size; /* sizeof(tglrt_load_options); the sizes before n_carries and before f64_as_f32 are accepted too */
    uint32_t n_fixed_inputs;
    const tglrt_fixed_input* fixed_inputs;
    /* 1: record the plan once as an ABI 1.2 graph (graph_begin/graph_end) and replay it on every
     * run (less host work per op); a plugin of ABI 1.0/1.1 then fails the load. Profiled runs
     * issue the ops one by one. 0: issue the ops on every run. */
    uint32_t record_graph;
    uint32_t reserved; /* 0 */
    uint32_t n_carries;
    uint32_t reserved2; /* 0 */
    const tglrt_carry* carries;
    /* 1: run a model with double (f64) tensors by holding them as f32 on the device: inputs and
     * weights are rounded to f32 (beyond its range: +-inf), every op computes in f32, outputs are
     * widened back to double. The results have f32's precision, not f64's. 0: such a model fails
     * the load with TGLRT_ERROR_UNSUPPORTED naming the tensor (the ABI has no f64). */
    uint32_t f64_as_f32;
    uint32_t reserved3; /* 0 */
} tglrt_load_options;

/* tglrt_model_load with options (NULL: none). */
TGLRT_API tglrt_status tglrt_model_load_ex(tglrt_device* device, const char* path,
                                           const tglrt_load_options* options, tglrt_model** out);

TGLRT_API uint32_t tglrt_model_input_count(const tglrt_model* model);
TGLRT_API uint32_t tglrt_model_output_count(const tglrt_model* model);
TGLRT_API tglrt_status tglrt_model_input_info(const tglrt_model* model, uint32_t index, tglrt_tensor_info* out);
TGLRT_API tglrt_status tglrt_model_output_info(const tglrt_model* model, uint32_t index, tglrt_tensor_info* out);

/* Runs the model: inputs[i] holds input i (model order, C order, the dtype and shape of its info;
 * input_bytes[i] must equal info.bytes), outputs[i] receives output i (output_bytes[i] must equal
 * info.bytes; NULL and 0 bytes: the output is not downloaded). A carried input (load options)
 * may be NULL with 0 bytes once a run has carried a value into it. Inputs of types the plugins lack (int64, uint32, uint64,
 * int16, uint16; double with f64_as_f32) are converted to the type that holds them, range-checked
 * (TGLRT_ERROR_OUT_OF_RANGE names the input, the element and its value; nothing runs); outputs
 * are converted back, range-checked likewise (docs/runtime.md, "Types the ABI lacks"). Blocks until
 * the outputs are on the host. */
TGLRT_API tglrt_status tglrt_model_run(tglrt_model* model, const void* const* inputs,
                             const uint64_t* input_bytes, uint32_t n_inputs, void* const* outputs,
                             const uint64_t* output_bytes, uint32_t n_outputs);

/* Memory of the plan: weights (initializers and constants uploaded once) and the peak of the
 * activation buffers, which are reused by liveness (graph inputs and outputs included). */
TGLRT_API tglrt_status tglrt_model_memory(const tglrt_model* model, uint64_t* weight_bytes,
                                uint64_t* activation_peak_bytes, uint64_t* activation_naive_bytes);

/* Profiling: while on, every run times each node (which serializes the device's queue); the
 * entries accumulate until profiling is switched on again. */
TGLRT_API tglrt_status tglrt_model_set_profiling(tglrt_model* model, int enabled);
TGLRT_API uint32_t tglrt_model_profile_count(const tglrt_model* model);
TGLRT_API tglrt_status tglrt_model_profile_entry(const tglrt_model* model, uint32_t index,
                                       tglrt_profile_entry* out);

#ifdef __cplusplus
}
#endif

#endif /* TENSORGL_RUNTIME_H */
