// Argument validation and shape rules, once for both plugins. validate_op() turns the raw ABI
// arguments of run_op into an OpCall: every handle resolved, every view checked against its
// buffer, params defaulted, and a family-specific plan (index arithmetic) that kernels follow.
#pragma once

#include "op_catalogue.h"

// Index plans of the op families, each in its own file.
#include "attention_rules.h"
#include "conv_rules.h"
#include "elementwise_rules.h"
#include "generate_rules.h"
#include "grad_rules.h"
#include "index_rules.h"
#include "layout_rules.h"
#include "matmul_rules.h"
#include "norm_rules.h"
#include "pool_rules.h"
#include "reduce_rules.h"
#include "select_rules.h"
#include "sequence_rules.h"

#include <functional>
#include <memory>
#include <variant>
#include <vector>

namespace tgl {

class DeviceBuffer;

// A checked view. offset and strides are in elements of dtype; an empty view's strides are all 0
// (it touches no memory, so whatever the caller gave is never used).
struct TensorArg {
    std::shared_ptr<DeviceBuffer> buffer;
    tgl_dtype dtype = TGL_DTYPE_INVALID;
    int rank = 0;
    int64_t shape[TGL_MAX_RANK] = {};
    int64_t strides[TGL_MAX_RANK] = {};
    int64_t offset = 0;  // element offset of element (0, ..., 0)
    int64_t numel = 0;
    // Lowest and highest byte touched (inclusive range [lo, hi)); empty views have lo == hi.
    int64_t byte_lo = 0, byte_hi = 0;
    // False for an absent optional operand (buffer handle 0): no buffer, rank 0, numel 0.
    bool present() const { return buffer != nullptr; }
};

// One plan per family (the Reduce and ArgReduce families share ReducePlan); monostate until planned.
using FamilyPlan = std::variant<std::monostate, ElementwisePlan, ReducePlan, ScanPlan, MatmulPlan, NormPlan, LayoutPlan,
                                IndexPlan, SelectPlan, GeneratePlan, ConvPlan, PoolPlan, AttentionPlan, SequencePlan,
                                GradPlan>;

struct OpCall {
    const OpInfo* info = nullptr;
    // The caller's params struct (NULL: defaults); valid only while the call is being run or recorded.
    const void* params = nullptr;
    tgl_dtype dtype = TGL_DTYPE_INVALID;  // dtype of the first input (of the output if none)
    std::vector<TensorArg> inputs, outputs;
    bool noop = false;  // every output is empty: nothing to run

    // The family's index plan, built by its planner (op_families.h); kernels read it through the
    // accessors below, which throw an internal error naming the op when it holds another plan.
    FamilyPlan plan;

    ElementwisePlan& elementwise() { return plan_as<ElementwisePlan>("elementwise"); }  // Unary, Binary, Ternary
    const ElementwisePlan& elementwise() const { return plan_as<ElementwisePlan>("elementwise"); }
    ReducePlan& reduce() { return plan_as<ReducePlan>("reduce"); }  // Reduce, ArgReduce
    const ReducePlan& reduce() const { return plan_as<ReducePlan>("reduce"); }
    ScanPlan& scan() { return plan_as<ScanPlan>("scan"); }  // Scan; Grad's cumsum_backward
    const ScanPlan& scan() const { return plan_as<ScanPlan>("scan"); }
    MatmulPlan& matmul() { return plan_as<MatmulPlan>("matmul"); }
    const MatmulPlan& matmul() const { return plan_as<MatmulPlan>("matmul"); }
    NormPlan& norm() { return plan_as<NormPlan>("norm"); }  // Normalize
    const NormPlan& norm() const { return plan_as<NormPlan>("norm"); }
    LayoutPlan& layout() { return plan_as<LayoutPlan>("layout"); }
    const LayoutPlan& layout() const { return plan_as<LayoutPlan>("layout"); }
    IndexPlan& index() { return plan_as<IndexPlan>("index"); }
    const IndexPlan& index() const { return plan_as<IndexPlan>("index"); }
    SelectPlan& select() { return plan_as<SelectPlan>("select"); }
    const SelectPlan& select() const { return plan_as<SelectPlan>("select"); }
    GeneratePlan& generate() { return plan_as<GeneratePlan>("generate"); }
    const GeneratePlan& generate() const { return plan_as<GeneratePlan>("generate"); }
    ConvPlan& conv() { return plan_as<ConvPlan>("conv"); }
    const ConvPlan& conv() const { return plan_as<ConvPlan>("conv"); }
    PoolPlan& pool() { return plan_as<PoolPlan>("pool"); }
    const PoolPlan& pool() const { return plan_as<PoolPlan>("pool"); }
    AttentionPlan& attention() { return plan_as<AttentionPlan>("attention"); }
    const AttentionPlan& attention() const { return plan_as<AttentionPlan>("attention"); }
    SequencePlan& sequence() { return plan_as<SequencePlan>("sequence"); }
    const SequencePlan& sequence() const { return plan_as<SequencePlan>("sequence"); }
    GradPlan& grad() { return plan_as<GradPlan>("grad"); }
    const GradPlan& grad() const { return plan_as<GradPlan>("grad"); }

private:
    template <class P>
    const P& plan_as(const char* name) const {
        if (const P* p = std::get_if<P>(&plan)) return *p;
        wrong_plan(name);
    }
    template <class P>
    P& plan_as(const char* name) { return const_cast<P&>(static_cast<const OpCall*>(this)->plan_as<P>(name)); }
    [[noreturn]] void wrong_plan(const char* name) const;
};

// Resolves a buffer handle of the device the op runs on; throws INVALID_HANDLE / STALE_HANDLE
// naming `what`.
using BufferLookup = std::function<std::shared_ptr<DeviceBuffer>(tgl_buffer, const char* what)>;

// Validates everything; throws tgl::Error with the status and a message naming the argument.
// The op must be in the catalogue and not planned (the caller checks that first).
OpCall validate_op(const OpInfo& info, const void* params, const tgl_tensor* inputs,
                   uint32_t n_inputs, const tgl_tensor* outputs, uint32_t n_outputs,
                   const BufferLookup& lookup);

// The Scan plan (call.scan()) of a (dy) -> (dx) call with tgl_scan_params; for the Grad
// family's cumsum_backward, which is a scan.
void plan_scan_for(OpCall& call, const void* params);

// "(2, 3, 5)"
std::string shape_string(int rank, const int64_t* shape);
const char* dtype_name(tgl_dtype dtype);

}  // namespace tgl
