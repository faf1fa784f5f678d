/*
 * tensorgl sample (C99): one pre-norm transformer decoder block (llama style) on a plugin chosen
 * by name, checked against the CPU reference plugin.
 *
 *     h    = rms_norm(x) * g1
 *     q, k, v = linear_qkv(h, Wqkv)              one fused projection writing three tensors
 *     q, k = rope(q, pos), rope(k, pos)            NeoX layout, theta 10000
 *     a    = attention(q, k, v, causal)          grouped-query: 8 query heads share 2 kv heads
 *     s    = x + linear(a, Wo)                    output projection + residual
 *     h2   = rms_norm(s) * g2                     (add_rms_norm: the residual add and the norm fused)
 *     out  = s + linear(silu(linear(h2, Wg)) * linear(h2, Wu), Wd)    the MLP with a silu gate
 *
 * x is (S, d_model) = (37, 128) tokens at positions 0..36; heads of 16 dims. The heads are strided
 * views of the projection outputs ((1, H, S, 16) over an (S, H * 16) buffer): no copies between
 * the ops. Eleven ops run on the plugin under test ("gles" unless argv[1] names another plugin or
 * a path to one), then on the CPU reference; the program prints a few values of both, the largest
 * difference, and exits 0 only if every element of `out` agrees within 1e-4 * max(|ref|, 1).
 *
 * Usage: tgl_sample_transformer [plugin-name-or-path]
 */
#include "sample_session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    S = 37,            /* tokens */
    DM = 128,          /* model width */
    HQ = 8,            /* query heads */
    HKV = 2,           /* key/value heads (GQA 4:1) */
    DH = 16,           /* head dim */
    NQ = HQ * DH,      /* 128 */
    NKV = HKV * DH,    /* 32 */
    NQKV = NQ + 2 * NKV,
    FF = 344           /* MLP width */
};

/* The block's weights and input, generated once and uploaded to both plugins. */
typedef struct weights {
    float x[S * DM];
    int32_t pos[S];
    float g1[DM], g2[DM];
    float wqkv[NQKV * DM]; /* (NQ + 2 NKV, DM), nn.Linear layout */
    float wo[DM * NQ];     /* (DM, NQ) */
    float wg[FF * DM], wu[FF * DM];
    float wd[DM * FF];
} weights;

/* Buffers of one run. */
enum { B_X, B_POS, B_G1, B_G2, B_WQKV, B_WO, B_WG, B_WU, B_WD, B_H, B_Q, B_K, B_V, B_QR, B_KR, B_A, B_P,
       B_H2, B_S, B_GATE, B_UP, B_M, B_D, B_OUT, N_BUFFERS };

/* A contiguous 2-D (rows, cols) f32 tensor over the whole of buffer b. */
static tgl_tensor matrix(tgl_buffer b, int64_t rows, int64_t cols) {
    const int64_t shape[2] = {rows, cols};
    return tgl_tensor_contiguous(b, 0, TGL_DTYPE_F32, 2, shape);
}

/* A contiguous 1-D f32 tensor of n elements over buffer b. */
static tgl_tensor vector(tgl_buffer b, int64_t n) {
    return tgl_tensor_contiguous(b, 0, TGL_DTYPE_F32, 1, &n);
}

/* The heads of an (S, heads * DH) row-major buffer seen as (1, heads, S, DH). */
static tgl_tensor heads_view(tgl_buffer b, int64_t heads) {
    const int64_t shape[4] = {1, heads, S, DH};
    tgl_tensor t = tgl_tensor_contiguous(b, 0, TGL_DTYPE_F32, 4, shape);
    t.strides[0] = S * heads * DH;
    t.strides[1] = DH;
    t.strides[2] = heads * DH;
    t.strides[3] = 1;
    return t;
}

static tgl_tensor absent(void) {
    tgl_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = TGL_DTYPE_F32;
    return t;
}

