/* tgl_ops: prints the op table of one or more plugins from their capability query, as Markdown
 * (the README's op table is this output; a test keeps the two equal).
 * Usage: tgl_ops <plugin name or path>...   e.g. tgl_ops cpu gles */
#include <tensorgl/loader.h>

#include <stdio.h>
#include <string.h>

#define MAX_PLUGINS 4

static const char* dtype_names[TGL_DTYPE_COUNT_V1_0] = {"", "f32", "f16", "bf16", "i32", "i8", "u8", "bool"};

/* "f32, f16" from a dtype mask, or "no" for an unsupported op. */
static void dtypes_string(const tgl_op_caps* caps, char* out, size_t size) {
    out[0] = '\0';
    if (!caps->supported) {
        snprintf(out, size, "no");
        return;
    }
    uint32_t mask = caps->n_inputs ? caps->input_dtypes[0] : caps->output_dtypes[0];
    for (uint32_t dt = 1; dt < TGL_DTYPE_COUNT_V1_0; ++dt)
        if (mask & TGL_DTYPE_BIT(dt)) {
            if (out[0]) strncat(out, ", ", size - strlen(out) - 1);
            strncat(out, dtype_names[dt], size - strlen(out) - 1);
        }
}

int main(int argc, char** argv) {
    const tgl_plugin_api* apis[MAX_PLUGINS];
    const char* names[MAX_PLUGINS];
    int n = argc - 1;
    if (n < 1 || n > MAX_PLUGINS) {
        fprintf(stderr, "usage: %s <plugin>... (1 to %d plugins)\n", argv[0], MAX_PLUGINS);
        return 2;
    }
    for (int i = 0; i < n; ++i) {
        tgl_plugin* p;
        if (tgl_plugin_load(argv[i + 1], &p) != TGL_OK) {
            fprintf(stderr, "%s\n", tgl_loader_last_error());
            return 1;
        }
        apis[i] = tgl_plugin_get_api(p);
        names[i] = tgl_plugin_name(p);
    }
    printf("| op | id | inputs -> outputs |");
    for (int i = 0; i < n; ++i) printf(" %s |", names[i]);
    printf("\n|---|---|---|");
    for (int i = 0; i < n; ++i) printf("---|");
    printf("\n");
    /* Ids of ABI 1.0 lie below 2000; every plugin knows the whole catalogue. */
    char planned[4096] = "";
    for (tgl_op op = 1; op < 2000; ++op) {
        tgl_op_caps caps[MAX_PLUGINS];
        int known = 1, any = 0;
        for (int i = 0; i < n && known; ++i) {
            memset(&caps[i], 0, sizeof caps[i]);
            caps[i].struct_size = sizeof caps[i];
            known = apis[i]->query_op(op, &caps[i]) == TGL_OK;
            any |= (int)caps[i].supported;
        }
        if (!known) continue;
        if (!any) {
            if (planned[0]) strncat(planned, ", ", sizeof planned - strlen(planned) - 1);
            strncat(planned, caps[0].name, sizeof planned - strlen(planned) - 1);
            continue;
        }
        printf("| `%s` | %u | %u -> %u |", caps[0].name, op, caps[0].n_inputs, caps[0].n_outputs);
        for (int i = 0; i < n; ++i) {
            char dts[64];
            dtypes_string(&caps[i], dts, sizeof dts);
            printf(" %s |", dts);
        }
        printf("\n");
    }
    printf("\nPlanned, not implemented by any of these plugins yet: %s.\n", planned);
    return 0;
}
