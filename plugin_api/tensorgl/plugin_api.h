/*
 * tensorgl plugin ABI, version 1.3.
 *   1.0: the table up to synchronize; op ids of the unary .. generate families (100..1006).
 *   1.1: op ids of conv (11xx), pooling (12xx), the linear family (401-405), attention (13xx),
 *        sequence (14xx) and training (15xx), their params structs; timer_begin, timer_end.
 *   1.2: graphs (graph_begin, graph_end, graph_replay, graph_destroy).
 *   1.3: dtypes i64, i16; floor_divide (219) and integer arithmetic (i32, i8, u8); asin .. atanh,
 *        gelu_quick, step (133..143); add_n (260); set_rows (805); graph_replay_with (a replay
 *        with new params fields and swapped buffers, tgl_graph_binding); tgl_arg_reduce_params.select_last_index,
 *        tgl_axis_params.reduction (scatter mul/amin/amax), tgl_selective_scan_params.state_in,
 *        rms_norm's optional beta input, pooling pads of any size.
 * A plugin reports each op it implements through query_op.
 *
 * This header (with ops.h, the op catalogue, which it includes) is the whole contract between a
 * host (usually through libtensorgl, the loader) and a tensorgl backend plugin. Nothing else
 * defines the ABI. It is C99 and C++ compatible.
 *
 * Growth rules. What never changes within major 1:
 *   - the entry point's name and signature (tgl_plugin_init_v1; ABI 2 would use a new name);
 *   - every published value: status codes, dtypes, op ids, enum values of params fields, flags
 *     (never renumbered, never reused for something else, also after an op is withdrawn);
 *   - every published layout: the table's members up to its published sizes
 *     (TGL_PLUGIN_API_SIZE_V1_n), every published size of a struct (TGL_<STRUCT>_SIZE_V1_n in
 *     ops.h), the meaning of every field and of NULL params. Pinned by the static asserts below
 *     and in ops.h, for 64-bit and 32-bit targets;
 *   - TGL_OP_ID_LIMIT (ops.h): every op id of major 1 is below it.
 * What a minor may add:
 *   - members at the end of the function table (a host reads them only when the negotiated minor,
 *     tgl_plugin_abi_minor, is that minor or more; the loader gives older hosts NULL there);
 *   - status codes, dtypes, op ids (in a new or an existing block of 100), enum values;
 *   - fields at the end of a params or info struct, with a new TGL_<STRUCT>_SIZE_V1_n constant.
 *     Plugins accept every published size, and fill the fields a shorter struct lacks with the
 *     defaults that NULL params give (TGL-P-9), so a host built against an older minor keeps working;
 *   - new params structs, for new ops.
 * A change that would break one of these needs ABI 2.
 *
 * Plugin rules. Each is a requirement on every plugin; "loader" says whether libtensorgl checks it
 * when loading (then a plugin that breaks it is refused with the status named), otherwise the
 * conformance suite (tests/conformance) checks it. Tests cite the rule they check by its number.
 *   TGL-P-1  The plugin is an ELF shared object of the host's class and machine, a regular file that
 *            no other user can change. Loader: PLUGIN_NOT_LOADABLE / PLUGIN_INSECURE.
 *   TGL-P-2  It exports tgl_plugin_init_v1, a function, and no other dynamic symbol. Loader: the
 *            entry (PLUGIN_NO_ENTRY); the single export: tests (check_exports).
 *   TGL-P-3  tgl_plugin_init_v1 touches no driver, and returns TGL_OK with its static table (inside
 *            the plugin's own memory, aligned), or an error with a message (last_error_message).
 *            Loader: PLUGIN_INIT_FAILED (error or no table), PLUGIN_BAD_TABLE (table elsewhere).
 *   TGL-P-4  The table's abi_major is TGL_ABI_MAJOR. Loader: PLUGIN_ABI_MISMATCH.
 *   TGL-P-5  The table's struct_size is at least the published size of its abi_minor
 *            (TGL_PLUGIN_API_SIZE_V1_n), and every member up to that minor is non-NULL.
 *            Loader: PLUGIN_BAD_TABLE.
 *   TGL-P-6  get_plugin_info succeeds and names the plugin with a short name (letters, digits,
 *            '_', '-', '.'), unique among loaded plugins. Loader: PLUGIN_INIT_FAILED,
 *            PLUGIN_BAD_TABLE, PLUGIN_DUPLICATE.
 *   TGL-P-7  Nothing crosses the ABI but a status: no exception, abort or driver error. Every
 *            fallible call returns a tgl_status; a failing one sets the message of the calling
 *            thread (last_error_message: which argument, what was expected, what was given).
 *            Tests.
 *   TGL-P-8  Every handle is checked: 0, made-up or foreign is TGL_ERROR_INVALID_HANDLE, freed or
 *            closed is TGL_ERROR_STALE_HANDLE, never a crash. Tests.
 *   TGL-P-9  Params: NULL selects the documented defaults; struct_size may be any published size
 *            of the op's struct (a shorter one gets the defaults for the fields it lacks); any other
 *            size is TGL_ERROR_PARAMS_SIZE. Tests.
 *   TGL-P-10 query_op answers every id of the plugin's minor (supported = 0 where run_op returns
 *            TGL_ERROR_UNIMPLEMENTED) and TGL_ERROR_UNKNOWN_OP for any other id. Tests.
 *   TGL-P-11 run_op validates every argument before it queues anything: on error nothing is
 *            written. Tests.
 *   TGL-P-12 Any host thread may call any function, at once; messages never mix between threads.
 *            Tests.
 *   TGL-P-13 Members of a minor newer than the host's are not called by the host; the plugin
 *            behaves as a plugin of the negotiated minor towards it. Loader: hands the host a copy
 *            of the table with those members NULL.
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
#define TGL_ABI_MINOR 3

/* Name of the single exported entry point (as a string, for dlsym). */
#define TGL_PLUGIN_ENTRY_NAME "tgl_plugin_init_v1"

