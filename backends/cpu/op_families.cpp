// How the CPU plugin runs each op family: one line per family. The run functions are in the
// families' <family>_kernels.cpp (declared in kernels.h).
#include "kernels.h"

#include "op_families.h"

namespace tgl {
namespace cpu {
namespace {

struct CpuFamily {
    OpFamily family;
    void (*run)(const OpCall& call, unsigned threads);
};

const CpuFamily kFamilies[] = {
    {OpFamily::Unary, run_unary},
    {OpFamily::Binary, run_binary},
    {OpFamily::Ternary, run_where},
    {OpFamily::Reduce, run_reduce},
    {OpFamily::ArgReduce, run_arg_reduce},
    {OpFamily::Scan, run_scan},
    {OpFamily::Matmul, run_matmul},
    {OpFamily::Normalize, run_norm},
    {OpFamily::Layout, run_layout},
    {OpFamily::Index, run_index},
    {OpFamily::Select, run_select},
    {OpFamily::Generate, run_generate},
    {OpFamily::Conv, run_conv},
    {OpFamily::Pool, run_pool},
    {OpFamily::Attention, run_attention},
    {OpFamily::Sequence, run_sequence},
    {OpFamily::Grad, run_grad},
};

}  // namespace

void run(const OpCall& call, unsigned threads) {
    family_entry(kFamilies, *call.info, "backends/cpu/op_families.cpp").run(call, threads);
}

}  // namespace cpu
}  // namespace tgl
