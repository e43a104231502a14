/* h5error.c - HDF5's error stacks turned into one line of text for our messages (see h5glue.h). */
#include <stdio.h>
#include <string.h>

#include "h5glue.h"

void h5pack_h5_quiet_begin(h5pack_h5_quiet *q)
{
    q->func = NULL;
    q->data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void h5pack_h5_quiet_end(const h5pack_h5_quiet *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

/* HDF5's sec2 driver puts the system's reason deep inside a long text ("file write failed: time = ...,
 * filename = '...', ..., errno = 28, error message = 'No space left on device', buf = ..."): keep the
 * first words and the system's reason, which would otherwise be cut off. */
static void summarise_desc(const char *desc, char *out, size_t len)
{
    static const char key[] = "error message = '";
    const char *head_end = strstr(desc, ": time = "), *msg = strstr(desc, key);
    if (!head_end || !msg) {
        snprintf(out, len, "%s", desc);
        return;
    }
    msg += sizeof key - 1;
    const char *msg_end = strchr(msg, '\'');
    int msg_len = msg_end ? (int)(msg_end - msg) : (int)strlen(msg);
    snprintf(out, len, "%.*s: %.*s", (int)(head_end - desc), desc, msg_len, msg);
}

typedef struct error_walk {
    char inner[256], outer[256];
    int io;
} error_walk;

/* Upward walk: n == 0 is the innermost error (where it was detected), the last one the API call. */
static herr_t collect_error(unsigned n, const H5E_error2_t *e, void *data)
{
    error_walk *w = data;
    const char *desc = e->desc ? e->desc : "";
    if (n == 0) {
        summarise_desc(desc, w->inner, sizeof w->inner);
        w->io = e->maj_num == H5E_IO; /* a failed system read, not a checksum or filter failure */
    }
    summarise_desc(desc, w->outer, sizeof w->outer);
    return 0;
}

static void walk_errors(hid_t stack, error_walk *w)
{
    memset(w, 0, sizeof *w);
    H5Ewalk2(stack, H5E_WALK_UPWARD, collect_error, w);
}

static void walk_text(const error_walk *w, char *buf, size_t len)
{
    if (!w->inner[0] && !w->outer[0])
        snprintf(buf, len, "no detail from HDF5");
    else if (!w->outer[0] || !strcmp(w->inner, w->outer))
        snprintf(buf, len, "%s", w->inner);
    else
        snprintf(buf, len, "%s: %s", w->outer, w->inner);
}

void h5pack_h5_stack_text(hid_t stack, char *buf, size_t len)
{
    error_walk w;
    walk_errors(stack, &w);
    walk_text(&w, buf, len);
}

void h5pack_h5_error_text(char *buf, size_t len)
{
    h5pack_h5_stack_text(H5E_DEFAULT, buf, len);
}

int h5pack_h5_error_is_io(void)
{
    error_walk w;
    walk_errors(H5E_DEFAULT, &w);
    return w.io;
}

/* HDF5 calls this with the stack of a failed API call, before anything can clear it. */
static herr_t capture_handler(hid_t stack, void *data)
{
    h5pack_h5_capture *c = data;
    h5pack_h5_stack_text(stack, c->text, sizeof c->text);
    return 0;
}

void h5pack_h5_capture_install(h5pack_h5_capture *c)
{
    c->text[0] = '\0';
    H5Eset_auto2(H5E_DEFAULT, capture_handler, c);
}

void h5pack_h5_capture_take(h5pack_h5_capture *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s", c->text[0] ? c->text : "no detail from HDF5");
    c->text[0] = '\0';
}
