/* tensorgl-info: what tensorgl finds on this machine, in the spirit of vulkaninfo and clinfo.
 *
 * Lists the plugins the loader finds on its search path (and why other files were skipped), every
 * device of each plugin with the properties the plugin reports (renderer, driver, API and GLSL
 * versions, EGL platform, memory, limits, extensions: what the ABI's device_properties gives;
 * what a plugin does not report is said to be "not reported"), whether each device opens, and
 * the op table with the dtypes each plugin takes. Text by default, JSON with --json; the op table
 * alone as Markdown with --ops-markdown (the op reference in the docs is that output; a test
 * keeps the two equal). docs/tensorgl-info.md describes the output and the exit status.
 */
#define _GNU_SOURCE /* getopt_long */
#include <tensorgl/loader.h>

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TGL_PROJECT_VERSION
#error "TGL_PROJECT_VERSION must be defined by the build (the project's version)"
#endif

enum { MAX_PLUGINS = 16 };
/* Every op id of the ABI so far lies below this (ids come in blocks of 100 per family). */
enum { OP_ID_SCAN_END = TGL_OP_ID_LIMIT };  /* every op id of ABI 1 lies below it */
enum { EXIT_NO_DEVICE = 1, EXIT_USAGE = 2 };

/* ------------------------------------------------------------------------------------------ */
/* Small helpers. */

static const char* program = "tensorgl-info";

static char* xstrdup(const char* s) {
    char* d = strdup(s ? s : "");
    if (!d) {
        fprintf(stderr, "%s: out of memory\n", program);
        exit(EXIT_FAILURE);
    }
    return d;
}

