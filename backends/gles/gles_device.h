// One open GLES device: its GL thread, buffers, program cache and the dispatch machinery that the
// kernels (<family>_kernels.cpp) use. Implemented by concern: gles_device.cpp (open, timer, run, sync),
// buffers.cpp, submission.cpp, device_status.cpp and program_cache.cpp (ProgramRegistry).
#pragma once

#include "backend.h"
#include "device_errors.h"
#include "egl_devices.h"
#include "gl_thread.h"
#include "op_cache.h"
#include "program_cache.h"
#include "shaders.h"
#include "test_hooks.h"
#include "tuning.h"

#include <atomic>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tgl {
namespace gles {

// Counters of one device index, shared by its open devices and their buffers (which may outlive
// the device); exposed as device properties (gles_backend.cpp).
struct DeviceStats {
    ProgramCacheStats cache;
    std::atomic<int64_t> live_bytes{0};  // bytes of live user buffers (buffer_alloc)
    std::atomic<int64_t> held_bytes{0};  // GL buffer store bytes held: user buffers, scratch, status
    GlThreadCounters gl;                 // over the GL threads of the index's devices
    std::atomic<int64_t> fused_ops{0};   // ops that graph planning fused (graph_fusion.cpp)
};

class GlesBuffer : public DeviceBuffer {
public:
    GlesBuffer(uint64_t bytes, GLuint name, std::shared_ptr<GlThread> gl, std::shared_ptr<FaultHooks> hooks = nullptr,
               uint64_t store = 0, std::shared_ptr<DeviceStats> stats = nullptr, bool user = false)
        : DeviceBuffer(bytes), name_(name), gl_(std::move(gl)), hooks_(std::move(hooks)), store_(store),
          stats_(std::move(stats)), user_(user) {
        if (stats_) {
            stats_->held_bytes += int64_t(store_);
            if (user_) stats_->live_bytes += int64_t(bytes);
        }
    }
    ~GlesBuffer() override {
        gl_->delete_buffer(name_);
        if (hooks_) hooks_->release(store_);
        if (stats_) {
            stats_->held_bytes -= int64_t(store_);
            if (user_) stats_->live_bytes -= int64_t(size());
        }
    }
    GLuint name() const { return name_; }
    // Unique in the process, never reused (GL names are): what the op cache keys buffers by.
    uint64_t serial() const { return serial_; }

private:
    static uint64_t next_serial() {
        static std::atomic<uint64_t> counter{0};
        return counter.fetch_add(1, std::memory_order_relaxed) + 1;
    }
    GLuint name_;
    const uint64_t serial_ = next_serial();
    std::shared_ptr<GlThread> gl_;  // outlives the thread itself: deletions after close are dropped
    std::shared_ptr<FaultHooks> hooks_;  // max_bytes accounting (test hook)
    uint64_t store_;
    std::shared_ptr<DeviceStats> stats_;
    bool user_;  // a buffer_alloc buffer (counts as live), not plugin-internal
};

inline GlesBuffer& gl_buffer(const BufferRef& b) { return static_cast<GlesBuffer&>(*b); }

// An SSBO binding: bytes [offset, offset + size) of a buffer. `keep` holds the buffer until the
// dispatch has been issued.
struct Binding {
    BufferRef keep;
    GLuint name = 0;
    int64_t offset = 0;
    int64_t size = 0;
};

// A uniform value set before a dispatch (ints, uints or floats; a uvec3/uvec4 is 3/4 uints).
// Uniforms the driver optimised away are skipped.
struct UniformValue {
    enum Kind { Int, Uint, Float };
    std::string name;
    Kind kind;
    std::vector<uint32_t> bits;
};

struct Dispatch {
    std::shared_ptr<const Program> program;
    std::vector<Binding> bindings;  // SSBO binding point = index
    std::vector<UniformValue> uniforms;
    uint32_t groups[3] = {1, 1, 1};
};

// A group of dispatches covering a 1-D range of workgroups: each sets u_group_base.
struct GridChunk {
    uint32_t base, x, y;
};

// Host staging memory for uploads (the host's bytes are copied before buffer_upload returns and
// written by the GL thread later). Blocks are recycled, so repeated uploads do not pay for fresh
// pages each time; at most kMaxIdleBytes stay idle in the pool.
class StagingPool : public std::enable_shared_from_this<StagingPool> {
public:
    struct Block {
        std::unique_ptr<uint8_t[]> data;
        size_t capacity = 0;
        size_t size = 0;
    };
    static constexpr size_t kMaxIdleBytes = size_t(128) << 20;
    // A block holding `bytes` bytes (contents unspecified); it returns to the pool when released.
    std::shared_ptr<Block> get(size_t bytes);

private:
    void put(Block* b);
    std::mutex mutex_;
    std::vector<std::unique_ptr<Block>> idle_;
    size_t idle_bytes_ = 0;
};

class GlesDevice : public Device {
public:
    GlesDevice(const DeviceDesc& desc, std::shared_ptr<DeviceStats> stats);
    ~GlesDevice() override;

