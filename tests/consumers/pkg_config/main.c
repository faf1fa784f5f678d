/* Consumer of an installed tensorgl through pkg-config (C99, loader.h only), built with
 *     cc main.c $(pkg-config --cflags --libs tensorgl) -Wl,-rpath,$(pkg-config --variable=libdir tensorgl)
 * Runs relu on 4 values on the GLES plugin and checks the result. Exits 0 only when it is right. */
#include <tensorgl/loader.h>

#include <stdio.h>

static int fail(const tgl_plugin_api* api, const char* what, tgl_status s) {
    fprintf(stderr, "pkg_config consumer: %s failed with %s: %s\n", what, tgl_status_name(s),
            api ? api->last_error_message() : tgl_loader_last_error());
    return 1;
}

int main(void) {
    tgl_plugin* plugin = NULL;
    tgl_status s = tgl_plugin_load("gles", &plugin);
    if (s != TGL_OK) return fail(NULL, "tgl_plugin_load(\"gles\")", s);
    const tgl_plugin_api* api = tgl_plugin_get_api(plugin);
    tgl_device dev = 0;
    if ((s = api->device_open(0, &dev)) != TGL_OK) return fail(api, "device_open", s);
    const float x[4] = {-2.0f, -0.5f, 0.5f, 3.0f};
    float y[4] = {0};
    tgl_buffer bx = 0, by = 0;
    const int64_t shape[1] = {4};
    if ((s = api->buffer_alloc(dev, sizeof x, &bx)) != TGL_OK) return fail(api, "buffer_alloc", s);
    if ((s = api->buffer_alloc(dev, sizeof y, &by)) != TGL_OK) return fail(api, "buffer_alloc", s);
    if ((s = api->buffer_upload(dev, bx, 0, x, sizeof x)) != TGL_OK) return fail(api, "buffer_upload", s);
    tgl_tensor tx = tgl_tensor_contiguous(bx, 0, TGL_DTYPE_F32, 1, shape);
    tgl_tensor ty = tgl_tensor_contiguous(by, 0, TGL_DTYPE_F32, 1, shape);
    if ((s = api->run_op(dev, TGL_OP_RELU, NULL, &tx, 1, &ty, 1)) != TGL_OK) return fail(api, "run_op(relu)", s);
    if ((s = api->buffer_download(dev, by, 0, y, sizeof y)) != TGL_OK) return fail(api, "buffer_download", s);
    if ((s = api->device_close(dev)) != TGL_OK) return fail(api, "device_close", s);
    printf("pkg_config consumer: %s on %s: relu([-2 -0.5 0.5 3]) = [%g %g %g %g]\n", tgl_plugin_path(plugin),
           tgl_device_property(plugin, 0, "renderer"), (double)y[0], (double)y[1], (double)y[2], (double)y[3]);
    tgl_plugin_release(plugin);
    if (y[0] != 0.0f || y[1] != 0.0f || y[2] != 0.5f || y[3] != 3.0f) {
        fprintf(stderr, "pkg_config consumer: wrong result\n");
        return 1;
    }
    return 0;
}
