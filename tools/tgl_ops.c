/* tgl_ops: prints the op table of one or more plugins from their capability query, as Markdown
 * (the README's op table is this output; a test keeps the two equal).
 * Each plugin column gives the dtypes it takes per operand (inputs -> outputs; "x8": eight operands
 * with the same dtypes; "any": every dtype). Usage: tgl_ops <plugin name or path>...  e.g. tgl_ops cpu gles */
#include <tensorgl/loader.h>

#include <stdio.h>
#include <string.h>

#define MAX_PLUGINS 4

static const char* dtype_names[TGL_DTYPE_COUNT_V1_0] = {"", "f32", "f16", "bf16", "i32", "i8", "u8", "bool"};

/* One operand's dtype mask: "any" (all seven), "f32/f16", "i32", ... */
static void mask_string(uint32_t mask, char* out, size_t size) {
    uint32_t all = 0;
    for (uint32_t dt = 1; dt < TGL_DTYPE_COUNT_V1_0; ++dt) all |= TGL_DTYPE_BIT(dt);
    out[0] = '\0';
    if (mask == all) {
        snprintf(out, size, "any");
        return;
    }
    for (uint32_t dt = 1; dt < TGL_DTYPE_COUNT_V1_0; ++dt)
        if (mask & TGL_DTYPE_BIT(dt)) {
            if (out[0]) strncat(out, "/", size - strlen(out) - 1);
            strncat(out, dtype_names[dt], size - strlen(out) - 1);
        }
}

/* Operand masks in order, runs of equal masks as "mask x<n>": "f32/f16, i32 -> any". */
static void append_masks(const uint32_t* masks, uint32_t n, char* out, size_t size) {
    if (n == 0) strncat(out, "()", size - strlen(out) - 1);
    for (uint32_t i = 0; i < n;) {
        uint32_t run = 1;
        while (i + run < n && masks[i + run] == masks[i]) ++run;
        char m[64], item[80];
        mask_string(masks[i], m, sizeof m);
        if (run > 1) snprintf(item, sizeof item, "%s%s x%u", i ? ", " : "", m, run);
        else snprintf(item, sizeof item, "%s%s", i ? ", " : "", m);
        strncat(out, item, size - strlen(out) - 1);
        i += run;
    }
}

/* The dtypes a plugin takes per operand (inputs -> outputs), or "no" for an unsupported op. */
static void dtypes_string(const tgl_op_caps* caps, char* out, size_t size) {
    out[0] = '\0';
    if (!caps->supported) {
        snprintf(out, size, "no");
        return;
    }
    append_masks(caps->input_dtypes, caps->n_inputs, out, size);
    strncat(out, " -> ", size - strlen(out) - 1);
    append_masks(caps->output_dtypes, caps->n_outputs, out, size);
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
    /* Every op id of ABI 1 lies below TGL_OP_ID_LIMIT; every plugin knows the whole catalogue. */
    char planned[4096] = "";
    for (tgl_op op = 1; op < TGL_OP_ID_LIMIT; ++op) {
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
            char dts[256];
            dtypes_string(&caps[i], dts, sizeof dts);
            printf(" %s |", dts);
        }
        printf("\n");
    }
    if (planned[0]) printf("\nPlanned, not implemented by any of these plugins yet: %s.\n", planned);
    else printf("\nEvery op id of ABI 1.%u is implemented by these plugins.\n", (unsigned)TGL_ABI_MINOR);
    return 0;
}
