/*
 * tensorgl plugin ABI, version 1.0.
 *
 * This header is the whole contract between a host (usually through libtensorgl, the loader) and a
 * tensorgl backend plugin. Nothing else defines the ABI. It is C99 and C++ compatible.
 *
 * Rules that keep it stable:
 *   - A plugin exports exactly one symbol, tgl_plugin_init_v1. ABI 2 would use a new name.
 *   - The function table starts with its byte size and the ABI major/minor, and only grows at its
 *     end. Members are marked with the minor version that introduced them.
 *   - Enum values (status codes, dtypes, op ids) are fixed and never renumbered.
 *   - Every op parameter struct starts with its own byte size (struct_size).
 *   - Layouts are pinned by static asserts at the end of this file.
 *
 * Threading: every function may be called from any host thread. Errors: every fallible function
 * returns a tgl_status; the human-readable message of the most recent failing call *on the calling
 * thread* is returned by last_error_message(), so concurrent failures never mix their messages.
 */
#ifndef TENSORGL_PLUGIN_API_H
#define TENSORGL_PLUGIN_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TGL_ABI_MAJOR 1
#define TGL_ABI_MINOR 0

/* Name of the single exported entry point (as a string, for dlsym). */
#define TGL_PLUGIN_ENTRY_NAME "tgl_plugin_init_v1"

#define TGL_MAX_RANK 8

/* ---------------------------------------------------------------------------------------------
 * Status codes. 0 is success; every other value names one class of failure. Values are fixed.
 * ------------------------------------------------------------------------------------------- */
typedef int32_t tgl_status;
enum {
    TGL_OK = 0,
    TGL_ERROR_INVALID_ARGUMENT = 1,  /* a value is not acceptable (unknown dtype, bad param value) */
    TGL_ERROR_NULL_POINTER = 2,      /* a required pointer argument is NULL */
    TGL_ERROR_INVALID_HANDLE = 3,    /* handle was never issued by this plugin/device, or is corrupt */
    TGL_ERROR_STALE_HANDLE = 4,      /* handle was freed/closed: use after free, double free */
    TGL_ERROR_DTYPE_MISMATCH = 5,    /* operand dtypes disagree or are not what the op requires */
    TGL_ERROR_SHAPE_MISMATCH = 6,    /* shapes do not broadcast, or output shape is not the result */
    TGL_ERROR_AXIS_OUT_OF_RANGE = 7, /* an axis is not in [-rank, rank) or is repeated */
    TGL_ERROR_RANK_TOO_LARGE = 8,    /* rank above TGL_MAX_RANK (or the op's own limit) */
    TGL_ERROR_SIZE_OVERFLOW = 9,     /* an element or byte count does not fit in 64 bits */
    TGL_ERROR_OUT_OF_BOUNDS = 10,    /* a view or byte range reaches outside its buffer */
    TGL_ERROR_PARAMS_SIZE = 11,      /* params->struct_size is not a size this op accepts */
    TGL_ERROR_UNKNOWN_OP = 12,       /* op id is not in this ABI's catalogue */
    TGL_ERROR_UNIMPLEMENTED = 13,    /* op (or this dtype/layout of it) is not implemented here */
    TGL_ERROR_RESOURCE_EXHAUSTED = 14, /* out of device or host memory, or above a device limit */
    TGL_ERROR_DEVICE_UNAVAILABLE = 15, /* no such device, or the device was lost (sticky) */
    TGL_ERROR_BACKEND_FAILURE = 16,  /* the driver failed (shader compile/link log, GL error) */
    TGL_ERROR_INTERNAL = 17,         /* a bug in the plugin; the message says where */
    TGL_ERROR_VERSION_MISMATCH = 18, /* ABI versions cannot be reconciled */

    /* Loader statuses (returned by libtensorgl, never by a plugin). */
    TGL_ERROR_PLUGIN_NOT_FOUND = 32,     /* no such file, or no plugin of that name on the path */
    TGL_ERROR_PLUGIN_INSECURE = 33,      /* not a regular file, or world-writable file/directory */
    TGL_ERROR_PLUGIN_NOT_LOADABLE = 34,  /* dlopen failed: not an ELF shared object, missing deps */
    TGL_ERROR_PLUGIN_NO_ENTRY = 35,      /* symbol tgl_plugin_init_v1 not found */
    TGL_ERROR_PLUGIN_INIT_FAILED = 36,   /* the entry point returned an error or no table */
    TGL_ERROR_PLUGIN_ABI_MISMATCH = 37,  /* plugin ABI major differs from the loader's */
    TGL_ERROR_PLUGIN_BAD_TABLE = 38,     /* table smaller than v1.0 or a required function NULL */
    TGL_ERROR_PLUGIN_DUPLICATE = 39      /* a plugin with the same name is already loaded */
};

