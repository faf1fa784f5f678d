#include "tuning.h"

#include "env_value.h"

#include <cstring>

namespace tgl {
namespace gles {

namespace {

const int kMaxTileDim = 1024, kMaxCount = 1 << 20;

void read_stream(StreamShape& s) {
    const char* name = "TGL_TUNE_STREAM";
    const char* v = env_value(name);
    if (!v) return;
    const char* expected = "wg<N>_v<M>[_bwg<N>][_bg<G>][_ug<G>][_cg<G>][_glcopy] with N a power of two in [32, 1024], M "
                           "in [1, 16] and G in [0, 1048576], e.g. wg256_v4 or wg1024_v4_bwg512_bg264_ug264";
    parse_tune_tokens(name, v, v,
                      {{"wg", &s.wg, 32, 1024, true}, {"v", &s.per_invocation, 1, 16, true},
                       {"bwg", &s.binary_wg, 32, 1024, false}, {"bg", &s.binary_groups, 0, kMaxCount, false},
                       {"ug", &s.unary_groups, 0, kMaxCount, false}, {"cg", &s.copy_groups, 0, kMaxCount, false}},
                      {{"glcopy", &s.gl_copy}}, expected);
    if ((s.wg & (s.wg - 1)) || (s.binary_wg & (s.binary_wg - 1)))
        env_malformed(name, v, "the workgroup size is not a power of two", expected);
}

void read_matmul(MatmulTuning& m) {
    const char* name = "TGL_TUNE_MATMUL";
    const char* v = env_value(name);
    if (!v) return;
    const char* expected = "'_'-separated tokens bm<N> bn<N> bk<N> tm<N> tn<N> (all five or none; tm, tn, bk multiples of 4), general, sk<N>, ks<N>, wave<N>, "
                           "gk<N>, gl<N> (a power of two <= 64), gw<N>, gr<N> (powers of two, gr <= gw), gu<N> (1..16), gd<N>, gdw<N> (a power of two >= 8), gdq<N> (a power of two <= gdw), db<0|1>, wl<N> (0 or a power of two <= 32), kr<N>, e.g. bm128_bn128_bk8_tm8_tn8_sk528";
    TileTuning t{-1, -1, -1, -1, -1};
    int db = -1;
    parse_tune_tokens(name, v, v,
                      {{"bm", &t.bm, 1, kMaxTileDim, false}, {"bn", &t.bn, 1, kMaxTileDim, false},
                       {"bk", &t.bk, 1, kMaxTileDim, false}, {"tm", &t.tm, 1, kMaxTileDim, false},
                       {"tn", &t.tn, 1, kMaxTileDim, false}, {"sk", &m.split_target, 0, kMaxCount, false},
                       {"ks", &m.splits, 1, kMaxCount, false}, {"wave", &m.wave, 1, kMaxCount, false},
                       {"gk", &m.gemv_chunk, 0, kMaxCount, false}, {"gl", &m.gemv_lanes, 1, 64, false},
                       {"gw", &m.gemv_wg, 1, kMaxTileDim, false}, {"gr", &m.gemv_k_lanes, 1, kMaxTileDim, false},
                       {"gu", &m.gemv_unroll, 1, 16, false}, {"gd", &m.gemv_direct, 0, kMaxCount, false},
                       {"gdw", &m.gemv_direct_wg, 8, kMaxTileDim, false}, {"gdq", &m.gemv_direct_quads, 1, kMaxTileDim, false},
                       {"db", &db, 0, 1, false}, {"wl", &m.warp_lanes, 0, 32, false},
                       {"kr", &m.k_roll, 0, kMaxTileDim, false}},
                      {{"general", &m.general}}, expected);
    const int given = (t.bm > 0) + (t.bn > 0) + (t.bk > 0) + (t.tm > 0) + (t.tn > 0);
    if (given != 0 && given != 5) env_malformed(name, v, "a tile needs all of bm, bn, bk, tm and tn", expected);
    if (given == 5 && (t.tm % 4 || t.tn % 4 || t.bk % 4 || t.bm % t.tm || t.bn % t.tn))
        env_malformed(name, v, "the tile breaks the kernel's rules (tm, tn and bk multiples of 4, bm of tm, bn of tn)",
                      expected);
    if (given == 5) m.tile = t;
    if (m.gemv_lanes & (m.gemv_lanes - 1)) env_malformed(name, v, "gl is not a power of two", expected);
    if ((m.gemv_wg & (m.gemv_wg - 1)) || (m.gemv_k_lanes & (m.gemv_k_lanes - 1)) || m.gemv_k_lanes > m.gemv_wg)
        env_malformed(name, v, "gw and gr are not powers of two with gr <= gw", expected);
    if (m.gemv_direct_wg & (m.gemv_direct_wg - 1)) env_malformed(name, v, "gdw is not a power of two", expected);
    if ((m.gemv_direct_quads & (m.gemv_direct_quads - 1)) || m.gemv_direct_quads > m.gemv_direct_wg)
        env_malformed(name, v, "gdq is not a power of two <= gdw", expected);
    if (db >= 0) m.double_buf = db;
    if (m.warp_lanes > 0 && (m.warp_lanes & (m.warp_lanes - 1))) env_malformed(name, v, "wl is not 0 or a power of two", expected);
}

void read_gguf(GgufTuning& g) {
    const char* name = "TGL_TUNE_GGUF";
    const char* v = env_value(name);
    if (!v) return;
    const char* expected = "'_'-separated tokens l<N> (a power of two <= 64), r<N> (1..8), u<N> (1..8), wg<N> (a power of two <= 1024), "
                           "p<N> (1..8), x<0|1>, n<N> (0..2^30), m<0|1|2>, any subset, e.g. l32_r1_u1_wg512_p1_x1_n8192_m1";
    const int wg_default = g.wg;
    g.wg = 0;  // not a value the token takes: tells whether it was given
    parse_tune_tokens(name, v, v,
                      {{"l", &g.lanes, 1, 64, false}, {"r", &g.rows, 1, 8, false}, {"u", &g.unroll, 1, 8, false},
                       {"wg", &g.wg, 1, kMaxTileDim, false}, {"p", &g.passes, 1, 8, false}, {"x", &g.x_shared, 0, 1, false},
                       {"n", &g.halve_lanes_from, 0, 1 << 30, false}, {"m", &g.measure, 0, 2, false}},
                      {}, expected);
    g.wg_given = g.wg != 0;
    if (!g.wg_given) g.wg = wg_default;
    if ((g.lanes & (g.lanes - 1)) || (g.wg & (g.wg - 1))) env_malformed(name, v, "l or wg is not a power of two", expected);
}

void read_conv(ConvTuning& c) {
    const char* name = "TGL_TUNE_CONV";
    const char* v = env_value(name);
    if (!v) return;
    const char* expected = "'_'-separated tokens bm<BM> bn<BN> bk<BK> tm<TM> tn<TN> (all five or none), split<S>, one of "
                           "winograd, winograd4, direct and one of gemm1x1, mm1x1, lin1x1, e.g. bm64_bn64_bk16_tm4_tn4_split512, "
                           "winograd, direct_split0, bm128_bn128_bk8_tm8_tn8_gemm1x1";
    TileTuning t{-1, -1, -1, -1, -1};
    bool winograd = false, winograd4 = false, direct = false, gemm1x1 = false, mm1x1 = false, lin1x1 = false;
    parse_tune_tokens(name, v, v,
                      {{"bm", &t.bm, 1, kMaxTileDim, false}, {"bn", &t.bn, 1, kMaxTileDim, false},
                       {"bk", &t.bk, 1, kMaxTileDim, false}, {"tm", &t.tm, 1, kMaxTileDim, false},
                       {"tn", &t.tn, 1, kMaxTileDim, false}, {"split", &c.split_target, 0, kMaxCount, false}},
                      {{"winograd", &winograd}, {"winograd4", &winograd4}, {"direct", &direct}, {"gemm1x1", &gemm1x1},
                       {"mm1x1", &mm1x1}, {"lin1x1", &lin1x1}},
                      expected);
    const int given = (t.bm > 0) + (t.bn > 0) + (t.bk > 0) + (t.tm > 0) + (t.tn > 0);
    if (given != 0 && given != 5) env_malformed(name, v, "a tile needs all of bm, bn, bk, tm and tn", expected);
    if (winograd + winograd4 + direct > 1) env_malformed(name, v, "winograd, winograd4 and direct exclude each other", expected);
    if (gemm1x1 + mm1x1 + lin1x1 > 1) env_malformed(name, v, "gemm1x1, mm1x1 and lin1x1 exclude each other", expected);
    if (given == 5) c.tile = t;
    c.pointwise = gemm1x1 ? ConvTuning::Pointwise::Gemm : mm1x1 ? ConvTuning::Pointwise::Matmul
                : lin1x1  ? ConvTuning::Pointwise::Linear : ConvTuning::Pointwise::Auto;
    c.path = winograd ? ConvTuning::Path::Winograd : winograd4 ? ConvTuning::Path::Winograd4 : direct ? ConvTuning::Path::Direct : ConvTuning::Path::Auto;
}

void read_attention(AttentionTuning& a) {
    const char* name = "TGL_TUNE_ATTENTION";
    const char* v = env_value(name);
    if (!v) return;
    a.value = v;
    if (!std::strcmp(v, "legacy")) {
        a.legacy = true;
        return;
    }
    const char* expected = "bq<BQ>_bk<BKV>_tm<TM>_tx<TX>[_pf][_km][_sg][_qg] (BQ and BKV multiples of TM and TX, TM a multiple of "
                           "4; _km: BKV a multiple of 4 TX), or '<f32 tile>,<f16 tile>', or legacy";
    const std::string s(v);
    const size_t comma = s.find(',');
    const std::string part[2] = {s.substr(0, comma), comma == std::string::npos ? s : s.substr(comma + 1)};
    for (int i = 0; i < 2; ++i) {
        FlashTileTuning& f = a.tile[i];
        f.prefetch = false;
        f.kmaj = false;
        f.sg = false;
        f.qg = false;
        parse_tune_tokens(name, v, part[i],
                          {{"bq", &f.bq, 1, kMaxTileDim, true}, {"bk", &f.bkv, 1, kMaxTileDim, true},
                           {"tm", &f.tm, 1, kMaxTileDim, true}, {"tx", &f.tx, 1, kMaxTileDim, true}},
                          {{"pf", &f.prefetch}, {"km", &f.kmaj}, {"sg", &f.sg}, {"qg", &f.qg}}, expected);
        if (f.tm % 4 || f.bq % f.tm || f.bkv % f.tx || (f.kmaj && f.bkv % (4 * f.tx)))
            env_malformed(name, v, "'" + part[i] + "' breaks the tile's rules", expected);
    }
}

void read_half(HalfTuning& h) {
    const char* name = "TGL_TUNE_HALF";
    const char* v = env_value(name);
    if (!v) return;
    const char* expected = "'_'-separated tokens off, matmul, run<N> (N 1, 2, 4, 8 or 16), each optional, e.g. off or matmul_run8";
    parse_tune_tokens(name, v, v, {{"run", &h.run, 1, 16, false}}, {{"off", &h.off}, {"matmul", &h.matmul}}, expected);
    if (h.run & (h.run - 1)) env_malformed(name, v, "run is not a power of two", expected);
}

void read_buffer_usage(BufferUsage& u) {
    const char* name = "TGL_TUNE_BUFFER";
    const char* v = env_value(name);
    if (!v) return;
    const char* expected = "one of static_draw, static_copy, dynamic_draw, dynamic_copy, stream_copy";
    static const struct {
        const char* word;
        BufferUsage usage;
    } kWords[] = {{"static_draw", BufferUsage::StaticDraw}, {"static_copy", BufferUsage::StaticCopy},
                  {"dynamic_draw", BufferUsage::DynamicDraw}, {"dynamic_copy", BufferUsage::DynamicCopy},
                  {"stream_copy", BufferUsage::StreamCopy}};
    for (const auto& w : kWords)
        if (!std::strcmp(v, w.word)) {
            u = w.usage;
            return;
        }
    env_malformed(name, v, "not a usage hint", expected);
}

}  // namespace

bool read_subgroups_switch() {
    return env_number("TGL_TUNE_SUBGROUPS", 0, 1, 1,
                      "0 (no subgroup operations: shared-memory trees) or 1 (the default: subgroups where the device has them)") != 0;
}

Tuning read_tuning() {
    Tuning t;
    t.subgroups = read_subgroups_switch();
    read_stream(t.stream);
    read_buffer_usage(t.buffer_usage);
    const char* reduce = env_value("TGL_TUNE_REDUCE");
    if (reduce) {
        ReduceTuning& r = t.reduce;
        parse_tune_tokens("TGL_TUNE_REDUCE", reduce, reduce,
                          {{"rwg", &r.rwg, 1, kMaxTileDim, false}, {"ru", &r.ru, 1, 8, false},
                           {"cwg", &r.cwg, 1, kMaxTileDim, false}, {"cl", &r.cl, 1, kMaxTileDim, false},
                           {"cr", &r.cr, 0, kMaxCount, false}, {"cu", &r.cu, 1, 8, false}},
                          {}, "'_'-separated tokens rwg<N> ru<N> cwg<N> cl<N> cr<N> cu<N>, any subset, e.g. rwg256_ru4");
    }
    if (const char* norm = env_value("TGL_TUNE_NORM"))
        parse_tune_tokens("TGL_TUNE_NORM", norm, norm,
                          {{"wg", &t.norm.wg, 1, kMaxTileDim, false}, {"per", &t.norm.per, 1, 16, false}}, {},
                          "wg<N>_per<M>, either part optional, e.g. wg512_per4");
    if (const char* sample = env_value("TGL_TUNE_SAMPLE"))
        parse_tune_tokens("TGL_TUNE_SAMPLE", sample, sample,
                          {{"split", &t.sample.split, 1, 1 << 24, false}, {"chunk", &t.sample.chunk, 0, 1 << 24, false}}, {},
                          "split<N>_chunk<M>, either part optional, e.g. split8192_chunk4096");
    read_matmul(t.matmul);
    read_gguf(t.gguf);
    read_conv(t.conv);
    read_attention(t.attention);
    read_half(t.half);
    if (const char* submit = env_value("TGL_TUNE_SUBMIT"))
        parse_tune_tokens("TGL_TUNE_SUBMIT", submit, submit,
                          {{"cache", &t.submit.cache, 0, kMaxCount, false}, {"flush", &t.submit.flush, 0, kMaxCount, false}},
                          {}, "'_'-separated tokens cache<N> flush<N>, either optional, e.g. cache1024_flush64");
    if (env_value("TGL_TUNE_POLL_US"))
        t.poll_us = int64_t(env_number("TGL_TUNE_POLL_US", 0, 1000000, 0, "microseconds, e.g. 100"));
    return t;
}

}  // namespace gles
}  // namespace tgl
