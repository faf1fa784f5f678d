// How the GLES plugin runs each op family: one line per family. The run functions are in the
// families' <family>_kernels.cpp (declared in gles_device.h), the split rules
// in window_split.cpp.
#include "gles_families.h"

#include "op_families.h"

namespace tgl {
namespace gles {
namespace {

const GlesFamily kFamilies[] = {
    {OpFamily::Unary, run_elementwise, &kElementwiseSplit},
    {OpFamily::Binary, run_elementwise, &kElementwiseSplit},
    {OpFamily::Ternary, run_elementwise, &kElementwiseSplit},
    {OpFamily::Reduce, run_reduce, &kReduceSplit},
    {OpFamily::ArgReduce, run_arg_reduce, &kArgReduceSplit},
    {OpFamily::Scan, run_scan, &kScanSplit},
    {OpFamily::Matmul, run_matmul, &kMatmulSplit},
    {OpFamily::Normalize, run_norm, &kNormSplit},
    {OpFamily::Layout, run_layout, &kLayoutSplit},
    {OpFamily::Index, [](GlesDevice& dev, const OpCall& call) { run_index(dev, call); }, &kIndexSplit},
    {OpFamily::Select, run_select, &kSelectSplit},
    {OpFamily::Generate, run_generate, &kGenerateSplit},
    {OpFamily::Conv, run_conv, &kConvSplit},
    {OpFamily::Pool, run_pool, &kPoolSplit},
    {OpFamily::Attention, run_attention, &kAttentionSplit},
    {OpFamily::Sequence, run_sequence, nullptr},
    {OpFamily::Grad, run_grad, nullptr},
};

}  // namespace

const GlesFamily& gles_family(const OpInfo& info) {
    return family_entry(kFamilies, info, "backends/gles/op_families.cpp");
}

}  // namespace gles
}  // namespace tgl