/* ---------------------------------------------------------------------------------------------
 * Element types. Values are fixed.
 * ------------------------------------------------------------------------------------------- */
typedef uint32_t tgl_dtype;
enum {
    TGL_DTYPE_INVALID = 0,
    TGL_DTYPE_F32 = 1,
    TGL_DTYPE_F16 = 2,  /* IEEE binary16 */
    TGL_DTYPE_BF16 = 3, /* bfloat16: top 16 bits of an f32 */
    TGL_DTYPE_I32 = 4,
    TGL_DTYPE_I8 = 5,
    TGL_DTYPE_U8 = 6,
    TGL_DTYPE_BOOL = 7, /* one byte, 0 or 1 */
    TGL_DTYPE_COUNT_V1_0 = 8
};

/* Bit for a dtype in the dtype masks of tgl_op_caps. */
#define TGL_DTYPE_BIT(dt) (1u << (dt))

/* Byte size of one element, or 0 for an unknown dtype. */
static inline uint32_t tgl_dtype_size(tgl_dtype dt) {
    switch (dt) {
    case TGL_DTYPE_F32: case TGL_DTYPE_I32: return 4;
    case TGL_DTYPE_F16: case TGL_DTYPE_BF16: return 2;
    case TGL_DTYPE_I8: case TGL_DTYPE_U8: case TGL_DTYPE_BOOL: return 1;
    default: return 0;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Handles. Opaque 64-bit values issued by a plugin; 0 is never a valid handle. A plugin checks
 * every handle it is given: a freed, foreign or made-up handle is an error, never a crash.
 * ------------------------------------------------------------------------------------------- */
typedef uint64_t tgl_device;
typedef uint64_t tgl_buffer;

/* ---------------------------------------------------------------------------------------------
 * Tensor descriptor: a view into a buffer.
 *   element (i0..i{rank-1}) lives at byte
 *       byte_offset + elem_size * sum_d(i_d * strides[d])
 *   strides are in elements and may be 0 (broadcast, inputs only) or negative. rank 0 is a scalar.
 *   A tensor with any shape[d] == 0 is empty and valid; an op whose outputs are all empty does
 *   nothing. Entries at index >= rank are ignored.
 *   Helper: tgl_tensor_contiguous() fills row-major strides.
 * ------------------------------------------------------------------------------------------- */
typedef struct tgl_tensor {
    tgl_buffer buffer;
    uint64_t byte_offset;
    tgl_dtype dtype;
    uint32_t rank;
    int64_t shape[TGL_MAX_RANK];
    int64_t strides[TGL_MAX_RANK];
} tgl_tensor;

/* Row-major (C order) contiguous view of `rank` dims at byte_offset in `buffer`. */
static inline tgl_tensor tgl_tensor_contiguous(tgl_buffer buffer, uint64_t byte_offset,
                                               tgl_dtype dtype, uint32_t rank,
                                               const int64_t* shape) {
    tgl_tensor t;
    uint32_t d;
    int64_t stride = 1;
    t.buffer = buffer;
    t.byte_offset = byte_offset;
    t.dtype = dtype;
    t.rank = rank;
    for (d = 0; d < TGL_MAX_RANK; ++d) { t.shape[d] = 0; t.strides[d] = 0; }
    for (d = rank; d-- > 0;) {
        t.shape[d] = shape[d];
        t.strides[d] = stride;
        stride *= shape[d] > 0 ? shape[d] : 1;
    }
    return t;
}

/* ---------------------------------------------------------------------------------------------
 * Op ids. Stable numbers, grouped by family in blocks of 100; never renumbered. An id in this list
 * that a plugin does not implement is reported with supported = 0 by query_op, and run_op returns
 * TGL_ERROR_UNIMPLEMENTED for it. Operands are listed as (inputs) -> (outputs).
 * ------------------------------------------------------------------------------------------- */
typedef uint32_t tgl_op;
enum {
    TGL_OP_INVALID = 0,

    /* Unary elementwise: (x) -> (y), y has x's shape and dtype. params: tgl_unary_params or NULL,
     * except GELU: tgl_gelu_params. Special values follow C99/IEEE: log(0) = -inf, log(x<0) = NaN,
     * sqrt(x<0) = NaN, exp overflows to +inf; NaN in gives NaN out. */
    TGL_OP_ABS = 100,
    TGL_OP_NEG = 101,
    TGL_OP_RELU = 102,    /* max(x, 0); relu(NaN) = NaN */
    TGL_OP_SIGMOID = 103, /* 1 / (1 + exp(-x)) */
    TGL_OP_TANH = 104,
    TGL_OP_EXP = 105,
    TGL_OP_LOG = 106,     /* natural log */
    TGL_OP_SQRT = 107,
    TGL_OP_GELU = 108,    /* x * Phi(x) (erf form) or its tanh approximation, see tgl_gelu_params */
    TGL_OP_SILU = 109,    /* x * sigmoid(x) */

    /* Binary elementwise: (a, b) -> (y). a and b broadcast NumPy-style (shapes right-aligned; a
     * dim of 1 stretches); y must have exactly the broadcast shape. All three share one dtype.
     * params: tgl_binary_params or NULL. */
    TGL_OP_ADD = 200,
    TGL_OP_SUB = 201,
    TGL_OP_MUL = 202,
    TGL_OP_DIV = 203,     /* IEEE division: x/0 = +-inf, 0/0 = NaN */
    TGL_OP_MAXIMUM = 204, /* NaN if either is NaN (torch.maximum) */
    TGL_OP_MINIMUM = 205, /* NaN if either is NaN (torch.minimum) */
    TGL_OP_POW = 206,     /* C99 pow() semantics, including negative bases with integer exponents */

    /* Reductions: (x) -> (y) over a set of axes, see tgl_reduce_params. NaN propagates through
     * max/min. Over an empty axis: sum = 0, prod = 1, mean = NaN, max/min = error. */
    TGL_OP_SUM = 300,
    TGL_OP_MEAN = 301,
    TGL_OP_MAX = 302,
    TGL_OP_MIN = 303,
    TGL_OP_PROD = 304,

    /* Matmul: (A, B) -> (C), C = alpha * op(A) @ op(B) + beta * C, see tgl_matmul_params. */
    TGL_OP_MATMUL = 400,

    /* Planned ops of the catalogue. Their ids are fixed now; their parameter structs arrive with
     * their implementation (in a later ABI minor). Until then query_op reports supported = 0 and
     * run_op returns TGL_ERROR_UNIMPLEMENTED. */
    TGL_OP_SIGN = 110, TGL_OP_LEAKY_RELU = 111, TGL_OP_ELU = 112, TGL_OP_SELU = 113,
    TGL_OP_CELU = 114, TGL_OP_HARDSIGMOID = 115, TGL_OP_HARDSWISH = 116, TGL_OP_SOFTPLUS = 117,
    TGL_OP_MISH = 118, TGL_OP_EXPM1 = 119, TGL_OP_LOG1P = 120, TGL_OP_RSQRT = 121,
    TGL_OP_RECIPROCAL = 122, TGL_OP_SQUARE = 123, TGL_OP_SIN = 124, TGL_OP_COS = 125,
    TGL_OP_ERF = 126, TGL_OP_FLOOR = 127, TGL_OP_CEIL = 128, TGL_OP_ROUND = 129,
    TGL_OP_TRUNC = 130, TGL_OP_CLAMP = 131, TGL_OP_LOGICAL_NOT = 132,
    TGL_OP_FMOD = 207, TGL_OP_REMAINDER = 208, TGL_OP_ATAN2 = 209, TGL_OP_LOGICAL_AND = 210,
    TGL_OP_LOGICAL_OR = 211, TGL_OP_LOGICAL_XOR = 212, TGL_OP_EQ = 213, TGL_OP_NE = 214,
    TGL_OP_LT = 215, TGL_OP_LE = 216, TGL_OP_GT = 217, TGL_OP_GE = 218, TGL_OP_WHERE = 250,
    TGL_OP_ARGMAX = 305, TGL_OP_ARGMIN = 306, TGL_OP_LOGSUMEXP = 307, TGL_OP_VAR = 308,
    TGL_OP_STD = 309, TGL_OP_ANY = 310, TGL_OP_ALL = 311, TGL_OP_NORM = 312,
    TGL_OP_CUMSUM = 313, TGL_OP_CUMPROD = 314,
    TGL_OP_CAST = 500,
    TGL_OP_SOFTMAX = 600, TGL_OP_LOG_SOFTMAX = 601, TGL_OP_LAYER_NORM = 602,
    TGL_OP_RMS_NORM = 603, TGL_OP_GROUP_NORM = 604, TGL_OP_BATCH_NORM = 605,
    TGL_OP_ADD_LAYER_NORM = 606, TGL_OP_ADD_RMS_NORM = 607,
    TGL_OP_CONTIGUOUS = 700, TGL_OP_CONCAT = 701, TGL_OP_PAD = 702, TGL_OP_TILE = 703,
    TGL_OP_ROLL = 704,
    TGL_OP_GATHER = 800, TGL_OP_INDEX_SELECT = 801, TGL_OP_SCATTER = 802,
    TGL_OP_SCATTER_ADD = 803, TGL_OP_ONE_HOT = 804,
    TGL_OP_TOPK = 900, TGL_OP_SORT = 901, TGL_OP_ARGSORT = 902,
    TGL_OP_ARANGE = 1000, TGL_OP_FULL = 1001, TGL_OP_EYE = 1002, TGL_OP_TRIL = 1003,
    TGL_OP_TRIU = 1004, TGL_OP_RANDOM_UNIFORM = 1005, TGL_OP_RANDOM_NORMAL = 1006
};

/* ---------------------------------------------------------------------------------------------
 * Op parameter structs. Each starts with struct_size = sizeof(the struct). Passing NULL params
 * selects the documented defaults. reserved fields must be 0.
 * ------------------------------------------------------------------------------------------- */
typedef struct tgl_unary_params {
    uint32_t struct_size;
    uint32_t reserved;
} tgl_unary_params;

enum { TGL_GELU_ERF = 0, TGL_GELU_TANH = 1 };
typedef struct tgl_gelu_params {
    uint32_t struct_size;
    uint32_t approximate; /* TGL_GELU_ERF (default, exact) or TGL_GELU_TANH (PyTorch 'tanh') */
} tgl_gelu_params;

typedef struct tgl_binary_params {
    uint32_t struct_size;
    uint32_t reserved;
} tgl_binary_params;

/* Reduce over axes[0..n_axes). Axes may be negative (counted from the end) and must not repeat.
 * n_axes == 0 reduces over every axis. keepdims != 0 keeps reduced axes as size 1; otherwise they
 * are removed (reducing every axis then gives a rank-0 output). NULL params: all axes, no keepdims. */
typedef struct tgl_reduce_params {
    uint32_t struct_size;
    uint32_t keepdims;
    uint32_t n_axes;
    int32_t axes[TGL_MAX_RANK];
    uint32_t reserved;
} tgl_reduce_params;

/* C = alpha * op(A) @ op(B) + beta * C.
 *   A is (..., M, K), or (..., K, M) with transpose_a; B is (..., K, N), or (..., N, K) with
 *   transpose_b; both rank >= 2. Batch dims (all but the last two) broadcast NumPy-style; C is
 *   (broadcast batch..., M, N). When beta == 0, C is not read (NaN/garbage in C does not leak in).
 *   C must not overlap A or B. K == 0 gives C = beta * C. NULL params: alpha 1, beta 0, no
 *   transposes. */
typedef struct tgl_matmul_params {
    uint32_t struct_size;
    uint32_t transpose_a;
    uint32_t transpose_b;
    float alpha;
    float beta;
    uint32_t reserved;
} tgl_matmul_params;

/* ---------------------------------------------------------------------------------------------
 * Capability query.
 * ------------------------------------------------------------------------------------------- */
enum {
    TGL_CAP_STRIDED = 1u << 0,   /* inputs may have any strides (incl. negative) */
    TGL_CAP_BROADCAST = 1u << 1, /* inputs broadcast (stride 0 or size-1 dims) */
    TGL_CAP_STRIDED_OUTPUT = 1u << 2 /* outputs may be non-contiguous (no stride 0) */
};

#define TGL_MAX_OP_INPUTS 8
#define TGL_MAX_OP_OUTPUTS 4

typedef struct tgl_op_caps {
    uint32_t struct_size;     /* in: sizeof(tgl_op_caps) (or the v1.0 size); out: bytes filled */
    tgl_op op;
    const char* name;         /* e.g. "matmul"; static storage */
    uint32_t supported;       /* 1 if run_op implements this op on this plugin */
    uint32_t n_inputs;
    uint32_t n_outputs;
    uint32_t max_rank;
    uint32_t flags;           /* TGL_CAP_* */
    uint32_t params_size;     /* sizeof the op's params struct */
    uint32_t input_dtypes[TGL_MAX_OP_INPUTS];   /* TGL_DTYPE_BIT mask per input operand */
    uint32_t output_dtypes[TGL_MAX_OP_OUTPUTS]; /* TGL_DTYPE_BIT mask per output operand */
} tgl_op_caps;

/* ---------------------------------------------------------------------------------------------
 * Plugin and device information.
 * ------------------------------------------------------------------------------------------- */
typedef struct tgl_plugin_info {
    uint32_t struct_size;     /* in: sizeof(tgl_plugin_info) */
    uint32_t abi_major;       /* the plugin's ABI */
    uint32_t abi_minor;
    uint32_t negotiated_minor; /* min(host minor given to init, plugin minor) */
    const char* name;          /* short name, e.g. "gles", "cpu" */
    const char* version;       /* plugin release, semver */
    const char* description;
} tgl_plugin_info;

/* A named device property; both strings are owned by the plugin and live until it is unloaded.
 * Names used by the plugins in this project (values are decimal numbers unless said):
 *   "name", "renderer", "vendor", "api.version" (e.g. "OpenGL ES 3.2 ..."), "driver.version",
 *   "memory.bytes" (total memory the device can use, if known), "limit.max_rank",
 *   "limit.max_buffer_bytes", "limit.max_workgroup_invocations", "limit.max_workgroup_count_x",
 *   "limit.max_shared_memory_bytes", "limit.max_ssbo_bindings", "limit.max_ssbo_block_bytes". */
typedef struct tgl_property {
    const char* name;
    const char* value;
} tgl_property;

/* ---------------------------------------------------------------------------------------------
 * The function table. All members since 1.0 are REQUIRED (non-NULL). Later minors append
 * members; a host must check struct_size and the negotiated minor before calling them.
 * ------------------------------------------------------------------------------------------- */
typedef struct tgl_plugin_api {
    uint64_t struct_size; /* sizeof(tgl_plugin_api) of the plugin's build */
    uint32_t abi_major;   /* TGL_ABI_MAJOR of the plugin's build */
    uint32_t abi_minor;   /* TGL_ABI_MINOR of the plugin's build */

    /* --- since 1.0 --- */

    /* Message of the most recent call on this thread that did not return TGL_OK ("" if none).
     * Valid until the next call into this plugin from the same thread. Never NULL. */
    const char* (*last_error_message)(void);

    tgl_status (*get_plugin_info)(tgl_plugin_info* info);

    /* Number of usable devices; 0 is a valid answer (e.g. no GLES 3.1 driver), not an error. */
    tgl_status (*device_count)(uint32_t* count);
    /* Named properties of device `index`; *props points at plugin-owned storage. */
    tgl_status (*device_properties)(uint32_t index, const tgl_property** props, uint32_t* count);
    tgl_status (*device_open)(uint32_t index, tgl_device* out);
    /* Waits for queued work, frees the device's buffers and makes its handles stale. The device is
       closed whatever the status; a failure of queued work not yet reported is returned here. */
    tgl_status (*device_close)(tgl_device device);

    /* Buffers are untyped byte ranges on one device. Contents after alloc are unspecified. */
    tgl_status (*buffer_alloc)(tgl_device device, uint64_t bytes, tgl_buffer* out);
    tgl_status (*buffer_free)(tgl_device device, tgl_buffer buffer);
    tgl_status (*buffer_size)(tgl_device device, tgl_buffer buffer, uint64_t* bytes);
    /* Copies host memory into the buffer; `src` may be reused as soon as the call returns. */
    tgl_status (*buffer_upload)(tgl_device device, tgl_buffer buffer, uint64_t offset,
                                const void* src, uint64_t bytes);
    /* Waits for all queued work that writes the buffer, then copies into host memory. */
    tgl_status (*buffer_download)(tgl_device device, tgl_buffer buffer, uint64_t offset, void* dst,
                                  uint64_t bytes);
    /* Device-side copy; the ranges may be in the same buffer but must not overlap. */
    tgl_status (*buffer_copy)(tgl_device device, tgl_buffer src, uint64_t src_offset,
                              tgl_buffer dst, uint64_t dst_offset, uint64_t bytes);
    /* Repeats a pattern of 1, 2, 4, 8 or 16 bytes over [offset, offset + bytes); offset and bytes
     * must be multiples of pattern_size. */
    tgl_status (*buffer_fill)(tgl_device device, tgl_buffer buffer, uint64_t offset, uint64_t bytes,
                              const void* pattern, uint32_t pattern_size);

    /* Capability of one op id (no device needed). Unknown ids give TGL_ERROR_UNKNOWN_OP. */
    tgl_status (*query_op)(tgl_op op, tgl_op_caps* caps);

    /* Queues one op. Everything is validated before anything is queued: on error nothing is
     * written. An output may share memory with an input only as the identical view of an
     * elementwise op (in place); any other overlap is rejected (TGL_ERROR_INVALID_ARGUMENT). Returns once queued; errors of the device itself surface at the next
     * synchronize/download. n_inputs/n_outputs must be exactly the op's operand counts. */
    tgl_status (*run_op)(tgl_device device, tgl_op op, const void* params,
                         const tgl_tensor* inputs, uint32_t n_inputs, const tgl_tensor* outputs,
                         uint32_t n_outputs);

    /* Waits until all queued work of the device has finished. */
    tgl_status (*synchronize)(tgl_device device);
} tgl_plugin_api;

/* The one exported symbol of every plugin. The host passes the highest ABI minor it understands;
 * the plugin returns its static table. No side effects (no driver is touched): devices are
 * discovered on the first device call. Returns TGL_OK and sets *out, or an error status. */
typedef tgl_status (*tgl_plugin_init_v1_fn)(uint32_t host_abi_minor, const tgl_plugin_api** out);
tgl_status tgl_plugin_init_v1(uint32_t host_abi_minor, const tgl_plugin_api** out);

/* Short name of a status code, e.g. "TGL_ERROR_SHAPE_MISMATCH". */
static inline const char* tgl_status_name(tgl_status s) {
    switch (s) {
    case TGL_OK: return "TGL_OK";
    case TGL_ERROR_INVALID_ARGUMENT: return "TGL_ERROR_INVALID_ARGUMENT";
    case TGL_ERROR_NULL_POINTER: return "TGL_ERROR_NULL_POINTER";
    case TGL_ERROR_INVALID_HANDLE: return "TGL_ERROR_INVALID_HANDLE";
    case TGL_ERROR_STALE_HANDLE: return "TGL_ERROR_STALE_HANDLE";
    case TGL_ERROR_DTYPE_MISMATCH: return "TGL_ERROR_DTYPE_MISMATCH";
    case TGL_ERROR_SHAPE_MISMATCH: return "TGL_ERROR_SHAPE_MISMATCH";
    case TGL_ERROR_AXIS_OUT_OF_RANGE: return "TGL_ERROR_AXIS_OUT_OF_RANGE";
    case TGL_ERROR_RANK_TOO_LARGE: return "TGL_ERROR_RANK_TOO_LARGE";
    case TGL_ERROR_SIZE_OVERFLOW: return "TGL_ERROR_SIZE_OVERFLOW";
    case TGL_ERROR_OUT_OF_BOUNDS: return "TGL_ERROR_OUT_OF_BOUNDS";
    case TGL_ERROR_PARAMS_SIZE: return "TGL_ERROR_PARAMS_SIZE";
    case TGL_ERROR_UNKNOWN_OP: return "TGL_ERROR_UNKNOWN_OP";
    case TGL_ERROR_UNIMPLEMENTED: return "TGL_ERROR_UNIMPLEMENTED";
    case TGL_ERROR_RESOURCE_EXHAUSTED: return "TGL_ERROR_RESOURCE_EXHAUSTED";
    case TGL_ERROR_DEVICE_UNAVAILABLE: return "TGL_ERROR_DEVICE_UNAVAILABLE";
    case TGL_ERROR_BACKEND_FAILURE: return "TGL_ERROR_BACKEND_FAILURE";
    case TGL_ERROR_INTERNAL: return "TGL_ERROR_INTERNAL";
    case TGL_ERROR_VERSION_MISMATCH: return "TGL_ERROR_VERSION_MISMATCH";
    case TGL_ERROR_PLUGIN_NOT_FOUND: return "TGL_ERROR_PLUGIN_NOT_FOUND";
    case TGL_ERROR_PLUGIN_INSECURE: return "TGL_ERROR_PLUGIN_INSECURE";
    case TGL_ERROR_PLUGIN_NOT_LOADABLE: return "TGL_ERROR_PLUGIN_NOT_LOADABLE";
    case TGL_ERROR_PLUGIN_NO_ENTRY: return "TGL_ERROR_PLUGIN_NO_ENTRY";
    case TGL_ERROR_PLUGIN_INIT_FAILED: return "TGL_ERROR_PLUGIN_INIT_FAILED";
    case TGL_ERROR_PLUGIN_ABI_MISMATCH: return "TGL_ERROR_PLUGIN_ABI_MISMATCH";
    case TGL_ERROR_PLUGIN_BAD_TABLE: return "TGL_ERROR_PLUGIN_BAD_TABLE";
    case TGL_ERROR_PLUGIN_DUPLICATE: return "TGL_ERROR_PLUGIN_DUPLICATE";
    default: return "TGL_ERROR_(unknown status)";
    }
}

/* Size of the v1.0 function table: a loader rejects smaller tables. */
#define TGL_PLUGIN_API_SIZE_V1_0 (16u + 16u * sizeof(void*))

/* ---------------------------------------------------------------------------------------------
 * Layout pins (LP64). A change here is an ABI break.
 * ------------------------------------------------------------------------------------------- */
#if defined(__cplusplus)
#define TGL_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define TGL_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
TGL_STATIC_ASSERT(sizeof(tgl_tensor) == 152, "tgl_tensor layout");
TGL_STATIC_ASSERT(offsetof(tgl_tensor, byte_offset) == 8, "tgl_tensor layout");
TGL_STATIC_ASSERT(offsetof(tgl_tensor, dtype) == 16, "tgl_tensor layout");
TGL_STATIC_ASSERT(offsetof(tgl_tensor, rank) == 20, "tgl_tensor layout");
TGL_STATIC_ASSERT(offsetof(tgl_tensor, shape) == 24, "tgl_tensor layout");
TGL_STATIC_ASSERT(offsetof(tgl_tensor, strides) == 88, "tgl_tensor layout");
TGL_STATIC_ASSERT(sizeof(tgl_unary_params) == 8, "tgl_unary_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_gelu_params) == 8, "tgl_gelu_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_gelu_params, approximate) == 4, "tgl_gelu_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_binary_params) == 8, "tgl_binary_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_reduce_params) == 48, "tgl_reduce_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_reduce_params, n_axes) == 8, "tgl_reduce_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_reduce_params, axes) == 12, "tgl_reduce_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_matmul_params) == 24, "tgl_matmul_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_matmul_params, alpha) == 12, "tgl_matmul_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_matmul_params, beta) == 16, "tgl_matmul_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_op_caps) == 88, "tgl_op_caps layout");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, name) == 8, "tgl_op_caps layout");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, supported) == 16, "tgl_op_caps layout");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, input_dtypes) == 40, "tgl_op_caps layout");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, output_dtypes) == 72, "tgl_op_caps layout");
TGL_STATIC_ASSERT(sizeof(tgl_plugin_info) == 40, "tgl_plugin_info layout");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_info, name) == 16, "tgl_plugin_info layout");
TGL_STATIC_ASSERT(sizeof(tgl_property) == 16, "tgl_property layout");
TGL_STATIC_ASSERT(sizeof(tgl_plugin_api) == TGL_PLUGIN_API_SIZE_V1_0, "tgl_plugin_api v1.0 size");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, last_error_message) == 16, "tgl_plugin_api layout");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, synchronize) == 16 + 15 * 8, "tgl_plugin_api layout");
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORGL_PLUGIN_API_H */