#define TGL_MAX_RANK 8

/* Bytes of `type` up to and including `last_field`: the published size of a struct as it was
 * when `last_field` was its last (see the published sizes in ops.h). */
#define TGL_STRUCT_SIZE(type, last_field) \
    (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

#if defined(__cplusplus)
#define TGL_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define TGL_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

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
    TGL_ERROR_INDEX_OUT_OF_RANGE = 19, /* an index tensor holds a value outside its axis */

    /* Loader statuses (returned by libtensorgl, never by a plugin). */
    TGL_ERROR_PLUGIN_NOT_FOUND = 32,     /* no such file, or no plugin of that name on the path */
    TGL_ERROR_PLUGIN_INSECURE = 33,      /* not a regular file, or another user could change it */
    TGL_ERROR_PLUGIN_NOT_LOADABLE = 34,  /* dlopen failed: not an ELF shared object, missing deps */
    TGL_ERROR_PLUGIN_NO_ENTRY = 35,      /* symbol tgl_plugin_init_v1 not found, or not a function */
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
    TGL_DTYPE_COUNT_V1_0 = 8,
    /* 1.3. i64: two's complement, 8 bytes little-endian (a GPU without 64-bit integers holds it as
     * two 32-bit words, low word first). i16: two's complement, 2 bytes. Values 10..15 are free;
     * 16..23 are reserved for the GGUF block types. */
    TGL_DTYPE_I64 = 8,
    TGL_DTYPE_I16 = 9,
    TGL_DTYPE_COUNT_V1_3 = 10 /* one past the largest dtype value of 1.3 */
};

/* Bit for a dtype in the dtype masks of tgl_op_caps. */
#define TGL_DTYPE_BIT(dt) (1u << (dt))

