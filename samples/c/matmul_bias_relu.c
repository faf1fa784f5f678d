/*
 * tensorgl sample (C99): a tiny dense layer followed by a row sum, on a plugin chosen by name.
 *
 *     Y = relu(X @ W + bias)      X: 4x5, W: 5x3, bias: 3 (broadcast over the rows)
 *     s = sum(Y, axis 1)          s: 4
 *
 * Four ops (matmul, add with broadcasting, relu, sum over axis 1) run on the plugin under test
 * ("gles" unless argv[1] names another plugin or gives a path to one) and then on the CPU
 * reference plugin. The program prints both results and the largest difference, and exits 0 only
 * if every element agrees within 1e-5 relative: |test - ref| <= 1e-5 * max(|ref|, 1).
 *
 * Every tensorgl call is checked; a failure prints the function, the status name and the
 * plugin's (or the loader's) own message, and the program exits 1.
 *
 * Usage: tgl_sample_c [plugin-name-or-path]
 */
#include "sample_session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M = 4, K = 5, N = 3 };

/* Results of one run. */
typedef struct result {
    float y[M * N];
    float s[M];
} result;

static void print_matrix(const char* title, const float* v, int rows, int cols) {
    int i, j;
    printf("  %s (%dx%d):\n", title, rows, cols);
    for (i = 0; i < rows; ++i) {
        printf("    [");
        for (j = 0; j < cols; ++j) printf("%s%12.6f", j ? ", " : "", (double)v[i * cols + j]);
        printf("]\n");
    }
}

static void print_vector(const char* title, const float* v, int n) {
    int i;
    printf("  %s (%d): [", title, n);
    for (i = 0; i < n; ++i) printf("%s%.6f", i ? ", " : "", (double)v[i]);
    printf("]\n");
}

/* Loads `plugin_name`, prints its device 0, runs the four ops on it and downloads Y and s.
 * Returns 0 on success, 1 on any failure (already reported). */
static int run_layer(const char* label, const char* plugin_name, const float* x, const float* w,
                     const float* bias, result* out) {
    session ss;
    tgl_plugin_info info;
    const tgl_property* props = NULL;
    uint32_t n_props = 0, n_devices = 0, i;
    const char* renderer;
    const char* api_version;
    const char* dev_name;
    tgl_buffer bx, bw, bb, bh, bt, by, bs;
    tgl_tensor tx, tw, tb, th, tt, ty, ts, in2[2];
    tgl_matmul_params mm;
    tgl_reduce_params red;
    const int64_t shape_x[2] = {M, K}, shape_w[2] = {K, N}, shape_b[1] = {N};
    const int64_t shape_y[2] = {M, N}, shape_s[1] = {M};
    int rc = 1;

    if (session_begin(&ss, label, plugin_name)) return 1;

    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK(ss.api->get_plugin_info(&info));
    printf("[%s] plugin \"%s\" %s (ABI %u.%u, negotiated minor %u) from %s\n", label,
           info.name ? info.name : "?", info.version ? info.version : "?",
           (unsigned)info.abi_major, (unsigned)info.abi_minor, (unsigned)info.negotiated_minor,
           tgl_plugin_path(ss.plugin));

    CHECK(ss.api->device_count(&n_devices));
    if (n_devices == 0) /* the plugin's own message below (from device_properties) says why */
        fprintf(stderr, "[%s] plugin \"%s\" reports 0 devices\n", label, info.name ? info.name : plugin_name);
    CHECK(ss.api->device_properties(0, &props, &n_props));
    renderer = api_version = dev_name = "(not reported)";
    for (i = 0; i < n_props; ++i) {
        if (props[i].name == NULL || props[i].value == NULL) continue;
        if (strcmp(props[i].name, "renderer") == 0) renderer = props[i].value;
        if (strcmp(props[i].name, "api.version") == 0) api_version = props[i].value;
        if (strcmp(props[i].name, "name") == 0) dev_name = props[i].value;
    }
    printf("[%s] device 0 of %u: name: %s\n", label, (unsigned)n_devices, dev_name);
    printf("[%s]   renderer:    %s\n", label, renderer);
    printf("[%s]   api.version: %s\n", label, api_version);

    CHECK(ss.api->device_open(0, &ss.device));

    /* One buffer per tensor. */
    if (!(bx = session_alloc(&ss, sizeof(float) * M * K))) goto cleanup;
    if (!(bw = session_alloc(&ss, sizeof(float) * K * N))) goto cleanup;
    if (!(bb = session_alloc(&ss, sizeof(float) * N))) goto cleanup;
    if (!(bh = session_alloc(&ss, sizeof(float) * M * N))) goto cleanup; /* X @ W */
    if (!(bt = session_alloc(&ss, sizeof(float) * M * N))) goto cleanup; /* + bias */
    if (!(by = session_alloc(&ss, sizeof(float) * M * N))) goto cleanup; /* relu */
    if (!(bs = session_alloc(&ss, sizeof(float) * M)))     goto cleanup; /* row sums */

    CHECK(ss.api->buffer_upload(ss.device, bx, 0, x, sizeof(float) * M * K));
    CHECK(ss.api->buffer_upload(ss.device, bw, 0, w, sizeof(float) * K * N));
    CHECK(ss.api->buffer_upload(ss.device, bb, 0, bias, sizeof(float) * N));

    tx = tgl_tensor_contiguous(bx, 0, TGL_DTYPE_F32, 2, shape_x);
    tw = tgl_tensor_contiguous(bw, 0, TGL_DTYPE_F32, 2, shape_w);
    tb = tgl_tensor_contiguous(bb, 0, TGL_DTYPE_F32, 1, shape_b); /* broadcast as (1, N) */
    th = tgl_tensor_contiguous(bh, 0, TGL_DTYPE_F32, 2, shape_y);
    tt = tgl_tensor_contiguous(bt, 0, TGL_DTYPE_F32, 2, shape_y);
    ty = tgl_tensor_contiguous(by, 0, TGL_DTYPE_F32, 2, shape_y);
    ts = tgl_tensor_contiguous(bs, 0, TGL_DTYPE_F32, 1, shape_s);

    /* 1. H = 1 * X @ W + 0 * H */
    memset(&mm, 0, sizeof mm);
    mm.struct_size = sizeof mm;
    mm.alpha = 1.0f;
    mm.beta = 0.0f;
    in2[0] = tx;
    in2[1] = tw;
    CHECK(ss.api->run_op(ss.device, TGL_OP_MATMUL, &mm, in2, 2, &th, 1));

    /* 2. T = H + bias (bias of shape (3) broadcasts over the 4 rows) */
    in2[0] = th;
    in2[1] = tb;
    CHECK(ss.api->run_op(ss.device, TGL_OP_ADD, NULL, in2, 2, &tt, 1));

    /* 3. Y = relu(T) */
    CHECK(ss.api->run_op(ss.device, TGL_OP_RELU, NULL, &tt, 1, &ty, 1));

    /* 4. s = sum(Y, axis 1) */
    memset(&red, 0, sizeof red);
    red.struct_size = sizeof red;
    red.keepdims = 0;
    red.n_axes = 1;
    red.axes[0] = 1;
    CHECK(ss.api->run_op(ss.device, TGL_OP_SUM, &red, &ty, 1, &ts, 1));

    /* Downloads wait for the queued work that writes the buffers. */
    CHECK(ss.api->buffer_download(ss.device, by, 0, out->y, sizeof out->y));
    CHECK(ss.api->buffer_download(ss.device, bs, 0, out->s, sizeof out->s));
    CHECK(ss.api->synchronize(ss.device));
    rc = 0;

cleanup:
    return session_end(&ss, rc);
}