/* Runs the block on `plugin_name`; downloads `out` (S x DM). 0 on success. */
static int run_block(const char* label, const char* plugin_name, const weights* w, float* out) {
    static const struct { int id; uint64_t bytes; } sizes[N_BUFFERS] = {
        {B_X, S * DM * 4}, {B_POS, S * 4}, {B_G1, DM * 4}, {B_G2, DM * 4}, {B_WQKV, NQKV * DM * 4},
        {B_WO, DM * NQ * 4}, {B_WG, FF * DM * 4}, {B_WU, FF * DM * 4}, {B_WD, DM * FF * 4},
        {B_H, S * DM * 4}, {B_Q, S * NQ * 4}, {B_K, S * NKV * 4}, {B_V, S * NKV * 4},
        {B_QR, S * NQ * 4}, {B_KR, S * NKV * 4}, {B_A, S * NQ * 4}, {B_P, S * DM * 4},
        {B_H2, S * DM * 4}, {B_S, S * DM * 4}, {B_GATE, S * FF * 4}, {B_UP, S * FF * 4},
        {B_M, S * FF * 4}, {B_D, S * DM * 4}, {B_OUT, S * DM * 4}};
    session ss;
    tgl_buffer b[N_BUFFERS];
    tgl_tensor in[4], outs[3];
    tgl_layer_norm_params norm;
    tgl_linear_params lin;
    tgl_rope_params rope;
    tgl_attention_params attn;
    int i, rc = 1;

    if (session_begin(&ss, label, plugin_name)) return 1;
    printf("[%s] plugin %s\n", label, tgl_plugin_path(ss.plugin));
    CHECK(ss.api->device_open(0, &ss.device));
    for (i = 0; i < N_BUFFERS; ++i)
        if (!(b[sizes[i].id] = session_alloc(&ss, sizes[i].bytes))) goto cleanup;

    CHECK(ss.api->buffer_upload(ss.device, b[B_X], 0, w->x, sizeof w->x));
    CHECK(ss.api->buffer_upload(ss.device, b[B_POS], 0, w->pos, sizeof w->pos));
    CHECK(ss.api->buffer_upload(ss.device, b[B_G1], 0, w->g1, sizeof w->g1));
    CHECK(ss.api->buffer_upload(ss.device, b[B_G2], 0, w->g2, sizeof w->g2));
    CHECK(ss.api->buffer_upload(ss.device, b[B_WQKV], 0, w->wqkv, sizeof w->wqkv));
    CHECK(ss.api->buffer_upload(ss.device, b[B_WO], 0, w->wo, sizeof w->wo));
    CHECK(ss.api->buffer_upload(ss.device, b[B_WG], 0, w->wg, sizeof w->wg));
    CHECK(ss.api->buffer_upload(ss.device, b[B_WU], 0, w->wu, sizeof w->wu));
    CHECK(ss.api->buffer_upload(ss.device, b[B_WD], 0, w->wd, sizeof w->wd));

    /* h = rms_norm(x) * g1 over the last dim. */
    memset(&norm, 0, sizeof norm);
    norm.struct_size = sizeof norm;
    norm.n_norm_dims = 1;
    norm.eps = 1e-5f;
    in[0] = matrix(b[B_X], S, DM);
    in[1] = vector(b[B_G1], DM);
    outs[0] = matrix(b[B_H], S, DM);
    CHECK(ss.api->run_op(ss.device, TGL_OP_RMS_NORM, &norm, in, 2, outs, 1));

    /* q, k, v = h @ Wqkv^T, split into three tensors by one fused projection (no bias). */
    memset(&lin, 0, sizeof lin);
    lin.struct_size = sizeof lin;
    lin.activation = TGL_ACTIVATION_NONE;
    in[0] = matrix(b[B_H], S, DM);
    in[1] = matrix(b[B_WQKV], NQKV, DM);
    in[2] = absent();
    outs[0] = matrix(b[B_Q], S, NQ);
    outs[1] = matrix(b[B_K], S, NKV);
    outs[2] = matrix(b[B_V], S, NKV);
    CHECK(ss.api->run_op(ss.device, TGL_OP_LINEAR_QKV, &lin, in, 3, outs, 3));

    /* Rotary embedding of q and k, over (1, heads, S, DH) views; positions (S) broadcast. */
    memset(&rope, 0, sizeof rope);
    rope.struct_size = sizeof rope;
    rope.mode = TGL_ROPE_NEOX;
    rope.n_rot = DH;
    rope.scaling = TGL_ROPE_SCALING_NONE;
    rope.theta_base = 10000.0f;
    rope.factor = 1.0f;
    rope.attn_factor = 1.0f;
    in[0] = heads_view(b[B_Q], HQ);
    in[1] = vector(b[B_POS], S);
    in[1].dtype = TGL_DTYPE_I32;
    outs[0] = heads_view(b[B_QR], HQ);
    CHECK(ss.api->run_op(ss.device, TGL_OP_ROPE, &rope, in, 2, outs, 1));
    in[0] = heads_view(b[B_K], HKV);
    outs[0] = heads_view(b[B_KR], HKV);
    CHECK(ss.api->run_op(ss.device, TGL_OP_ROPE, &rope, in, 2, outs, 1));

    /* Causal attention, 8 query heads over 2 kv heads; a is written as (S, NQ) rows. */
    memset(&attn, 0, sizeof attn);
    attn.struct_size = sizeof attn;
    attn.causal = 1;
    attn.scale = 0.0f; /* 1 / sqrt(DH) */
    in[0] = heads_view(b[B_QR], HQ);
    in[1] = heads_view(b[B_KR], HKV);
    in[2] = heads_view(b[B_V], HKV);
    in[3] = absent(); /* no mask */
    outs[0] = heads_view(b[B_A], HQ);
    outs[1] = absent(); /* no lse */
    CHECK(ss.api->run_op(ss.device, TGL_OP_ATTENTION, &attn, in, 4, outs, 2));

    /* p = a @ Wo^T; s = x + p and h2 = rms_norm(s) * g2 in one op. */
    in[0] = matrix(b[B_A], S, NQ);
    in[1] = matrix(b[B_WO], DM, NQ);
    in[2] = absent();
    outs[0] = matrix(b[B_P], S, DM);
    CHECK(ss.api->run_op(ss.device, TGL_OP_LINEAR, &lin, in, 3, outs, 1));
    in[0] = matrix(b[B_P], S, DM);
    in[1] = matrix(b[B_X], S, DM);
    in[2] = vector(b[B_G2], DM);
    outs[0] = matrix(b[B_H2], S, DM);
    outs[1] = matrix(b[B_S], S, DM);
    CHECK(ss.api->run_op(ss.device, TGL_OP_ADD_RMS_NORM, &norm, in, 3, outs, 2));

    /* MLP: gate = silu(h2 @ Wg^T) (fused activation), up = h2 @ Wu^T, m = gate * up. */
    in[0] = matrix(b[B_H2], S, DM);
    in[1] = matrix(b[B_WG], FF, DM);
    in[2] = absent();
    outs[0] = matrix(b[B_GATE], S, FF);
    lin.activation = TGL_ACTIVATION_SILU;
    CHECK(ss.api->run_op(ss.device, TGL_OP_LINEAR, &lin, in, 3, outs, 1));
    lin.activation = TGL_ACTIVATION_NONE;
    in[1] = matrix(b[B_WU], FF, DM);
    outs[0] = matrix(b[B_UP], S, FF);
    CHECK(ss.api->run_op(ss.device, TGL_OP_LINEAR, &lin, in, 3, outs, 1));
    in[0] = matrix(b[B_GATE], S, FF);
    in[1] = matrix(b[B_UP], S, FF);
    outs[0] = matrix(b[B_M], S, FF);
    CHECK(ss.api->run_op(ss.device, TGL_OP_MUL, NULL, in, 2, outs, 1));

    /* out = s + m @ Wd^T. */
    in[0] = matrix(b[B_M], S, FF);
    in[1] = matrix(b[B_WD], DM, FF);
    in[2] = absent();
    outs[0] = matrix(b[B_D], S, DM);
    CHECK(ss.api->run_op(ss.device, TGL_OP_LINEAR, &lin, in, 3, outs, 1));
    in[0] = matrix(b[B_S], S, DM);
    in[1] = matrix(b[B_D], S, DM);
    outs[0] = matrix(b[B_OUT], S, DM);
    CHECK(ss.api->run_op(ss.device, TGL_OP_ADD, NULL, in, 2, outs, 1));

    CHECK(ss.api->buffer_download(ss.device, b[B_OUT], 0, out, sizeof(float) * S * DM));
    CHECK(ss.api->synchronize(ss.device));
    rc = 0;

cleanup:
    return session_end(&ss, rc);
}

