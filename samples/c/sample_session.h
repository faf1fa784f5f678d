/*
 * The samples' shared session code (C99): load a plugin through the loader, open device 0, keep
 * the buffers allocated, report every failure with the plugin's own message, and clean up in one
 * place. Each sample's run function declares `session ss;`, CHECKs its calls (a failure jumps to
 * its `cleanup:` label) and ends with `return session_end(&ss, rc);`.
 */
#ifndef TGL_SAMPLE_SESSION_H
#define TGL_SAMPLE_SESSION_H

#include <tensorgl/loader.h>
#include <tensorgl/plugin_api.h>

#include <stdio.h>
#include <string.h>

enum { SESSION_MAX_BUFFERS = 32 };

/* State of one run on one plugin, so that cleanup is in one place. */
typedef struct session {
    const char* label; /* printed before every message, e.g. "test" or "reference" */
    tgl_plugin* plugin;
    const tgl_plugin_api* api;
    tgl_device device;
    tgl_buffer buffers[SESSION_MAX_BUFFERS];
    int n_buffers;
} session;

static void report_plugin_error(const session* ss, const char* what, tgl_status st) {
    fprintf(stderr, "[%s] %s failed: %s (%d): %s\n", ss->label, what, tgl_status_name(st), (int)st,
            ss->api->last_error_message());
}

/* Checks a plugin call of the session `ss`; on failure reports it and jumps to `cleanup`. */
#define CHECK(call)                                           \
    do {                                                      \
        tgl_status st_ = (call);                              \
        if (st_ != TGL_OK) {                                  \
            report_plugin_error(&ss, #call, st_);             \
            goto cleanup;                                     \
        }                                                     \
    } while (0)

/* Starts a session on `plugin_name` (a name or a path); no device is open yet. 0 on success, 1 on
 * failure (reported; nothing to clean up). */
static int session_begin(session* ss, const char* label, const char* plugin_name) {
    tgl_status st;
    memset(ss, 0, sizeof *ss);
    ss->label = label;
    st = tgl_plugin_load(plugin_name, &ss->plugin);
    if (st != TGL_OK) {
        fprintf(stderr, "[%s] tgl_plugin_load(\"%s\") failed: %s (%d): %s\n", label, plugin_name,
                tgl_status_name(st), (int)st, tgl_loader_last_error());
        return 1;
    }
    ss->api = tgl_plugin_get_api(ss->plugin);
    if (ss->api == NULL) {
        fprintf(stderr, "[%s] tgl_plugin_get_api returned NULL for a loaded plugin\n", label);
        tgl_plugin_release(ss->plugin);
        return 1;
    }
    return 0;
}

/* Allocates a buffer of `bytes` on the session's device, freed by session_end; 0 on failure
 * (already reported). */
static tgl_buffer session_alloc(session* ss, uint64_t bytes) {
    tgl_buffer b = 0;
    tgl_status st;
    if (ss->n_buffers == SESSION_MAX_BUFFERS) {
        fprintf(stderr, "[%s] more than %d buffers in one session\n", ss->label, SESSION_MAX_BUFFERS);
        return 0;
    }
    st = ss->api->buffer_alloc(ss->device, bytes, &b);
    if (st != TGL_OK) {
        report_plugin_error(ss, "buffer_alloc", st);
        return 0;
    }
    ss->buffers[ss->n_buffers++] = b;
    return b;
}

/* Frees the session's buffers, closes its device and releases the plugin. Returns rc, or 1 if any
 * of that failed (reported). */
static int session_end(session* ss, int rc) {
    tgl_status st;
    int b;
    if (ss->device != 0) {
        for (b = 0; b < ss->n_buffers; ++b) {
            st = ss->api->buffer_free(ss->device, ss->buffers[b]);
            if (st != TGL_OK) {
                report_plugin_error(ss, "buffer_free", st);
                rc = 1;
            }
        }
        st = ss->api->device_close(ss->device);
        if (st != TGL_OK) {
            report_plugin_error(ss, "device_close", st);
            rc = 1;
        }
    }
    tgl_plugin_release(ss->plugin);
    return rc;
}

#endif /* TGL_SAMPLE_SESSION_H */