/* Largest |a - b| and whether every element is within tol * max(|b|, 1); NaN never agrees. */
static int compare(const float* a, const float* b, int n, double tol, double* max_abs_diff) {
    int i, ok = 1;
    for (i = 0; i < n; ++i) {
        double d = fabs((double)a[i] - (double)b[i]);
        double scale = fabs((double)b[i]) > 1.0 ? fabs((double)b[i]) : 1.0;
        if (!(d <= tol * scale)) ok = 0; /* written so that NaN fails */
        if (d > *max_abs_diff || d != d) *max_abs_diff = d;
    }
    return ok;
}

int main(int argc, char** argv) {
    const char* plugin_under_test = argc > 1 ? argv[1] : "gles";
    const char* reference = "cpu";
    const double tol = 1e-5;
    float x[M * K], w[K * N], bias[N];
    result test_res, ref_res;
    double max_diff = 0.0;
    int i, ok_y, ok_s;

    if (argc > 2) {
        fprintf(stderr, "usage: %s [plugin-name-or-path]   (default: gles)\n", argv[0]);
        return 2;
    }

    /* Deterministic inputs with both signs, so relu clips some entries of X @ W + bias. */
    for (i = 0; i < M * K; ++i) x[i] = (float)((i * 7 % 11) - 5) * 0.25f + 0.125f;
    for (i = 0; i < K * N; ++i) w[i] = (float)((i * 5 % 13) - 6) * 0.3f;
    for (i = 0; i < N; ++i) bias[i] = 0.5f - 0.75f * (float)i;

    printf("tensorgl C sample: Y = relu(X @ W + bias), s = sum(Y, axis 1); X %dx%d, W %dx%d, "
           "bias %d\n\n", M, K, K, N, N);
    print_matrix("X", x, M, K);
    print_matrix("W", w, K, N);
    print_vector("bias", bias, N);
    printf("\n");

    memset(&test_res, 0, sizeof test_res);
    memset(&ref_res, 0, sizeof ref_res);
    if (run_layer("test", plugin_under_test, x, w, bias, &test_res) != 0) {
        fprintf(stderr, "FAILED: the run on plugin \"%s\" did not complete\n", plugin_under_test);
        return 1;
    }
    printf("\n");
    if (run_layer("reference", reference, x, w, bias, &ref_res) != 0) {
        fprintf(stderr, "FAILED: the run on the reference plugin \"%s\" did not complete\n",
                reference);
        return 1;
    }

    printf("\nResults of \"%s\":\n", plugin_under_test);
    print_matrix("Y", test_res.y, M, N);
    print_vector("s", test_res.s, M);
    printf("Results of \"%s\" (reference):\n", reference);
    print_matrix("Y", ref_res.y, M, N);
    print_vector("s", ref_res.s, M);

    ok_y = compare(test_res.y, ref_res.y, M * N, tol, &max_diff);
    ok_s = compare(test_res.s, ref_res.s, M, tol, &max_diff);
    printf("\nmax abs difference: %.3g (tolerance: %g * max(|ref|, 1))\n", max_diff, tol);
    if (!ok_y || !ok_s) {
        fprintf(stderr, "FAILED: \"%s\" and \"%s\" disagree in %s%s%s\n", plugin_under_test,
                reference, ok_y ? "" : "Y", (!ok_y && !ok_s) ? " and " : "", ok_s ? "" : "s");
        return 1;
    }
    printf("OK: \"%s\" agrees with \"%s\"\n", plugin_under_test, reference);
    return 0;
}