/* Deterministic values in [-1, 1) (a 32-bit LCG), scaled. */
static void fill(float* v, int n, uint32_t* state, float scale) {
    int i;
    for (i = 0; i < n; ++i) {
        *state = *state * 1664525u + 1013904223u;
        v[i] = scale * ((float)(*state >> 8) * (1.0f / 8388608.0f) - 1.0f);
    }
}

int main(int argc, char** argv) {
    const char* plugin_under_test = argc > 1 ? argv[1] : "gles";
    const char* reference = "cpu";
    const double tol = 1e-4;
    static weights w;
    static float got[S * DM], want[S * DM];
    uint32_t state = 12345u;
    double max_diff = 0.0, max_ref = 0.0;
    int i, bad = 0;

    if (argc > 2) {
        fprintf(stderr, "usage: %s [plugin-name-or-path]   (default: gles)\n", argv[0]);
        return 2;
    }
    fill(w.x, S * DM, &state, 1.0f);
    for (i = 0; i < S; ++i) w.pos[i] = i;
    fill(w.g1, DM, &state, 0.25f);
    fill(w.g2, DM, &state, 0.25f);
    for (i = 0; i < DM; ++i) { w.g1[i] += 1.0f; w.g2[i] += 1.0f; }
    /* Weights ~ U(-1, 1) / sqrt(fan_in) keep the activations of order 1. */
    fill(w.wqkv, NQKV * DM, &state, 1.0f / sqrtf((float)DM));
    fill(w.wo, DM * NQ, &state, 1.0f / sqrtf((float)NQ));
    fill(w.wg, FF * DM, &state, 1.0f / sqrtf((float)DM));
    fill(w.wu, FF * DM, &state, 1.0f / sqrtf((float)DM));
    fill(w.wd, DM * FF, &state, 1.0f / sqrtf((float)FF));

    printf("tensorgl C sample: one transformer block, x (%d, %d), %d query heads over %d kv heads of %d, "
           "MLP %d\n", S, DM, HQ, HKV, DH, FF);
    if (run_block("test", plugin_under_test, &w, got) != 0) {
        fprintf(stderr, "FAILED: the run on plugin \"%s\" did not complete\n", plugin_under_test);
        return 1;
    }
    if (run_block("reference", reference, &w, want) != 0) {
        fprintf(stderr, "FAILED: the run on the reference plugin \"%s\" did not complete\n", reference);
        return 1;
    }
    for (i = 0; i < S * DM; ++i) {
        double d = fabs((double)got[i] - (double)want[i]);
        double scale = fabs((double)want[i]) > 1.0 ? fabs((double)want[i]) : 1.0;
        if (!(d <= tol * scale)) ++bad; /* NaN fails */
        if (d > max_diff || d != d) max_diff = d;
        if (fabs((double)want[i]) > max_ref) max_ref = fabs((double)want[i]);
    }
    printf("out[0, 0..3]      %s: %.6f %.6f %.6f %.6f\n", plugin_under_test, got[0], got[1], got[2], got[3]);
    printf("out[0, 0..3]      %s: %.6f %.6f %.6f %.6f\n", reference, want[0], want[1], want[2], want[3]);
    printf("out[%d, 124..127] %s: %.6f %.6f %.6f %.6f\n", S - 1, plugin_under_test, got[S * DM - 4],
           got[S * DM - 3], got[S * DM - 2], got[S * DM - 1]);
    printf("out[%d, 124..127] %s: %.6f %.6f %.6f %.6f\n", S - 1, reference, want[S * DM - 4],
           want[S * DM - 3], want[S * DM - 2], want[S * DM - 1]);
    printf("max |out| %.4g, max abs difference %.3g (tolerance %g * max(|ref|, 1))\n", max_ref, max_diff, tol);
    if (bad) {
        fprintf(stderr, "FAILED: %d of %d elements of out disagree between \"%s\" and \"%s\"\n", bad, S * DM,
                plugin_under_test, reference);
        return 1;
    }
    printf("OK: \"%s\" agrees with \"%s\"\n", plugin_under_test, reference);
    return 0;
}
