// Kernel tuning by environment, for benchmark sweeps on a GPU (bench/RESULTS.md, Tuning): the
// TGL_TUNE_* variables, read when a device is opened (each device keeps its own). Unset or empty:
// the defaults below, chosen on an H100. Every value is parsed strictly (env_value.h): a malformed
// one (unknown or repeated token, trailing junk, sign, overflow, out of range, a missing required
// part) fails device_open with TGL_ERROR_INVALID_ARGUMENT naming the variable and the form
// expected. A well-formed tile or size that a device or a problem cannot hold falls back to one
// that fits (each kernel file says how).
#pragma once

#include <cstdint>
#include <string>

namespace tgl {
namespace gles {

// TGL_TUNE_STREAM=wg<N>_v<M>[_bwg<N>][_bg<N>][_ug<N>][_cg<N>][_glcopy]: the streaming kernels'
// (buffer_bytes.comp, elementwise.comp's VEC4) workgroup size (a power of two in [32, 1024]) and
// vec4s per invocation ([1, 16]), both required; for binary ops over two full-size inputs, the
// workgroup size (bwg, a power of two) and the number of workgroups that stride over the blocks
// (bg; 0: one workgroup per block, the kernel of the other ops); ug: the same grid stride for the
// other vec4 elementwise kernels (unary ops, broadcast inputs), cg for buffer_copy and
// buffer_fill's aligned middle (0: one workgroup per block); glcopy: buffer_copy by
// glCopyBufferSubData alone (no shader; to compare). Defaults: wg1024_v4_bwg512_bg264_ug0_cg0
// (H100 and H200 sweeps: bench/RESULTS.md, docs/gpu.md "Streaming kernels and the decode GEMV").
struct StreamShape {
    int wg = 1024;
    int per_invocation = 4;
    int binary_wg = 512;
    int binary_groups = 264;
    int unary_groups = 0;
    int copy_groups = 0;
    bool gl_copy = false;
};

// TGL_TUNE_REDUCE: '_'-separated <key><number> tokens, any subset, e.g.
// "rwg256_ru4_cwg256_cl64_cr0_cu4" (the defaults). Keys: rwg (invocations per row, MODE_GROUP),
// ru (vec4 per row-invocation per step: 1 2 4 8), cwg (invocations per column workgroup), cl
// (column lanes: 4..cwg), cr (rows per column chunk; 0 = automatic), cu (loads per column lane per
// step: 1 2 4 8). Values are clamped to the device's limits (reduce_kernels.cpp).
struct ReduceTuning {
    int rwg = 256, ru = 4, cwg = 256, cl = 64, cr = 0, cu = 4;
};

// TGL_TUNE_NORM=wg<N>_per<M>, either part optional: norm.comp's ROW_VEC4 variant's invocations per
// row to start with and quads per invocation (norm_kernels.cpp).
struct NormTuning {
    int wg = 512, per = 4;
};

// A tile of the implicit-GEMM kernels; bm == 0: none given.
struct TileTuning {
    int bm = 0, bn = 0, bk = 0, tm = 0, tn = 0;
};

// TGL_TUNE_MATMUL: '_'-separated tokens, each optional (e.g. "bm128_bn128_bk8_tm8_tn8_sk528_gk64"):
//   bm<N> bn<N> bk<N> tm<N> tn<N>  the FAST tile of every product that takes it (all five; tm, tn
//                                  and bk multiples of 4, bm of tm, bn of tn; a tile the device
//                                  cannot hold is skipped); default: the shape rule (128x128x8 8x8,
//                                  128x64x8 8x4 or 64x128x8 4x8 where they fill half a wave, split
//                                  or not; else 64x64x16 4x4)
//   general                        no FAST tiles and no GEMV (the general kernel only)
//   sk<N>                          split-K target workgroups of the general tiles: K is split when
//                                  a product has fewer than N / 8 tiles (sk0: never); default 1056
//   ks<N>                          K split N ways in every tiled product (ks1: never, except where
//                                  the loop budget needs it); default: the shape rule
//                                  (matmul_kernels.cpp, fast_candidate)
//   wave<N>                        invocations the GPU runs at once, the shape rule's stand-in for
//                                  the SM count (GLES does not report it); default 67584 (the 132
//                                  SMs of an H100/H200 x 2 workgroups of 256 invocations)
//   gk<N>                          GEMV K range per workgroup (gk0: no GEMV kernel); default 32
//                                  * lanes (gr for W n-contiguous, gl for W k-contiguous)
//   gl<N>                          GEMV invocations per column for W k-contiguous (a power of two
//                                  <= 64); default 16
//   gw<N>                          GEMV workgroup size for W n-contiguous (a power of two); default 256
//   gr<N>                          GEMV invocations along k per quad of columns for W n-contiguous
//                                  (a power of two <= gw); default 8
//   gu<N>                          GEMV loads of W in flight per invocation (1..16; W n-contiguous
//                                  and A k-contiguous: a multiple of 4 reads A as quads); default 4
//   gd<N>                          GEMV, W n-contiguous, gk not given: one pass over all of K (the
//                                  epilogue there: no partials, no reduce pass) in workgroups of
//                                  gdw invocations over 8 quads of columns (instead of gw, gr),
//                                  where that makes N to 2N - 1 workgroups (gd0: never); default 128
//   gdw<N>                         that pass's workgroup size (a power of two >= 8); default 1024
//   gdq<N>                         that pass's quads of columns per workgroup (a power of two
//                                  <= gdw; the rest of the workgroup lies along k); default 8
//   db<0|1>                        FAST tiles double-buffered in shared memory (one barrier per
//                                  K step; where the shared memory holds two); default 0 for the
//                                  128 x 128 tile, 1 for the others (matmul_kernels.cpp)
//   kr<N>                          FAST tiles' K step in groups of N k (N divides it), the loop over
//                                  the groups kept rolled (fewer registers); default 0: unrolled
//   wl<N>                          FAST tiles' warp tiles: each 32 invocations own a block of
//                                  32 / N x N invocations' outputs (N 1, 2, 4, 8, 16 or 32; wl0:
//                                  the interleaved mapping over the whole tile), on every FAST
//                                  tile that such blocks divide; default: matmul_kernels.cpp
struct MatmulTuning {
    TileTuning tile;
    bool general = false;
    int split_target = 1056;
    int splits = 0;  // 0: the shape rule
    int wave = 67584;
    int gemv_chunk = -1;  // -1: the default
    int gemv_lanes = 16;
    int gemv_wg = 256;       // GEMV invocations per workgroup (W n-contiguous)
    int gemv_k_lanes = 8;    // GEMV invocations along k per quad of columns (W n-contiguous)
    int gemv_unroll = 4;     // GEMV rows (W n-contiguous) or quads (k-contiguous) of W in flight per invocation
    int gemv_direct = 128;   // GEMV: one K range where the column slabs make this many workgroups (0: never)
    int gemv_direct_wg = 1024;  // its workgroup size
    int gemv_direct_quads = 8;  // its quads of columns per workgroup
    int double_buf = -1;  // -1: the default
    int warp_lanes = -1;  // -1: the default
    int k_roll = 0;
};

// TGL_TUNE_CONV=[bm<BM>_bn<BN>_bk<BK>_tm<TM>_tn<TN>][_split<S>][_winograd|_winograd4|_direct][_gemm1x1|_mm1x1|_lin1x1]: the tile of every implicit GEMM it
// fits (conv_kernels.cpp), TM and TN multiples of 4; S: split K up to S workgroups where there are
// fewer tiles (0: never; -1 here: the default). Candidates: bm64_bn64_bk16_tm4_tn4,
// bm128_bn64_bk16_tm8_tn4, bm64_bn128_bk16_tm4_tn8, bm128_bn128_bk8_tm8_tn8, bm128_bn128_bk16_tm8_tn8,
// bm32_bn128_bk16_tm4_tn4, bm64_bn64_bk32_tm4_tn4, bm128_bn64_bk32_tm8_tn4, also with _split0 or
// _split512. Either may come with, or be replaced by, `winograd` (every convolution that the
// Winograd path takes (3x3, stride 1, dilation 1, one group, forward) runs on it, whatever its
// size) or `direct` (none does: the direct kernels, implicit GEMM or depthwise, run every one), for
// comparing the two; `winograd` forces F(2x2, 3x3), `winograd4` F(4x4, 3x3) (the one taken by
// shape); without any, the path goes by shape (conv_kernels.cpp). 1x1 convolutions (forward, one
// group, stride 1, unpadded): `gemm1x1` (the implicit GEMM, with the tile above), `mm1x1` (a
// batched matmul W x x[n] where that applies: no bias, one dtype; else as lin1x1) or `lin1x1` (a
// linear over the channels, x[n]^T W^T + bias, whatever the layout) force a route; without any, it
// goes by shape (conv_kernels.cpp, pointwise_candidate).
struct ConvTuning {
    enum class Path { Auto, Direct, Winograd, Winograd4 };
    enum class Pointwise { Auto, Gemm, Matmul, Linear };
    TileTuning tile;
    int split_target = -1;
    Path path = Path::Auto;
    Pointwise pointwise = Pointwise::Auto;
};

// TGL_TUNE_ATTENTION: the PASS_FLASH tiles of the attention forward: a tile
// "bq<BQ>_bk<BKV>_tm<TM>_tx<TX>[_pf][_km][_sg]" for both dtypes, or "<f32 tile>,<f16 tile>" (BQ and
// BKV multiples of TM and TX, TM a multiple of 4; _pf: PREFETCH; _km: KMAJ, channel-major Q and K
// tiles with outer-product scores, BKV a multiple of 4 TX; _sg: SG, subgroup shuffles for the row
// maxima and sums where the device has subgroups; _qg: QGLOBAL, f32 q read from global memory in the
// score loop instead of a shared q tile, where q has vector access and not with _km); "legacy": the
// previous kernel
// (PASS_FWD) everywhere (attention_kernels.cpp).
struct FlashTileTuning {
    int bq, bkv, tm, tx;
    bool prefetch;
    bool kmaj;
    bool sg;
    bool qg;
};
struct AttentionTuning {
    bool legacy = false;
    std::string value;  // as given; "" when unset
    FlashTileTuning tile[2] = {{64, 32, 4, 8, false, false, false, false}, {32, 64, 4, 16, true, false, false, false}};  // f32, 16-bit (f16, bf16)
};

// TGL_TUNE_SUBMIT: '_'-separated tokens, each optional, e.g. "cache1024_flush64" (the defaults):
//   cache<N>   ops whose plans the op cache keeps (op_cache.h; 0: none, every op planned afresh)
//   flush<N>   the GL thread hands the driver's queued commands to the GPU (glFlush) after every N
//              dispatches of a long batch (a graph replay, ops queued faster than they are
//              issued), so that the GPU starts on them while the rest are issued (0: only once the
//              queue is empty)
// TGL_TUNE_HALF: packed f16 arithmetic (f16vec2 products, HFMA2 on NVIDIA) in f16 flash attention
// and (opted in) the f16 matmul tiles, where the driver offers it (GL_NV_gpu_shader5;
// docs/half-precision.md). '_'-separated tokens, each optional: "off" (f32 arithmetic everywhere,
// for comparison), "matmul" (the matmul tiles too: 4% faster at 4096^3 on an H200, with f16's
// product range), "run<N>" (products summed in f16 before each run joins its f32 accumulator: 1,
// 2, 4, 8 or 16; default 16). Unset: attention only, where the driver offers it.
struct HalfTuning {
    bool off = false;
    bool matmul = false;
    int run = 16;
};

struct SubmitTuning {
    int cache = 1024;
    int flush = 64;
};

// TGL_TUNE_GGUF: '_'-separated tokens, each optional, e.g. "l32_r1_u1_wg512_p1_x1_n8192_m1" (the defaults; H200 and H100 sweeps in docs/quantized.md): the
// decode GEMV over GGUF block weights (gguf.comp PASS_GEMV, gguf_kernels.cpp): l<N> invocations
// along K per row of W (a power of two <= 64), r<N> rows of W per invocation (1..8), u<N> pairs
// of chunks of 32 elements in flight per invocation and row (1..8), wg<N> invocations per
// workgroup (a power of two), p<N> groups of rows a workgroup takes one after another (1..8; x
// staged once for all of them, the next group's first loads in flight during a group's sum),
// x<0|1> each row of x widened once per workgroup into shared memory where it fits (1, the
// default: the rows then neither load, widen nor sum x) or read by every invocation (0), n<N> the
// rows of W from which the lanes along K are halved (0: never; a GEMV with many rows keeps the GPU
// busy with fewer lanes a row, and each workgroup's staged x then serves twice the rows), m<0|1|2>
// whether the workgroup size is measured (gguf_kernels.cpp's gemv_wide_shape: the given size or
// twice it, whichever fastest_plan measures faster for the call's format and shape, once per
// device; both give the same bits): 0 never, 1 (the default) on a GPU with timestamp queries and
// where wg<N> is not given, 2 on a software renderer too (for tests: its timings mean nothing).
// Shapes a device cannot hold are cut down (gguf_kernels.cpp).
struct GgufTuning {
    int lanes = 32, rows = 1, unroll = 1, wg = 512;
    int passes = 1;
    int x_shared = 1;
    int halve_lanes_from = 8192;  // H100: l16 gains 4 - 15% from 8192 rows on, loses 4% at 4096 (docs/quantized.md)
    int measure = 1;
    bool wg_given = false;  // wg<N> in TGL_TUNE_GGUF: kept as given, never measured
};

// TGL_TUNE_SAMPLE=split<N>_chunk<M>, either part optional: rows of a vocabulary V >= N take
// sample's split plan (sample_split.comp, many workgroups per row; N in [1, 2^24], 2^24: never)
// and its chunks hold about M logits per workgroup (rounded up to a multiple of the workgroup
// size, grown so that a row has at most 512 chunks; 0: automatic, 1024 to 4096 on a GPU (by the
// workgroups of a pass), 32768 where loops are limited (llvmpipe: each workgroup's barriers cost
// much there)). Defaults:
// split8192_chunk0.
struct SampleTuning {
    int split = 8192;
    int chunk = 0;
};

// TGL_TUNE_BUFFER: the usage hint of every buffer's glBufferData (where the driver places it): one
// of static_draw, static_copy, dynamic_draw, dynamic_copy (the default), stream_copy.
enum class BufferUsage { StaticDraw, StaticCopy, DynamicDraw, DynamicCopy, StreamCopy };

struct Tuning {
    StreamShape stream;
    BufferUsage buffer_usage = BufferUsage::DynamicCopy;
    GgufTuning gguf;
    SampleTuning sample;
    SubmitTuning submit;
    ReduceTuning reduce;
    NormTuning norm;
    MatmulTuning matmul;
    ConvTuning conv;
    AttentionTuning attention;
    // TGL_TUNE_SUBGROUPS: 1 (the default) lets the kernels use GL_KHR_shader_subgroup where the
    // device offers it (egl_devices.h, kernel_subgroup_size); 0: the workgroup-level shared-memory
    // trees everywhere, as on a device without subgroups (to compare).
    bool subgroups = true;
    HalfTuning half;
    // TGL_TUNE_POLL_US: how long the GL thread polls for work before sleeping, in microseconds
    // ([0, 1000000]); -1: the default (gles_device.cpp).
    int64_t poll_us = -1;
};

// TGL_TUNE_SUBGROUPS alone (the device properties report it too); throws as read_tuning.
bool read_subgroups_switch();

// Every TGL_TUNE_* variable; throws TGL_ERROR_INVALID_ARGUMENT for a malformed one.
Tuning read_tuning();

}  // namespace gles
}  // namespace tgl