/* printf into a new string. */
static char* xformat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static char* xformat(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char* s = malloc((size_t)(n < 0 ? 0 : n) + 1);
    if (!s) {
        fprintf(stderr, "%s: out of memory\n", program);
        exit(EXIT_FAILURE);
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* A JSON string literal of s (UTF-8 passes through; control characters are escaped). */
static void json_string(const char* s) {
    putchar('"');
    for (const unsigned char* p = (const unsigned char*)(s ? s : ""); *p; ++p) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p == '\n') fputs("\\n", stdout);
        else if (*p == '\t') fputs("\\t", stdout);
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

static void json_string_or_null(const char* s) {
    if (s) json_string(s);
    else fputs("null", stdout);
}

/* ------------------------------------------------------------------------------------------ */
/* The op table: dtype masks as text (shared by the Markdown table and the JSON). */

static const char* dtype_names[TGL_DTYPE_COUNT_V1_3] = {
    "", "f32", "f16", "bf16", "i32", "i8", "u8", "bool", "i64", "i16", "", "", "", "", "", "",
    "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q4_K", "q5_K", "q6_K"};

/* Every element dtype ("any" in the table; the GGUF block dtypes are named one by one). */
static uint32_t all_dtypes_mask(void) {
    uint32_t all = 0;
    for (uint32_t dt = 1; dt < TGL_DTYPE_COUNT_V1_3; ++dt)
        if (tgl_dtype_size(dt)) all |= TGL_DTYPE_BIT(dt);
    return all;
}

/* One operand's dtype mask: "any" (all nine), "any but i64", "f32/f16", "i32", ... */
static void mask_string(uint32_t mask, char* out, size_t size) {
    const uint32_t blocks = 0xffu << TGL_DTYPE_Q4_0; /* q4_0 .. q6_K */
    out[0] = '\0';
    if ((mask & blocks) == blocks) { /* every GGUF block dtype (docs/quantized.md): "f32/f16 + gguf" */
        if (mask != blocks) mask_string(mask & ~blocks, out, size);
        strncat(out, out[0] ? " + gguf" : "gguf", size - strlen(out) - 1);
        return;
    }
    if (mask == all_dtypes_mask()) {
        snprintf(out, size, "any");
        return;
    }
    if (mask == (all_dtypes_mask() & ~TGL_DTYPE_BIT(TGL_DTYPE_I64))) {
        snprintf(out, size, "any but i64");
        return;
    }
    for (uint32_t dt = 1; dt < TGL_DTYPE_COUNT_V1_3; ++dt)
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

/* query_op for op on every plugin; 1 if every plugin knows the id. */
static int query_all(const tgl_plugin_api* const* apis, int n, tgl_op op, tgl_op_caps* caps) {
    for (int i = 0; i < n; ++i) {
        memset(&caps[i], 0, sizeof caps[i]);
        caps[i].struct_size = sizeof caps[i];
        if (apis[i]->query_op(op, &caps[i]) != TGL_OK) return 0;
    }
    return 1;
}

/* The op table of the plugins as Markdown: one row per op that any of them implements, one
 * column per plugin with the dtypes it takes per operand, then the ops none implements. */
static void print_ops_markdown(const tgl_plugin_api* const* apis, const char* const* names, int n) {
    printf("| op | id | inputs -> outputs |");
    for (int i = 0; i < n; ++i) printf(" %s |", names[i]);
    printf("\n|---|---|---|");
    for (int i = 0; i < n; ++i) printf("---|");
    printf("\n");
    char planned[4096] = "";
    for (tgl_op op = 1; op < OP_ID_SCAN_END; ++op) {
        tgl_op_caps caps[MAX_PLUGINS];
        if (!query_all(apis, n, op, caps)) continue;
        int any = 0;
        for (int i = 0; i < n; ++i) any |= (int)caps[i].supported;
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
}

static void json_masks(const uint32_t* masks, uint32_t n) {
    putchar('[');
    for (uint32_t i = 0; i < n; ++i) {
        printf("%s[", i ? ", " : "");
        int first = 1;
        for (uint32_t dt = 1; dt < TGL_DTYPE_COUNT_V1_3; ++dt)
            if (masks[i] & TGL_DTYPE_BIT(dt)) {
                printf("%s\"%s\"", first ? "" : ", ", dtype_names[dt]);
                first = 0;
            }
        putchar(']');
    }
    putchar(']');
}

/* Every op id the plugin knows: name, whether it is implemented, and if so the dtypes per
 * operand, the largest rank and the layout flags. */
static void json_ops(const tgl_plugin_api* api) {
    static const struct {
        uint32_t bit;
        const char* name;
    } flags[] = {{TGL_CAP_STRIDED, "strided"}, {TGL_CAP_BROADCAST, "broadcast"}, {TGL_CAP_STRIDED_OUTPUT, "strided_output"}};
    printf("[");
    int first = 1;
    for (tgl_op op = 1; op < OP_ID_SCAN_END; ++op) {
        tgl_op_caps caps;
        if (!query_all(&api, 1, op, &caps)) continue;
        printf("%s\n        {\"id\": %u, \"name\": ", first ? "" : ",", op);
        json_string(caps.name);
        printf(", \"supported\": %s", caps.supported ? "true" : "false");
        if (caps.supported) {
            printf(", \"inputs\": ");
            json_masks(caps.input_dtypes, caps.n_inputs);
            printf(", \"outputs\": ");
            json_masks(caps.output_dtypes, caps.n_outputs);
            printf(", \"max_rank\": %u, \"flags\": [", caps.max_rank);
            int f1 = 1;
            for (size_t f = 0; f < sizeof flags / sizeof flags[0]; ++f)
                if (caps.flags & flags[f].bit) {
                    printf("%s\"%s\"", f1 ? "" : ", ", flags[f].name);
                    f1 = 0;
                }
            printf("]");
        }
        printf("}");
        first = 0;
    }
    printf("\n      ]");
}

/* ------------------------------------------------------------------------------------------ */
/* What is found: plugins, their devices, what was skipped. */

typedef struct device_report {
    uint32_t index;
    const tgl_property* props; /* the plugin's storage */
    uint32_t n_props;
    int usable;  /* properties read and device_open + device_close succeeded */
    char* error; /* why not usable */
} device_report;

typedef struct plugin_report {
    tgl_plugin* plugin;
    const tgl_plugin_api* api;
    tgl_plugin_info info;
    uint32_t device_count;
    char* no_device; /* why the plugin has no usable device (or none of the index asked for) */
    device_report* devices;
    uint32_t n_devices;
} plugin_report;

typedef struct skipped_entry {
    char* path;
    char* reason;
} skipped_entry;

typedef struct report {
    const char** search_dirs;
    size_t n_search_dirs;
    const char* search_origin;
    skipped_entry skipped[64];
    size_t n_skipped;
    plugin_report plugins[MAX_PLUGINS];
    int n_plugins;
    int usable_devices;
    int requested_failed; /* plugins asked for with --plugin that could not be loaded */
} report;

static void add_skipped(report* r, const char* path, char* reason) {
    if (r->n_skipped < sizeof r->skipped / sizeof r->skipped[0]) {
        r->skipped[r->n_skipped].path = xstrdup(path);
        r->skipped[r->n_skipped].reason = reason;
        ++r->n_skipped;
    } else free(reason);
}

/* The plugin's own message after a failing call, prefixed by the call and the status. */
static char* plugin_failure(const tgl_plugin_api* api, const char* call, tgl_status s) {
    const char* msg = api->last_error_message();
    return xformat("%s failed with %s%s%s", call, tgl_status_name(s), msg && *msg ? ": " : "", msg ? msg : "");
}

/* Reads the device's properties and opens and closes it once. */
static void probe_device(const tgl_plugin_api* api, uint32_t index, device_report* d) {
    memset(d, 0, sizeof *d);
    d->index = index;
    tgl_status s = api->device_properties(index, &d->props, &d->n_props);
    if (s != TGL_OK) {
        d->props = NULL;
        d->n_props = 0;
        d->error = plugin_failure(api, "device_properties", s);
        return;
    }
    tgl_device dev = 0;
    s = api->device_open(index, &dev);
    if (s != TGL_OK) {
        d->error = plugin_failure(api, "device_open", s);
        return;
    }
    s = api->device_close(dev);
    if (s != TGL_OK) {
        d->error = plugin_failure(api, "device_close", s);
        return;
    }
    d->usable = 1;
}

/* Devices of a loaded plugin: all of them, or only `only_device` (>= 0). */
static void probe_plugin(plugin_report* p, long only_device) {
    const tgl_plugin_api* api = p->api;
    memset(&p->info, 0, sizeof p->info);
    p->info.struct_size = sizeof p->info;
    tgl_status s = api->get_plugin_info(&p->info);
    if (s != TGL_OK) memset(&p->info, 0, sizeof p->info); /* the loader checked it once already */
    s = api->device_count(&p->device_count);
    if (s != TGL_OK) {
        p->device_count = 0;
        p->no_device = plugin_failure(api, "device_count", s);
        return;
    }
    uint32_t first = 0, end = p->device_count;
    if (only_device >= 0) {
        first = (uint32_t)only_device;
        end = first + 1;
    }
    if (first >= p->device_count) {
        /* The plugin says why there is no such device (DEVICE_UNAVAILABLE with its note). */
        const tgl_property* props;
        uint32_t n;
        s = api->device_properties(first, &props, &n);
        const char* msg = s != TGL_OK ? api->last_error_message() : NULL;
        p->no_device = msg && *msg ? xformat("%s (%s)", msg, tgl_status_name(s))
                                   : xformat("no device %u: the plugin has %u", first, p->device_count);
        return;
    }
    p->devices = calloc(end - first, sizeof *p->devices);
    if (!p->devices) {
        fprintf(stderr, "%s: out of memory\n", program);
        exit(EXIT_FAILURE);
    }
    for (uint32_t i = first; i < end; ++i) probe_device(api, i, &p->devices[p->n_devices++]);
}

/* Loads `name_or_path`; on failure records it as skipped and returns 0. */
static int load_plugin(report* r, const char* name_or_path, long only_device) {
    if (r->n_plugins == MAX_PLUGINS) {
        add_skipped(r, name_or_path, xformat("not examined: tensorgl-info shows at most %d plugins", MAX_PLUGINS));
        return 0;
    }
    tgl_plugin* plugin = NULL;
    tgl_status s = tgl_plugin_load(name_or_path, &plugin);
    if (s != TGL_OK) {
        add_skipped(r, name_or_path, xformat("cannot be loaded (%s): %s", tgl_status_name(s), tgl_loader_last_error()));
        return 0;
    }
    plugin_report* p = &r->plugins[r->n_plugins++];
    memset(p, 0, sizeof *p);
    p->plugin = plugin;
    p->api = tgl_plugin_get_api(plugin);
    probe_plugin(p, only_device);
    for (uint32_t i = 0; i < p->n_devices; ++i) r->usable_devices += p->devices[i].usable;
    return 1;
}

/* The search path, then every plugin the loader lists (or only those asked for). */
static void gather(report* r, const char* const* wanted, int n_wanted, long only_device) {
    size_t n = 0;
    if (tgl_plugin_search_dirs(NULL, 0, &n, NULL) == TGL_OK) {
        r->search_dirs = calloc(n ? n : 1, sizeof *r->search_dirs);
        if (r->search_dirs) tgl_plugin_search_dirs(r->search_dirs, n, &r->n_search_dirs, &r->search_origin);
        if (r->n_search_dirs > n) r->n_search_dirs = n;
    }
    if (n_wanted > 0) {
        for (int i = 0; i < n_wanted; ++i) r->requested_failed += !load_plugin(r, wanted[i], only_device);
        return;
    }
    size_t found = 0;
    if (tgl_plugin_list(NULL, NULL, 0, &found) != TGL_OK) {
        add_skipped(r, "(search path)", xformat("tgl_plugin_list failed: %s", tgl_loader_last_error()));
        return;
    }
    const char** paths = calloc(found ? found : 1, sizeof *paths);
    if (!paths) {
        fprintf(stderr, "%s: out of memory\n", program);
        exit(EXIT_FAILURE);
    }
    tgl_plugin_list(NULL, paths, found, &found);
    /* Copies: the loader's strings last only until its next list call on this thread. */
    char** own = calloc(found ? found : 1, sizeof *own);
    if (!own) {
        fprintf(stderr, "%s: out of memory\n", program);
        exit(EXIT_FAILURE);
    }
    for (size_t i = 0; i < found; ++i) own[i] = xstrdup(paths[i]);
    size_t n_skip = 0;
    tgl_plugin_list_skipped(NULL, NULL, 0, &n_skip);
    const char** skip_paths = calloc(n_skip ? n_skip : 1, sizeof *skip_paths);
    const char** skip_reasons = calloc(n_skip ? n_skip : 1, sizeof *skip_reasons);
    if (!skip_paths || !skip_reasons) {
        fprintf(stderr, "%s: out of memory\n", program);
        exit(EXIT_FAILURE);
    }
    tgl_plugin_list_skipped(skip_paths, skip_reasons, n_skip, &n_skip);
    for (size_t i = 0; i < n_skip; ++i) add_skipped(r, skip_paths[i], xstrdup(skip_reasons[i]));
    free(skip_paths);
    free(skip_reasons);
    for (size_t i = 0; i < found; ++i) {
        load_plugin(r, own[i], only_device);
        free(own[i]);
    }
    free(own);
    free(paths);
}

/* Why the command fails, in one line: a plugin asked for with --plugin that cannot be loaded, or
 * no usable device (NULL when neither). */
static char* failure_reason(const report* r) {
    if (r->requested_failed) {
        char* why = xstrdup("");
        for (size_t i = 0; i < r->n_skipped; ++i) {
            char* w = xformat("%s%splugin %s %s", why, i ? "; " : "", r->skipped[i].path, r->skipped[i].reason);
            free(why);
            why = w;
        }
        return why;
    }
    if (r->usable_devices > 0) return NULL;
    char* why = NULL;
    if (r->n_plugins == 0) {
        why = xformat("no plugin could be loaded (search path from %s:", r->search_origin ? r->search_origin : "?");
        for (size_t i = 0; i < r->n_search_dirs; ++i) {
            char* w = xformat("%s %s", why, r->search_dirs[i]);
            free(why);
            why = w;
        }
        char* w = xformat("%s)", why);
        free(why);
        why = w;
    } else why = xstrdup("no usable device");
    for (int i = 0; i < r->n_plugins; ++i) {
        const plugin_report* p = &r->plugins[i];
        const char* name = tgl_plugin_name(p->plugin);
        char* w;
        if (p->no_device) w = xformat("%s; %s: %s", why, name, p->no_device);
        else {
            w = xstrdup(why);
            for (uint32_t d = 0; d < p->n_devices; ++d) {
                char* w2 = xformat("%s; %s device %u: %s", w, name, p->devices[d].index, p->devices[d].error);
                free(w);
                w = w2;
            }
        }
        free(why);
        why = w;
    }
    for (size_t i = 0; i < r->n_skipped; ++i) {
        char* w = xformat("%s; skipped %s: %s", why, r->skipped[i].path, r->skipped[i].reason);
        free(why);
        why = w;
    }
    return why;
}

/* ------------------------------------------------------------------------------------------ */
/* Text output. */

/* Properties shown first, under these labels, and said to be missing when a plugin lacks them. */
static const struct {
    const char* key;
    const char* label;
} headline[] = {
    {"renderer", "renderer"},           {"vendor", "vendor"},           {"api.version", "API version"},
    {"driver.version", "driver"},       {"shading.version", "GLSL version"}, {"egl.platform", "EGL platform"},
    {"memory.bytes", "memory"},
};
enum { N_HEADLINE = sizeof headline / sizeof headline[0] };

static const char* property(const device_report* d, const char* key) {
    for (uint32_t i = 0; i < d->n_props; ++i)
        if (d->props[i].name && strcmp(d->props[i].name, key) == 0) return d->props[i].value;
    return NULL;
}

static int is_headline(const char* key) {
    for (int h = 0; h < N_HEADLINE; ++h)
        if (strcmp(key, headline[h].key) == 0) return 1;
    return 0;
}

/* Words of `text` wrapped at 100 columns, each line indented by `indent` spaces. */
static void print_wrapped(const char* text, int indent) {
    int col = indent;
    printf("%*s", indent, "");
    const char* p = text;
    while (*p) {
        while (*p == ' ') ++p;
        size_t len = strcspn(p, " ");
        if (!len) break;
        if (col > indent && col + 1 + (int)len > 100) {
            printf("\n%*s", indent, "");
            col = indent;
        }
        if (col > indent) {
            putchar(' ');
            ++col;
        }
        printf("%.*s", (int)len, p);
        col += (int)len;
        p += len;
    }
    putchar('\n');
}

static void print_device_text(const char* plugin_name, const device_report* d) {
    const char* name = property(d, "name");
    printf("\n%s device %u: %s\n", plugin_name, d->index, name ? name : "(no name reported)");
    printf("  %-22s %s\n", "status", d->usable ? "usable (opened and closed)" : d->error);
    if (!d->props) return;
    for (int h = 0; h < N_HEADLINE; ++h) {
        const char* v = property(d, headline[h].key);
        if (!v) printf("  %-22s not reported by this plugin\n", headline[h].label);
        else if (strcmp(headline[h].key, "memory.bytes") == 0)
            printf("  %-22s %s bytes (%.1f GiB)\n", headline[h].label, v, strtod(v, NULL) / (1024.0 * 1024 * 1024));
        else printf("  %-22s %s\n", headline[h].label, v);
    }
    printf("  limits\n");
    int any_limit = 0;
    for (uint32_t i = 0; i < d->n_props; ++i)
        if (strncmp(d->props[i].name, "limit.", 6) == 0) {
            printf("    %-34s %s\n", d->props[i].name + 6, d->props[i].value);
            any_limit = 1;
        }
    if (!any_limit) printf("    (none reported by this plugin)\n");
    const char* ext = property(d, "extensions");
    const char* ext_count = property(d, "extensions.count");
    if (ext) {
        printf("  extensions (%s)\n", ext_count ? ext_count : "?");
        if (*ext) print_wrapped(ext, 4);
    } else printf("  %-22s not reported by this plugin\n", "extensions");
    printf("  other properties\n");
    for (uint32_t i = 0; i < d->n_props; ++i) {
        const char* k = d->props[i].name;
        if (strcmp(k, "name") == 0 || is_headline(k) || strncmp(k, "limit.", 6) == 0 ||
            strcmp(k, "extensions") == 0 || strcmp(k, "extensions.count") == 0)
            continue;
        printf("    %-34s %s\n", k, d->props[i].value);
    }
}

static void print_text(const report* r, int with_ops) {
    printf("tensorgl-info %s (plugin ABI %d.%d)\n\n", TGL_PROJECT_VERSION, TGL_ABI_MAJOR, TGL_ABI_MINOR);
    printf("Plugin search path (%s):\n",
           r->search_origin && strcmp(r->search_origin, "TGL_PLUGIN_PATH") == 0
               ? "from TGL_PLUGIN_PATH"
               : "the defaults: libtensorgl's directory, its tensorgl/ subdirectory, the install directory");
    for (size_t i = 0; i < r->n_search_dirs; ++i) printf("  %s\n", r->search_dirs[i]);
    printf("\nPlugins (%d loaded):\n", r->n_plugins);
    if (r->n_plugins == 0) printf("  (none)\n");
    for (int i = 0; i < r->n_plugins; ++i) {
        const plugin_report* p = &r->plugins[i];
        printf("  %-6s %s, ABI %u.%u (used: 1.%u), %u device%s\n", tgl_plugin_name(p->plugin),
               p->info.version ? p->info.version : "(no version)", p->info.abi_major, p->info.abi_minor,
               tgl_plugin_abi_minor(p->plugin), p->device_count, p->device_count == 1 ? "" : "s");
        printf("         %s\n", tgl_plugin_path(p->plugin));
        if (p->info.description && *p->info.description) printf("         %s\n", p->info.description);
        if (p->no_device) printf("         no usable device: %s\n", p->no_device);
    }
    if (r->n_skipped) {
        printf("\nSkipped:\n");
        for (size_t i = 0; i < r->n_skipped; ++i) printf("  %s: %s\n", r->skipped[i].path, r->skipped[i].reason);
    }
    for (int i = 0; i < r->n_plugins; ++i)
        for (uint32_t d = 0; d < r->plugins[i].n_devices; ++d)
            print_device_text(tgl_plugin_name(r->plugins[i].plugin), &r->plugins[i].devices[d]);
    if (with_ops && r->n_plugins > 0) {
        printf("\nOps (the dtypes each plugin takes per operand, inputs -> outputs; \"x8\": eight operands\n"
               "alike; \"any\": every dtype; \"no\": not implemented):\n\n");
        const tgl_plugin_api* apis[MAX_PLUGINS];
        const char* names[MAX_PLUGINS];
        for (int i = 0; i < r->n_plugins; ++i) {
            apis[i] = r->plugins[i].api;
            names[i] = tgl_plugin_name(r->plugins[i].plugin);
        }
        print_ops_markdown(apis, names, r->n_plugins);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* JSON output. */

static void print_json(const report* r, int with_ops, const char* error) {
    printf("{\n  \"tensorgl_info\": {\"version\": ");
    json_string(TGL_PROJECT_VERSION);
    printf(", \"plugin_abi\": \"%d.%d\"},\n", TGL_ABI_MAJOR, TGL_ABI_MINOR);
    printf("  \"search_path\": {\"origin\": ");
    json_string(r->search_origin);
    printf(", \"dirs\": [");
    for (size_t i = 0; i < r->n_search_dirs; ++i) {
        printf("%s", i ? ", " : "");
        json_string(r->search_dirs[i]);
    }
    printf("]},\n  \"skipped\": [");
    for (size_t i = 0; i < r->n_skipped; ++i) {
        printf("%s\n    {\"path\": ", i ? "," : "");
        json_string(r->skipped[i].path);
        printf(", \"reason\": ");
        json_string(r->skipped[i].reason);
        printf("}");
    }
    printf("%s],\n  \"plugins\": [", r->n_skipped ? "\n  " : "");
    for (int i = 0; i < r->n_plugins; ++i) {
        const plugin_report* p = &r->plugins[i];
        printf("%s\n    {\n      \"name\": ", i ? "," : "");
        json_string(tgl_plugin_name(p->plugin));
        printf(",\n      \"path\": ");
        json_string(tgl_plugin_path(p->plugin));
        printf(",\n      \"version\": ");
        json_string(p->info.version);
        printf(",\n      \"description\": ");
        json_string(p->info.description);
        printf(",\n      \"abi\": \"%u.%u\", \"abi_used\": \"1.%u\",\n", p->info.abi_major, p->info.abi_minor,
               tgl_plugin_abi_minor(p->plugin));
        printf("      \"device_count\": %u,\n      \"no_device\": ", p->device_count);
        json_string_or_null(p->no_device);
        printf(",\n      \"devices\": [");
        for (uint32_t d = 0; d < p->n_devices; ++d) {
            const device_report* dv = &p->devices[d];
            printf("%s\n        {\"index\": %u, \"usable\": %s, \"error\": ", d ? "," : "", dv->index,
                   dv->usable ? "true" : "false");
            json_string_or_null(dv->error);
            printf(",\n         \"not_reported\": [");
            int first = 1;
            for (int h = 0; dv->props && h <= N_HEADLINE; ++h) {
                const char* key = h < N_HEADLINE ? headline[h].key : "extensions";
                if (!property(dv, key)) {
                    printf("%s", first ? "" : ", ");
                    json_string(key);
                    first = 0;
                }
            }
            printf("],\n         \"properties\": {");
            for (uint32_t k = 0; k < dv->n_props; ++k) {
                printf("%s\n           ", k ? "," : "");
                json_string(dv->props[k].name);
                printf(": ");
                json_string(dv->props[k].value);
            }
            printf("%s}}", dv->n_props ? "\n         " : "");
        }
        printf("%s]", p->n_devices ? "\n      " : "");
        if (with_ops) {
            printf(",\n      \"ops\": ");
            json_ops(p->api);
        }
        printf("\n    }");
    }
    printf("%s],\n  \"usable_devices\": %d,\n  \"error\": ", r->n_plugins ? "\n  " : "", r->usable_devices);
    json_string_or_null(error);
    printf("\n}\n");
}

/* ------------------------------------------------------------------------------------------ */
/* Command line. */

static void usage(FILE* to) {
    fprintf(to,
            "Usage: %s [OPTION]...\n"
            "Shows the tensorgl plugins the loader finds (and why other files were skipped), every\n"
            "device with its properties (renderer, driver, GL and GLSL versions, EGL platform, memory,\n"
            "limits, extensions), and the ops each plugin implements with their dtypes.\n"
            "\n"
            "  -p, --plugin=NAME|PATH  only this plugin (repeat the option for several); default: every\n"
            "                          plugin on the search path\n"
            "  -d, --device=N          only device N of each plugin\n"
            "  -j, --json              print JSON instead of text\n"
            "      --no-ops            leave out the op table\n"
            "      --ops-markdown      print only the op table of the plugins, as Markdown (the op\n"
            "                          reference in the docs is this output), without opening devices\n"
            "  -h, --help              print this help and exit\n"
            "  -V, --version           print the version and exit\n"
            "\n"
            "Exit status: 0 when at least one device is usable (and every --plugin loaded); 1 when\n"
            "no device is usable or a plugin asked for cannot be loaded (the reason is printed on\n"
            "stderr, and as \"error\" in the JSON); 2 for a bad command line.\n"
            "Environment: TGL_PLUGIN_PATH (colon-separated plugin directories, replacing the\n"
            "defaults), TGL_LOADER_DEBUG=1 (the loader explains every candidate on stderr), and the\n"
            "plugins' own variables (TGL_DEVICE, TGL_GLES_LIMITS, ...: docs/tensorgl-info.md).\n",
            program);
}

static void bad_usage(const char* fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void bad_usage(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", program);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help' for more information.\n", program);
    exit(EXIT_USAGE);
}

int main(int argc, char** argv) {
    enum { OPT_NO_OPS = 256, OPT_OPS_MARKDOWN };
    static const struct option options[] = {
        {"plugin", required_argument, NULL, 'p'}, {"device", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},         {"no-ops", no_argument, NULL, OPT_NO_OPS},
        {"ops-markdown", no_argument, NULL, OPT_OPS_MARKDOWN},
        {"help", no_argument, NULL, 'h'},         {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    program = argv[0]; /* as getopt_long names the program in its messages */
    static const char* wanted[MAX_PLUGINS]; /* static: the copies of listed names stay reachable */
    int n_wanted = 0, json = 0, with_ops = 1, ops_markdown = 0;
    long only_device = -1;
    int c;
    while ((c = getopt_long(argc, argv, "p:d:jhV", options, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (n_wanted == MAX_PLUGINS) bad_usage("--plugin: at most %d plugins, got more", MAX_PLUGINS);
            if (!*optarg) bad_usage("--plugin: expected a plugin name or path, got an empty value");
            wanted[n_wanted++] = optarg;
            break;
        case 'd': {
            char* end = NULL;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (optarg[0] < '0' || optarg[0] > '9' || *end || errno || v > 0xFFFFFFFFul)
                bad_usage("--device: expected a device index (a decimal number from 0), got '%s'", optarg);
            only_device = (long)v;
            break;
        }
        case 'j': json = 1; break;
        case OPT_NO_OPS: with_ops = 0; break;
        case OPT_OPS_MARKDOWN: ops_markdown = 1; break;
        case 'h': usage(stdout); return 0;
        case 'V':
            printf("tensorgl-info %s (plugin ABI %d.%d)\n", TGL_PROJECT_VERSION, TGL_ABI_MAJOR, TGL_ABI_MINOR);
            return 0;
        default: /* getopt_long has named the option */
            fprintf(stderr, "Try '%s --help' for more information.\n", program);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) bad_usage("unexpected argument '%s' (plugins are chosen with --plugin)", argv[optind]);
    if (ops_markdown && (json || only_device >= 0 || !with_ops))
        bad_usage("--ops-markdown prints the op table alone: it takes only --plugin");

    static report r;
    if (ops_markdown) {
        /* The op table needs no device: load the plugins and ask query_op. */
        const tgl_plugin_api* apis[MAX_PLUGINS];
        const char* names[MAX_PLUGINS];
        size_t found = 0;
        const char* listed[MAX_PLUGINS];
        if (n_wanted == 0) {
            if (tgl_plugin_list(listed, NULL, MAX_PLUGINS, &found) != TGL_OK) found = 0;
            for (size_t i = 0; i < found && i < MAX_PLUGINS; ++i) wanted[n_wanted++] = xstrdup(listed[i]);
        }
        if (n_wanted == 0) {
            fprintf(stderr, "%s: no plugin found on the search path (see %s without --ops-markdown)\n", program, program);
            return EXIT_NO_DEVICE;
        }
        for (int i = 0; i < n_wanted; ++i) {
            tgl_plugin* p = NULL;
            tgl_status s = tgl_plugin_load(wanted[i], &p);
            if (s != TGL_OK) {
                fprintf(stderr, "%s: plugin %s cannot be loaded (%s): %s\n", program, wanted[i], tgl_status_name(s),
                        tgl_loader_last_error());
                return EXIT_NO_DEVICE;
            }
            apis[i] = tgl_plugin_get_api(p);
            names[i] = tgl_plugin_name(p);
        }
        print_ops_markdown(apis, names, n_wanted);
        return 0;
    }

    gather(&r, wanted, n_wanted, only_device);
    char* error = failure_reason(&r);
    if (json) print_json(&r, with_ops, error);
    else print_text(&r, with_ops);
    fflush(stdout);
    if (!error) return 0;
    fprintf(stderr, "%s: %s\n", program, error);
    free(error);
    return EXIT_NO_DEVICE;
}