/* Byte size of one element, or 0 for an unknown dtype. */
static inline uint32_t tgl_dtype_size(tgl_dtype dt) {
    switch (dt) {
    case TGL_DTYPE_I64: return 8;
    case TGL_DTYPE_F32: case TGL_DTYPE_I32: return 4;
    case TGL_DTYPE_F16: case TGL_DTYPE_BF16: case TGL_DTYPE_I16: return 2;
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
typedef uint64_t tgl_graph; /* since ABI 1.2: a recorded sequence of ops (graph_begin/graph_end) */

/* ---------------------------------------------------------------------------------------------
 * Tensor descriptor: a view into a buffer.
 *   element (i0..i{rank-1}) lives at byte
 *       byte_offset + elem_size * sum_d(i_d * strides[d])
 *   strides are in elements and may be 0 (broadcast, inputs only) or negative. rank 0 is a scalar.
 *   A tensor with any shape[d] == 0 is empty and valid, whatever its strides (it touches no
 *   memory); an op whose outputs are all empty does nothing. Entries at index >= rank are ignored.
 *   An output never overlaps itself: two of its elements at one address is
 *   TGL_ERROR_INVALID_ARGUMENT (naming the output, its shape and strides), checked by a sufficient
 *   rule: leaving out dims of size 1 and taking the others by increasing |stride|, each |stride|
 *   must exceed the span sum(|stride| * (size - 1)) of the dims before it. Every permuted, sliced
 *   or padded view of a contiguous tensor passes; a few interleaved views whose elements are in
 *   fact distinct do not (shape (3, 2), strides (2, 3)).
 *   Helper: tgl_tensor_contiguous() fills row-major strides.
 *   Size: any view that fits its buffer is accepted. A GPU plugin whose shaders see an operand
 *   through one binding of limited size (GLES: GL_MAX_SHADER_STORAGE_BLOCK_SIZE, 128 MiB at the
 *   OpenGL ES 3.1 minimum) runs an op with a larger operand in pieces along its independent axes
 *   (results as for one run, up to the rounding of partial sums and of matmul's accumulation over
 *   K); where the op cannot be cut so (e.g. a sort whose one row exceeds the limit, var over such
 *   an axis) run_op returns TGL_ERROR_RESOURCE_EXHAUSTED naming the operand, the limit and why.
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

#include "ops.h" /* op ids, params structs and their published sizes */

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
    uint32_t n_inputs;        /* the most inputs the op takes: concat and stack take 1..8 */
    uint32_t n_outputs;       /* the most outputs: split takes 1..4. Optional operands (see the
                                 op's comment) count here and are absent when their buffer is 0 */
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
 *   "limit.max_shared_memory_bytes", "limit.max_ssbo_bindings", "limit.max_ssbo_block_bytes",
 *   "program_binary_formats" (GLES: how many program binary formats the driver offers; 0 means
 *   the on-disk program cache is off for this device).
 * Counters of the GLES plugin, over all open devices of the index (a snapshot taken by each
 * device_properties call; like every property string it never changes and lives until the plugin
 * is unloaded, so each call that finds a counter changed keeps a new snapshot, about 1 KiB):
 *   "memory.live_bytes" (bytes of live buffers allocated with buffer_alloc),
 *   "memory.held_bytes" (bytes of every GL buffer store the plugin holds: user buffers, padded to
 *   whole words, plus internal scratch and status buffers; returned when buffers are freed and
 *   devices closed), "program_cache.hits" / ".misses" / ".writes" / ".rejected" (programs loaded
 *   from the on-disk program cache / compiled / written to it / entries found but unusable:
 *   corrupt, truncated, stale or refused by the driver; cumulative since the plugin was loaded),
 *   "gl_thread.tasks" / "gl_thread.busy_ns" (pieces of work run on the devices' GL threads and the
 *   wall time they took there, cumulative: the host's cost of issuing GL commands),
 *   "graph.fused_ops" (recorded ops that graph_end and graph_replay_with planned into fused
 *   kernels, cumulative; docs/graphs.md). */
typedef struct tgl_property {
    const char* name;
    const char* value;
} tgl_property;

/* timer_end's flags. */
#define TGL_TIMER_DISJOINT 1u /* the GPU's timing was disturbed (GL_GPU_DISJOINT_EXT): discard it */

/* What one binding of graph_replay_with changes (since ABI 1.3). Values are fixed. */
enum {
    TGL_GRAPH_BIND_INPUT = 1,  /* inputs[slot] of the op: buffer, byte_offset */
    TGL_GRAPH_BIND_OUTPUT = 2, /* outputs[slot] of the op: buffer, byte_offset */
    TGL_GRAPH_BIND_PARAMS = 3  /* params bytes [slot, slot + value_size) of the op: value */
};

/* One argument of one recorded op, changed for one replay (graph_replay_with). The same layout on
 * 64-bit and 32-bit targets (no pointer). */
typedef struct tgl_graph_binding {
    uint32_t struct_size; /* TGL_GRAPH_BINDING_SIZE_V1_3 */
    uint32_t kind;        /* TGL_GRAPH_BIND_* */
    uint32_t op_index;    /* which recorded op (0: the first run_op of the recording) */
    uint32_t slot;        /* INPUT / OUTPUT: the operand's index; PARAMS: the byte offset in the struct */
    tgl_buffer buffer;    /* INPUT / OUTPUT: the buffer the operand's view is moved to */
    uint64_t byte_offset; /* INPUT / OUTPUT: the view's byte offset in it */
    uint8_t value[8];     /* PARAMS: the new bytes (native byte order), value_size of them */
    uint32_t value_size;  /* PARAMS: 1 .. 8; INPUT / OUTPUT: 0 */
    uint32_t reserved;    /* 0 */
} tgl_graph_binding;
#define TGL_GRAPH_BINDING_SIZE_V1_3 TGL_STRUCT_SIZE(tgl_graph_binding, reserved)

/* ---------------------------------------------------------------------------------------------
 * The function table. All members since 1.0 are REQUIRED (non-NULL), and so are the members of
 * 1.1 in a table whose abi_minor is 1 or more, and so on for each minor up to the table's (TGL-P-5). Later minors append members; a host must check the negotiated minor (tgl_plugin_abi_minor) before calling them. The loader hands the host a
 * copy of the table in which members newer than the negotiated minor are NULL.
 * ------------------------------------------------------------------------------------------- */
typedef struct tgl_plugin_api {
    uint64_t struct_size; /* sizeof(tgl_plugin_api) of the plugin's build */
    uint32_t abi_major;   /* TGL_ABI_MAJOR of the plugin's build */
    uint32_t abi_minor;   /* TGL_ABI_MINOR of the plugin's build */

    /* --- since 1.0 --- */

    /* Message of the most recent call on this thread that did not return TGL_OK ("" if none); a
     * call that returns TGL_OK leaves it as it is (as tgl_loader_last_error does).
     * Valid until the next call into this plugin from the same thread. Never NULL. */
    const char* (*last_error_message)(void);

    tgl_status (*get_plugin_info)(tgl_plugin_info* info);

    /* Number of usable devices; 0 is a valid answer (e.g. no GLES 3.1 driver), not an error. */
    tgl_status (*device_count)(uint32_t* count);
    /* Named properties of device `index`; *props points at plugin-owned storage. */
    tgl_status (*device_properties)(uint32_t index, const tgl_property** props, uint32_t* count);
    /* Every call opens a new, independent device, also for an index that is already open: its own
       buffers (a buffer of one is TGL_ERROR_INVALID_HANDLE on another), queue and errors (on a GPU
       plugin its own context and thread). */
    tgl_status (*device_open)(uint32_t index, tgl_device* out);
    /* Waits for queued work, frees the device's buffers and makes its handles stale. The device is
       closed whatever the status; a failure of queued work not yet reported is returned here.
       Threads the plugin runs for the device are joined before it returns (or, if another host
       thread is inside a call on the device at that moment, when that call returns). Calls that
       other threads make afterwards with the device or its buffers fail with
       TGL_ERROR_STALE_HANDLE, saying the device was closed. */
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
     * written. Outputs overlap neither themselves (see the tensor descriptor) nor each other. An
     * output may share memory with an input only as the identical view (same buffer, offset,
     * dtype, shape and strides) where the op is in place: the elementwise ops (the unary ids 1xx
     * and cast, the binary and comparison ids 2xx, where), tril/triu, and y over x in
     * scatter/scatter_add/set_rows; any other overlap is rejected (TGL_ERROR_INVALID_ARGUMENT). Returns once queued; errors of the device itself
     * surface at the next synchronize/download (errors found on the device: see the Indexing ops).
     * n_inputs/n_outputs must be exactly the op's operand counts. */
    tgl_status (*run_op)(tgl_device device, tgl_op op, const void* params,
                         const tgl_tensor* inputs, uint32_t n_inputs, const tgl_tensor* outputs,
                         uint32_t n_outputs);

    /* Waits until all queued work of the device has finished. */
    tgl_status (*synchronize)(tgl_device device);

    /* --- since 1.1 --- */

    /* Device timing of queued work. timer_begin marks the start of a timed region in the device's
     * queue (it returns at once); timer_end marks its end, waits until the work queued between the
     * two has finished and sets *elapsed_ns to the time the device spent from the first mark to
     * the second, and *flags (may be NULL) to TGL_TIMER_* bits. One region per device at a time:
     * timer_begin while one is open, or timer_end without one, is TGL_ERROR_INVALID_ARGUMENT.
     * A device without a usable timer returns TGL_ERROR_UNIMPLEMENTED from timer_begin: the GLES
     * plugin where the driver lacks GL_EXT_disjoint_timer_query, and on Mesa's software drivers
     * (llvmpipe, softpipe), which offer the extension but whose GL_TIME_ELAPSED queries do not
     * cover compute dispatches. Elsewhere the GLES plugin measures GPU time with
     * GL_TIME_ELAPSED_EXT queries. The CPU plugin runs ops inside run_op, so its timer is the wall
     * time between the two calls. An error of queued work, or a failed
     * timer_end, closes the region. */
    tgl_status (*timer_begin)(tgl_device device);
    tgl_status (*timer_end)(tgl_device device, uint64_t* elapsed_ns, uint32_t* flags);

    /* --- since 1.2 --- */

    /* Graphs: record a sequence of ops once, replay it many times with little host work per op.
     *
     * graph_begin starts a recording on the device: from then on, until graph_end, every run_op on
     * the device (from any host thread) is validated as always and RECORDED instead of queued. A
     * run_op that fails validation returns its error and records nothing; the recording goes on.
     * Buffer transfers (buffer_upload/download/copy/fill), synchronize and the timer act at once
     * while recording; they are not recorded. One recording per device at a time: graph_begin
     * while one is open is TGL_ERROR_INVALID_ARGUMENT.
     *
     * graph_end ends the recording and returns the graph in *out (an empty graph is valid).
     * Without an open recording: TGL_ERROR_INVALID_ARGUMENT.
     *
     * graph_replay queues the recorded ops again, in order, as if run_op had been called again
     * with the same arguments (the same buffers, byte offsets, shapes, strides and params): the new
     * data is whatever the host wrote into those buffers meanwhile. Asynchronous like run_op;
     * errors found on the device (e.g. an index out of range) surface as for run_op, at the next
     * synchronize/download. Nothing is queued on error: a graph of another device
     * (TGL_ERROR_INVALID_HANDLE), a destroyed graph (TGL_ERROR_STALE_HANDLE), or a replay while
     * this device records (TGL_ERROR_INVALID_ARGUMENT).
     *
     * A graph keeps the memory of the buffers its ops use: buffer_free of such a buffer is allowed
     * (its handle becomes stale at once), and its memory lives until every graph using it is
     * destroyed; replays keep reading and writing it. Other memory an op holds internally (scratch)
     * is held likewise. graph_destroy frees the graph (queued replays still complete); device_close
     * destroys the device's graphs, and a recording open at that moment ends with it. */
    tgl_status (*graph_begin)(tgl_device device);
    tgl_status (*graph_end)(tgl_device device, tgl_graph* out);
    tgl_status (*graph_replay)(tgl_device device, tgl_graph graph);
    tgl_status (*graph_destroy)(tgl_device device, tgl_graph graph);

    /* --- since 1.3 --- */

    /* graph_replay with inputs: queues the graph's ops as graph_replay does, except that for THIS
     * replay the bindings change some of their arguments (the graph itself is not changed: the
     * next graph_replay runs the recorded arguments again). One decode step is then one replay:
     * a position or a sampling seed in params, the step's input and output buffers swapped in.
     * Each binding (tgl_graph_binding, below) names an op of the graph by op_index, the position
     * of its run_op among the calls that returned TGL_OK while the graph was recorded (0 first;
     * an op with empty outputs counts, and stays a no-op), and changes either
     *   - an operand (TGL_GRAPH_BIND_INPUT / _OUTPUT, slot = its index in inputs / outputs): its
     *     buffer and byte_offset; dtype, shape and strides stay those recorded. An absent optional
     *     operand (buffer 0) cannot be bound; or
     *   - bytes of the op's params struct (TGL_GRAPH_BIND_PARAMS): value_size (1 .. 8) bytes at
     *     byte offset `slot` of the recorded struct get value[0 .. value_size), e.g.
     *     slot = offsetof(tgl_sample_params, seed), value_size = 8. The range must lie inside the
     *     recorded struct (after its struct_size field); an op recorded with NULL params has none.
     * Every op a binding touches is validated again with its new arguments as run_op would (the
     * new buffers must be live buffers of the device, hold the recorded views, and keep the
     * aliasing rules; the new params values must be valid). Two bindings may not change the same
     * operand or overlapping params bytes. On any error nothing is queued and the message names
     * the binding (bindings[i]) and what was wrong; otherwise as graph_replay. n_bindings 0 is
     * graph_replay. The array's elements are bindings[0].struct_size bytes apart, and every
     * element's struct_size is that one (TGL_GRAPH_BINDING_SIZE_V1_3 is the only one so far). */
    tgl_status (*graph_replay_with)(tgl_device device, tgl_graph graph, const tgl_graph_binding* bindings,
                                    uint32_t n_bindings);
} tgl_plugin_api;


/* The one exported symbol of every plugin. The host passes the highest ABI minor it understands;
 * the plugin returns its static table (a loader never reads a table outside the plugin's own
 * memory). No side effects (no driver is touched): devices are
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
    case TGL_ERROR_INDEX_OUT_OF_RANGE: return "TGL_ERROR_INDEX_OUT_OF_RANGE";
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
/* Size of the v1.1 function table (timer_begin, timer_end appended). */
#define TGL_PLUGIN_API_SIZE_V1_1 (16u + 18u * sizeof(void*))
/* Size of the v1.2 function table (graph_begin, graph_end, graph_replay, graph_destroy appended). */
#define TGL_PLUGIN_API_SIZE_V1_2 (16u + 22u * sizeof(void*))
/* Size of the v1.3 function table (graph_replay_with appended). */
#define TGL_PLUGIN_API_SIZE_V1_3 (16u + 23u * sizeof(void*))

/* ---------------------------------------------------------------------------------------------
 * Layout pins of the mechanics (those of the params structs are in ops.h). A change here is an
 * ABI break. The tensor descriptor is the same everywhere; the structs holding pointers are pinned
 * for LP64 (x86-64, aarch64) and for ILP32 (i386, armhf), where pointers take 4 bytes: the 64-bit
 * fields come first or at 8-byte offsets, so i386's 4-byte alignment of 64-bit types changes no
 * offset. (A CI test compiles this header and the loader with gcc -m32.)
 * ------------------------------------------------------------------------------------------- */
TGL_STATIC_ASSERT(sizeof(tgl_tensor) == 152, "tgl_tensor layout");
TGL_STATIC_ASSERT(offsetof(tgl_tensor, byte_offset) == 8, "tgl_tensor layout");
TGL_STATIC_ASSERT(offsetof(tgl_tensor, dtype) == 16, "tgl_tensor layout");
TGL_STATIC_ASSERT(offsetof(tgl_tensor, rank) == 20, "tgl_tensor layout");
TGL_STATIC_ASSERT(offsetof(tgl_tensor, shape) == 24, "tgl_tensor layout");
TGL_STATIC_ASSERT(offsetof(tgl_tensor, strides) == 88, "tgl_tensor layout");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, last_error_message) == 16, "tgl_plugin_api layout");
TGL_STATIC_ASSERT(sizeof(tgl_plugin_api) == TGL_PLUGIN_API_SIZE_V1_3, "tgl_plugin_api v1.3 size");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, timer_begin) == TGL_PLUGIN_API_SIZE_V1_0, "tgl_plugin_api v1.1 layout");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, graph_begin) == TGL_PLUGIN_API_SIZE_V1_1, "tgl_plugin_api v1.2 layout");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, graph_replay_with) == TGL_PLUGIN_API_SIZE_V1_2, "tgl_plugin_api v1.3 layout");
TGL_STATIC_ASSERT(sizeof(tgl_graph_binding) == 48, "tgl_graph_binding layout");
TGL_STATIC_ASSERT(sizeof(tgl_graph_binding) == TGL_GRAPH_BINDING_SIZE_V1_3, "tgl_graph_binding has no tail padding");
TGL_STATIC_ASSERT(offsetof(tgl_graph_binding, buffer) == 16, "tgl_graph_binding layout");
TGL_STATIC_ASSERT(offsetof(tgl_graph_binding, byte_offset) == 24, "tgl_graph_binding layout");
TGL_STATIC_ASSERT(offsetof(tgl_graph_binding, value) == 32, "tgl_graph_binding layout");
TGL_STATIC_ASSERT(offsetof(tgl_graph_binding, value_size) == 40, "tgl_graph_binding layout");
#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
TGL_STATIC_ASSERT(sizeof(tgl_op_caps) == 88, "tgl_op_caps layout");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, name) == 8, "tgl_op_caps layout");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, supported) == 16, "tgl_op_caps layout");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, input_dtypes) == 40, "tgl_op_caps layout");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, output_dtypes) == 72, "tgl_op_caps layout");
TGL_STATIC_ASSERT(sizeof(tgl_plugin_info) == 40, "tgl_plugin_info layout");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_info, name) == 16, "tgl_plugin_info layout");
TGL_STATIC_ASSERT(sizeof(tgl_property) == 16, "tgl_property layout");
TGL_STATIC_ASSERT(sizeof(tgl_plugin_api) == 200, "tgl_plugin_api layout");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, synchronize) == 16 + 15 * 8, "tgl_plugin_api layout");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, timer_end) == 16 + 17 * 8, "tgl_plugin_api v1.1 layout");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, graph_destroy) == 16 + 21 * 8, "tgl_plugin_api v1.2 layout");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, graph_replay_with) == 16 + 22 * 8, "tgl_plugin_api v1.3 layout");
#elif UINTPTR_MAX == 0xFFFFFFFFu
TGL_STATIC_ASSERT(sizeof(tgl_op_caps) == 84, "tgl_op_caps layout (ILP32)");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, name) == 8, "tgl_op_caps layout (ILP32)");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, supported) == 12, "tgl_op_caps layout (ILP32)");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, input_dtypes) == 36, "tgl_op_caps layout (ILP32)");
TGL_STATIC_ASSERT(offsetof(tgl_op_caps, output_dtypes) == 68, "tgl_op_caps layout (ILP32)");
TGL_STATIC_ASSERT(sizeof(tgl_plugin_info) == 28, "tgl_plugin_info layout (ILP32)");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_info, name) == 16, "tgl_plugin_info layout (ILP32)");
TGL_STATIC_ASSERT(sizeof(tgl_property) == 8, "tgl_property layout (ILP32)");
TGL_STATIC_ASSERT(sizeof(tgl_plugin_api) == 108, "tgl_plugin_api layout (ILP32)");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, synchronize) == 16 + 15 * 4, "tgl_plugin_api layout (ILP32)");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, timer_end) == 16 + 17 * 4, "tgl_plugin_api v1.1 layout (ILP32)");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, graph_destroy) == 16 + 21 * 4, "tgl_plugin_api v1.2 layout (ILP32)");
TGL_STATIC_ASSERT(offsetof(tgl_plugin_api, graph_replay_with) == 16 + 22 * 4, "tgl_plugin_api v1.3 layout (ILP32)");
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORGL_PLUGIN_API_H */
