/* Consumer of tensorgl built as a subproject (add_subdirectory / FetchContent; C99, loader.h):
 * lists the plugins the loader finds, then sums a row of 5 values on the GLES plugin and checks the
 * result. Exits 0 only when it is right. */
#include <tensorgl/loader.h>

#include <stdio.h>
#include <string.h>

static int fail(const tgl_plugin_api* api, const char* what, tgl_status s) {
    fprintf(stderr, "add_subdirectory consumer: %s failed with %s: %s\n", what, tgl_status_name(s),
            api ? api->last_error_message() : tgl_loader_last_error());
    return 1;
}

int main(void) {
    const char* names[8];
    size_t n = 0;
    tgl_status s = tgl_plugin_list(names, NULL, 8, &n);
    if (s != TGL_OK) return fail(NULL, "tgl_plugin_list", s);
    printf("add_subdirectory consumer: %zu plugin(s) found:", n);
    for (size_t i = 0; i < n && i < 8; ++i) printf(" %s", names[i]);
    printf("\n");

    tgl_plugin* plugin = NULL;
    if ((s = tgl_plugin_load("gles", &plugin)) != TGL_OK) return fail(NULL, "tgl_plugin_load(\"gles\")", s);
    const tgl_plugin_api* api = tgl_plugin_get_api(plugin);
    tgl_device dev = 0;
    if ((s = api->device_open(0, &dev)) != TGL_OK) return fail(api, "device_open", s);
    const float x[5] = {1.0f, 2.0f, 3.0f, 4.0f, 5.5f};
    float sum = 0.0f;
    tgl_buffer bx = 0, bs = 0;
    const int64_t shape_x[2] = {1, 5}, shape_s[1] = {1};
    if ((s = api->buffer_alloc(dev, sizeof x, &bx)) != TGL_OK) return fail(api, "buffer_alloc", s);
    if ((s = api->buffer_alloc(dev, sizeof sum, &bs)) != TGL_OK) return fail(api, "buffer_alloc", s);
    if ((s = api->buffer_upload(dev, bx, 0, x, sizeof x)) != TGL_OK) return fail(api, "buffer_upload", s);
    tgl_tensor tx = tgl_tensor_contiguous(bx, 0, TGL_DTYPE_F32, 2, shape_x);
    tgl_tensor ts = tgl_tensor_contiguous(bs, 0, TGL_DTYPE_F32, 1, shape_s);
    tgl_reduce_params p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.n_axes = 1;
    p.axes[0] = 1; /* sum over axis 1 */
    if ((s = api->run_op(dev, TGL_OP_SUM, &p, &tx, 1, &ts, 1)) != TGL_OK) return fail(api, "run_op(sum)", s);
    if ((s = api->buffer_download(dev, bs, 0, &sum, sizeof sum)) != TGL_OK) return fail(api, "buffer_download", s);
    if ((s = api->device_close(dev)) != TGL_OK) return fail(api, "device_close", s);
    printf("add_subdirectory consumer: %s on %s: sum([1 2 3 4 5.5]) = %g\n", tgl_plugin_path(plugin),
           tgl_device_property(plugin, 0, "renderer"), (double)sum);
    tgl_plugin_release(plugin);
    if (sum != 15.5f) {
        fprintf(stderr, "add_subdirectory consumer: wrong sum\n");
        return 1;
    }
    return 0;
}