    BufferRef alloc(uint64_t bytes) override;
    void upload(const BufferRef& dst, uint64_t offset, const void* src, uint64_t bytes) override;
    void download(const BufferRef& src, uint64_t offset, void* dst, uint64_t bytes) override;
    void copy(const BufferRef& src, uint64_t src_offset, const BufferRef& dst, uint64_t dst_offset,
              uint64_t bytes) override;
    void fill(const BufferRef& dst, uint64_t offset, uint64_t bytes, const void* pattern,
              uint32_t pattern_size) override;
    void run(const OpCall& call) override;
    void synchronize() override;
    // synchronize, then an error found on the GPU that no thread has heard of yet.
    void synchronize_for_close() override;
    // GL_EXT_disjoint_timer_query (GL_TIME_ELAPSED_EXT); UNIMPLEMENTED where the driver lacks it.
    void timer_begin() override;
    uint64_t timer_end(uint32_t* flags) override;
    // ABI 1.2 graphs: record() runs the op's planning with submit() capturing its dispatches (on
    // this thread only; other threads' transfers are queued as usual); replay() posts ONE task to
    // the GL thread with every recorded dispatch. Ops with device-side checks get fresh check
    // sequence numbers at each replay (u_check_seq is patched on the GL thread), so that a replay
    // reports and honours its own failures, not an earlier run's.
    std::shared_ptr<RecordedOp> record(const OpCall& call) override;
    void replay(const RecordedOps& ops) override;
    // Fusion inside recorded graphs (graph_fusion.cpp, docs/graphs.md): chains of float elementwise
    // ops become one fused_elementwise.comp op; the graph as recorded under TGL_GRAPH_FUSION=0.
    RecordedOps plan_graph(const std::vector<const OpCall*>& calls, const RecordedOps& ops) override;
    // A recorded op made of what `plan` submits on this thread (record() of run(call)).
    std::shared_ptr<RecordedOp> record_plan(const std::function<void()>& plan);

