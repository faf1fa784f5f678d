// How the GLES plugin runs each op family: the family's run function, and its split rule for
// operands larger than one SSBO window (window_split.cpp). Each family's <family>_kernels.cpp
// registers its entries in register_<family>_kernels(); registered_family_kernels() is generated
// from TGL_OP_FAMILIES (cmake/op_families.cmake).
#pragma once

#include "gles_device.h"

#include <vector>

namespace tgl {
namespace gles {

struct Piece;    // window_split.cpp: one op to run on views that may be cut further
struct CutAxis;  // window_split.cpp: an axis along which a piece may be cut

// A family's rule for cutting an op into pieces whose operands fit one window.
struct SplitRule {
    // Appends the axes along which the piece may be cut.
    void (*cut_axes)(const Piece& p, std::vector<CutAxis>& cuts);
    // Why no cut makes operand t of the piece fit (the end of the RESOURCE_EXHAUSTED message).
    const char* (*refusal)(const Piece& p, const TensorArg& t);
};

struct GlesFamily {
    OpFamily family;
    void (*run)(GlesDevice& dev, const OpCall& call);  // queues a validated, non-empty call
    const SplitRule* split;  // nullptr: not run in pieces (RESOURCE_EXHAUSTED says so)
};

std::vector<GlesFamily> registered_family_kernels();

// The entry of `info`'s family (op_families.cpp); an internal error naming the op if there is none.
const GlesFamily& gles_family(const OpInfo& info);

// The split rules of window_split.cpp, one per family that has one.
extern const SplitRule kElementwiseSplit, kReduceSplit, kArgReduceSplit, kScanSplit, kMatmulSplit, kNormSplit,
    kLayoutSplit, kIndexSplit, kSelectSplit, kGenerateSplit, kConvSplit, kPoolSplit, kAttentionSplit, kSequenceSplit,
    kGradSplit;

}  // namespace gles
}  // namespace tgl
