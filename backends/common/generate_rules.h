// Shape rules and index plan of the Generate family (arange, full, eye, tril, triu, random_uniform, random_normal).
// Included by validate.h; plan_generate() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct GeneratePlan {
};

// Reads the op's params, checks shapes against them and fills call.generate. Throws tgl::Error.
void plan_generate(OpCall& call, const void* params);

}  // namespace tgl