    // --- for the kernels ---
    const Limits& limits() const { return gl_->limits(); }
    // The compiled variant of `file` with `defines`, compiled on the GL thread on first use (the
    // caller waits, so a compile error is thrown here).
    std::shared_ptr<const Program> program(const std::string& file, const Defines& defines) {
        return programs_.get(*gl_, hooks_.get(), file, defines);
    }
    // The SSBO window for a non-empty view of any dtype: [byte_lo aligned down to the SSBO
    // offset alignment, byte_hi). Sets *elem_offset to the view's element offset relative to the
    // window (a block dtype's: the byte of its element offset's block, block_dtypes.h). Throws RESOURCE_EXHAUSTED when the window exceeds the SSBO block size limit.
    Binding window(const TensorArg& t, const char* what, int32_t* elem_offset) const;
    // Bytes of the window that window() binds for a view (0 for an empty or absent view).
    int64_t window_bytes(const TensorArg& t) const;
    // Largest SSBO window in bytes (the block size limit, capped so that element indices fit in
    // 32-bit signed integers; lowered by TGL_GLES_TEST_FAULT=max_window).
    int64_t max_window_bytes() const;
    // Byte alignment of window starts: lcm(GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, 16), so that
    // a 16-byte aligned view starts a vec4 boundary of its window.
    int64_t window_alignment() const;
    // Invocations of the 1-D kernels (a power of two within the limits).
    int workgroup_size() const { return wg_size_; }
    // The subgroup size the kernels use, 0 for none (kernel_subgroup_size of egl_devices.h: the
    // device's GL_KHR_shader_subgroup, off under TGL_GLES_LIMITS=minimum and TGL_TUNE_SUBGROUPS=0).
    int subgroup_size() const { return subgroup_size_; }
    // Adds def::kSubgroupSize (glsl/subgroup.glsl) to a variant of `wg` invocations along x where
    // the kernels use subgroups and `wg` is a multiple of their size; returns whether it did.
    bool add_subgroup_define(Defines& defines, int wg) const {
        if (!subgroup_size_ || wg % subgroup_size_) return false;
        defines.emplace_back(def::kSubgroupSize, std::to_string(subgroup_size_));
        return true;
    }
    // Workgroup size and vec4s per invocation of the streaming kernels (buffer_bytes.comp and
    // elementwise.comp's VEC4): TGL_TUNE_STREAM (tuning.h), the workgroup size within the device's
    // limits.
    StreamShape stream_shape() const { return stream_; }
    // Whether kernel plans keep loop_budget.h's per-invocation loop budget: on Mesa's software
    // renderers, which cut longer loops short, and under TGL_GLES_LIMITS=minimum.
    bool loop_limited() const { return software_timer_ || limits().minimum; }
    // Whether the device is Mesa's software renderer (llvmpipe/softpipe).
    bool software() const { return software_timer_; }
    // Whether kernels may multiply f16 operands in packed f16 (f16vec2, GL_NV_gpu_shader5; off
    // under TGL_GLES_LIMITS=minimum and TGL_TUNE_HALF=off): docs/half-precision.md.
    bool half_arith() const { return limits().f16_arith && !tuning_.half.off; }
    // The TGL_TUNE_* knobs read when this device was opened (tuning.h).
    const Tuning& tuning() const { return tuning_; }
    // Splits `groups` workgroups into dispatches within max_count_x * max_count_y.
    std::vector<GridChunk> split_grid(uint64_t groups) const;
    // A device-side scratch buffer of at least `bytes` (reused: queued work is ordered). One per
    // device, grown to the largest request; one above kScratchKeepBytes is released at the next
    // synchronize (queued work holds its own reference), so that it does not stay held.
    BufferRef scratch(uint64_t bytes);
    static constexpr uint64_t kScratchKeepBytes = uint64_t(4) << 20;
    // Queues the dispatches in order, with a memory barrier after each.
    void submit(const char* what, std::vector<Dispatch> dispatches);
    // A kernel's measured choice among plans that give the same bits and differ only in speed
    // (gguf_kernels.cpp: the decode GEMV's workgroup size): the index of the fastest of the
    // dispatch lists `plans()` builds, measured on this device once per `key` and kept. Each plan
    // runs in batches, the rounds alternating the plans' order, and each plan's best batch counts
    // (GL_TIMESTAMP queries around the runs, on the GL thread, now: never captured or
    // recorded; the plans must not write what the caller's ops read). Plan 0 is the default: another
    // is chosen only where it is at least kPlanMargin faster. 0, measuring nothing, where the
    // device has no GPU timestamps (a software renderer; `anywhere`: measure there too, for tests).
    int fastest_plan(const std::string& key, const std::function<std::vector<std::vector<Dispatch>>()>& plans,
                     bool anywhere = false);
    // fastest_plan's batches: runs of a plan of about kPlanBatchNs (1 to 256 runs), plan 0's
    // repeated (for at most about kPlanWarmNs) until three lie within half the margin, then
    // kPlanRounds of every plan (two where they take longer than kPlanWarmNs).
    static constexpr uint64_t kPlanBatchNs = 500000, kPlanWarmNs = 100000000;
    static constexpr int kPlanRounds = 6;
    static constexpr double kPlanMargin = 0.02;
    // What `plan` submits on this thread, captured instead of queued (record(), run_in_pieces()).
    std::vector<Dispatch> capture(const std::function<void()>& plan);
    // A plugin-internal buffer of `bytes` (not counted as a live user buffer).
    BufferRef internal_buffer(uint64_t bytes) { return alloc_buffer(bytes, false); }
    // Device-side errors (glsl/device_status.glsl): for an op that checks its data on the GPU, the
    // status buffer's binding and a fresh sequence number (u_check_seq). Every call that waits
    // (synchronize, download, timer_end, and so device_close) reads the status after the wait and
    // clears it (the device stays usable); a recorded error goes to the host threads whose checked
    // ops ran since the last read (device_errors.h), and each throws it from its next wait.
    struct DeviceCheck {
        Binding status;
        uint32_t seq;
    };
    DeviceCheck device_check();

private:
    // A buffer of `bytes`; `user`: counted as live (buffer_alloc), else plugin-internal.
    BufferRef alloc_buffer(uint64_t bytes, bool user);
    std::shared_ptr<GlThread> gl_;
    // What submit() last bound on the GL thread (GL thread only), so that a dispatch repeating
    // the program or an SSBO range of the previous one skips those GL calls.
    struct BoundState {
        GLuint program = 0;
        std::vector<Binding> ssbo;  // name/offset/size per binding point (keep unused)
        uint64_t deletions = ~uint64_t(0);
        uint32_t flush_every = 0;   // TGL_TUNE_SUBMIT's flush<N> (0: none)
        uint32_t unflushed = 0;     // dispatches issued since issue() last flushed
    };
    // On the GL thread: the start of a posted batch of dispatches (the slow test hook, and
    // forgetting bindings when buffer names may have been reused), then one dispatch. `resolved`
    // (a recorded op's): the program's record of each of d's uniforms, nullptr where optimised
    // away; without it each is looked up by name. Uniform number `seq_uniform` (if >= 0) is set
    // to `seq` instead of its recorded value.
    static void begin_batch(BoundState& b, GlThread* gl, uint32_t slow);
    static void issue(BoundState& b, const Dispatch& d, const Program::Uniform* const* resolved = nullptr,
                      int seq_uniform = -1, uint32_t seq = 0);
    // On the GL thread: a recorded op's dispatches (submission.cpp's GlesRecordedOp), its device
    // checks numbered by seqs[0 ..].
    static void issue_recorded(BoundState& b, const RecordedOp& op, const uint32_t* seqs);
    // Queues `call` through the op cache (op_cache.h): its recorded plan, recorded now if it has
    // none. False where the cache is off (TGL_TUNE_SUBMIT=cache0, test hooks) or this thread is
    // capturing (record(), run_in_pieces()): then the caller plans and submits it.
    bool run_cached(const OpCall& call);
    std::unique_ptr<OpCache> op_cache_;  // null: off
    // Internal buffers allocated so far: an op whose planning allocated one is not cached.
    std::atomic<uint64_t> internal_allocs_{0};
    // Bumped whenever scratch_ changes (scratch_mutex_ held): op cache entries hold the scratch.
    std::atomic<uint64_t> scratch_gen_{0};
    // Fresh device-check sequence numbers for a replay, n of them (never 0).
    void next_check_seqs(std::vector<uint32_t>& out, size_t n);
    std::shared_ptr<BoundState> bound_ = std::make_shared<BoundState>();
    std::shared_ptr<DeviceStats> stats_;
    ProgramRegistry programs_{stats_->cache};
    bool timer_available_ = false;  // GL_EXT_disjoint_timer_query
    bool timestamps_ = false;       // its GL_TIMESTAMP_EXT counter has bits (any renderer)
    std::mutex plans_mutex_;
    std::map<std::string, int> plan_choice_;  // fastest_plan's choices by key
    bool software_timer_ = false;   // llvmpipe/softpipe: the extension is there but useless
    GLuint timer_query_ = 0;        // GL thread only
    std::shared_ptr<FaultHooks> hooks_;  // TGL_GLES_TEST_FAULT (nullptr: none)
    std::shared_ptr<PlanTrace> trace_;   // TGL_GLES_TEST_PLAN_TRACE (nullptr: none)
    int wg_size_ = 64;
    int subgroup_size_ = 0;
    bool graph_fusion_ = true;  // TGL_GRAPH_FUSION (read when the device is opened)
    Tuning tuning_;
    StreamShape stream_;
    std::mutex scratch_mutex_;
    BufferRef scratch_;
    std::shared_ptr<StagingPool> staging_ = std::make_shared<StagingPool>();
    std::mutex status_mutex_;
    BufferRef status_;  // device_status.glsl's words; allocated by the first device_check()
    uint32_t check_seq_ = 0;
    std::shared_ptr<DeviceErrorRoute> errors_ = std::make_shared<DeviceErrorRoute>();
    // On the GL thread after a wait by host thread `waiter`: reads the device-side status, clears
    // it and hands a recorded error to errors_ (raise_device_error() throws it on each thread).
    void read_device_status(std::thread::id waiter);
    // On a host thread after its wait: throws the device-side error kept for it, if any.
    void raise_device_error() { errors_->raise_for_this_thread(); }
    // On the GL thread: waits for all GL work issued so far (a fence, bounded by the time limit),
    // then checks for a GPU reset.
    void wait_idle(const char* what);
};

// gguf_kernels.cpp: whether an input is of a GGUF block dtype, and the kernels of such a call
// (dequantize, linear/grouped_linear with a block W, index_select of a block table), which bind
// their operands in windows themselves.
bool is_block_call(const OpCall& call);
void run_block_call(GlesDevice& dev, const OpCall& call);
// window_split.cpp: runs the call in pieces when an operand is larger than one SSBO window (true),
// else does nothing (false).
bool run_in_pieces(GlesDevice& dev, const OpCall& call);
// One per op family, each in its <family>_kernels.cpp (which registers it: gles_families.h).
void run_elementwise(GlesDevice& dev, const OpCall& call);
void run_reduce(GlesDevice& dev, const OpCall& call);  // reduce_kernels.cpp
void run_arg_reduce(GlesDevice& dev, const OpCall& call);
void run_scan(GlesDevice& dev, const OpCall& call);  // also cumsum_backward (Grad)
// matmul_kernels.cpp. With a piece: a piece of grouped_linear run in pieces (IndexPiece, below):
// the whole index was checked under piece->check already (add_expert_index_check), and W and the
// bias hold experts [axis_lo, axis_lo + their size): the rows of other experts are left to the
// other pieces. scratch_floor: the caller's data holds the scratch's first bytes (a product
// inside another op's plan, whose operands are in the scratch): the matmul's own scratch words
// (side operands, split-K partials) go after them.
struct IndexPiece;
void run_matmul(GlesDevice& dev, const OpCall& call);
void run_matmul(GlesDevice& dev, const OpCall& call, const IndexPiece* piece, int64_t scratch_floor = 0);
void add_expert_index_check(GlesDevice& dev, const OpCall& call, const GlesDevice::DeviceCheck& check,
                            std::vector<Dispatch>& ds);
void run_norm(GlesDevice& dev, const OpCall& call);
// norm_kernels.cpp, for a softmax, log_softmax, layer_norm or rms_norm row larger than one window
// (window_split.cpp): the row runs in pieces of whole chunks of norm.comp's ROW_CHUNKS. The plan:
// the chunk (within the loop budget, at most max_piece elements), the chunks of a piece, the
// chunks of the row. Every piece's stats pass, then every piece's apply pass, each a run_norm with
// its NormRowPiece; the scratch (norm_row_piece_words of the whole op's call) holds every piece's
// partial statistics, then the params of the piece applied.
struct NormRowPieces {
    uint64_t chunk, chunks_per_piece, splits;
};
NormRowPieces plan_norm_row_pieces(const GlesDevice& dev, const OpInfo& info, uint64_t row_len, uint64_t max_piece);
uint64_t norm_row_piece_words(const OpCall& call, const NormRowPieces& plan);
struct NormRowPiece {
    const NormRowPieces* plan = nullptr;
    BufferRef scratch;
    uint64_t scratch_bytes = 0;
    uint64_t chunk_lo = 0;  // the piece's first chunk of the row
    uint64_t row_len = 0;   // the whole row's elements
    bool stats = true;      // the stats pass (else the apply pass)
};
void run_norm(GlesDevice& dev, const OpCall& call, const NormRowPiece* piece);
// ... and the general form: a piece of a row, or (not both) a fused elementwise chain applied as y
// is stored (graph_fusion.h, run_norm_with_epilogue)
struct FusedChain;
void run_norm(GlesDevice& dev, const OpCall& call, const NormRowPiece* piece, const FusedChain* epilogue);
void run_layout(GlesDevice& dev, const OpCall& call);
// index_kernels.cpp. A piece of gather/index_select/scatter/scatter_add run in pieces
// (window_split.cpp): the whole index tensor was checked under `check` already (add_index_check),
// and x (scatter: x and y) is the window [axis_lo, axis_lo + its size) of the indexed axis:
// elements whose index lies outside it are left to the other pieces.
struct IndexPiece {
    GlesDevice::DeviceCheck check;
    int64_t axis_lo = 0;
    // Grad (cross_entropy(_backward), embedding_backward; axis_lo: embedding_backward's first row
    // of dW): the scratch that the whole op's check filled (add_grad_index_check), the whole op's
    // call (the scratch's layout), and the piece's first row of it (cross_entropy: position;
    // embedding_backward: token; the piece's rows are consecutive rows of the whole op).
    BufferRef scratch = {};
    const OpCall* whole = nullptr;
    int64_t row_lo = 0;
};
void run_index(GlesDevice& dev, const OpCall& call, const IndexPiece* piece = nullptr);
// The check and report passes of an index op over its whole index tensor: in one window, or in
// `windows` (an index tensor larger than one window, window_split.cpp): views of consecutive
// row-major positions of it, each with its first position in the whole.
struct IndexWindow {
    TensorArg view;
    int64_t first = 0;
};
void add_index_check(GlesDevice& dev, const OpCall& call, const GlesDevice::DeviceCheck& check,
                     std::vector<Dispatch>& ds, const std::vector<IndexWindow>& windows = {});
void run_select(GlesDevice& dev, const OpCall& call);
void run_generate(GlesDevice& dev, const OpCall& call);
void run_conv(GlesDevice& dev, const OpCall& call);
// conv_kernels.cpp, for a piece of a convolution over part of its input channels (window_split.cpp):
// with accumulate, y (f32) holds the earlier pieces' sum, and this piece adds its own to it.
void run_conv(GlesDevice& dev, const OpCall& call, bool accumulate);
void run_pool(GlesDevice& dev, const OpCall& call);
void run_attention(GlesDevice& dev, const OpCall& call);
void run_sequence(GlesDevice& dev, const OpCall& call);
void run_grad(GlesDevice& dev, const OpCall& call);
// grad_kernels.cpp, for cross_entropy(_backward) and embedding_backward run in pieces
// (window_split.cpp): the passes over the whole op before its pieces (the target or index check,
// cross_entropy's count of targets, embedding_backward's sort of the tokens by index and each
// value's run of them) into a scratch that the pieces share (returned); a piece (run_grad with
// the IndexPiece holding that scratch), which checks nothing again; and the passes after the
// pieces (cross_entropy's sum or mean over every row's loss, in the unsplit op's order).
BufferRef add_grad_index_check(GlesDevice& dev, const OpCall& call, const GlesDevice::DeviceCheck& check);
void run_grad(GlesDevice& dev, const OpCall& call, const IndexPiece& piece);
void add_grad_after_pieces(GlesDevice& dev, const OpCall& call, const IndexPiece& piece);
// elementwise_kernels.cpp: the function of a float elementwise op in glsl/elementwise_ops.glsl
// (tgl_op_<name>), and whether an op is one of glsl/dtype_ops.glsl's bits-to-bits ops.
std::string float_op_function(const OpCall& call);
bool is_bits_op(tgl_op op);
// elementwise_kernels.cpp: the device's byte fills and copies.
void run_fill(GlesDevice& dev, const BufferRef& dst, uint64_t offset, uint64_t bytes, const void* pattern,
              uint32_t pattern_size);
// Copies bytes (a multiple of 16) between 16-byte aligned offsets by buffer_bytes.comp.
void run_buffer_copy(GlesDevice& dev, const BufferRef& src, uint64_t src_offset, const BufferRef& dst,
                     uint64_t dst_offset, uint64_t bytes);

// Helpers for building uniforms.
UniformValue uniform_int(const char* name, std::vector<int32_t> values);
UniformValue uniform_uint(const char* name, std::vector<uint32_t> values);
UniformValue uniform_float(const char* name, float value);

}  // namespace gles
}  // namespace tgl
