// Fusion inside recorded graphs (graph_fusion.cpp, docs/graphs.md): a chain of float elementwise
// ops as planned for fused_stages.glsl, run on its own (fused_elementwise.comp) or as the epilogue
// of the norm whose output it starts from (norm.comp's EPILOGUE, norm_kernels.cpp).
#pragma once

#include "gles_device.h"

#include <string>
#include <vector>

namespace tgl {
namespace gles {

struct FusedChain {
    static constexpr int kMaxViews = 8;   // fused_stages.glsl's bindings
    static constexpr int kMaxStages = 8;  // and stages

    struct View {
        TensorArg arg;
        bool read = false;     // loaded: read by a stage before any stage wrote it
        bool written = false;  // some stage stores into it
        int writer = -1;       // the last stage that stored into it so far
    };
    struct Stage {
        const OpCall* call;
        std::string operand[2];  // x[v], r[j], h (the head), or "0.0"
        int out;
    };
    int rank = -1;  // the common output shape
    int64_t shape[TGL_MAX_RANK] = {};
    std::vector<View> views;
    std::vector<Stage> stages;
    // A chain that starts at a norm's output (its head): the norm stores `head` and hands each
    // element to the chain as register h; the chain writes over none of `head_reads` (the norm's
    // inputs, which other invocations of the norm still read) nor over the head.
    const TensorArg* head = nullptr;
    std::vector<const TensorArg*> head_reads;

    FusedChain() = default;
    // A chain to run as the epilogue of `norm` (its output 0 is the head, of the chain's shape).
    explicit FusedChain(const OpCall& norm);

    // Adds op c as the next stage if it continues the chain within `max_views` bound views.
    bool try_add(const OpCall& c, int max_views);
};

// Binds the chain's views from binding base.bindings.size() on and sets fused_stages.glsl's
// defines and uniforms (u_scalars, u_zero); returns each view's element offset in its window.
// Throws where a view does not fit one window (the caller leaves the ops unfused then).
std::vector<int32_t> bind_fused_views(GlesDevice& dev, const FusedChain& ch, Dispatch& base, Defines& defines);

// View `t`'s strides over `shape` (numpy broadcasting: trailing dims aligned, size-1 dims
// repeated with stride 0).
void broadcast_strides(const TensorArg& t, int rank, const int64_t* shape, int64_t* out);

// norm_kernels.cpp: layer_norm and rms_norm with an elementwise chain applied to each element of y
// as it is stored (FusedChain(norm)); `epilogue` nullptr is run_norm. Throws where the chain does
// not fit (more storage blocks than the device allows).
void run_norm_with_epilogue(GlesDevice& dev, const OpCall& call, const FusedChain* epilogue);
// The storage blocks of the norm's pass that stores y, which an epilogue's views come after.
int norm_store_pass_blocks(const GlesDevice& dev, const OpCall& call);

}  // namespace gles
}  // namespace tgl
