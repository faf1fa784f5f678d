// Shape rules and index plan of the Sequence family (rotary embedding (and its backward), FFT, selective scan, token sampling).
// Included by validate.h; plan_sequence() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct SequencePlan {
};

void plan_sequence(OpCall& call, const void* params);

}  // namespace tgl
