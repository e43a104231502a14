/* scan.h - finding the images of a source folder, the way torchvision's ImageFolder does.
 *
 * ImageFolder mode (SRC_DIR holds at least one subfolder): classes are the subfolders sorted by name in
 * byte order; each class folder is walked recursively (symbolic links followed, loops detected) and its
 * files ordered like sorted(os.walk(...)) then sorted(file names): by directory path, then by name.
 * Flat mode (no subfolder): the files of SRC_DIR itself, sorted, without labels.
 * Entries whose name starts with '.' are ignored (.DS_Store, .ipynb_checkpoints, our own temp files).
 * Files with an extension other than .jpg/.jpeg/.png (any case), special files, unreadable files,
 * broken links, link loops and folders named like an image are recorded as skipped with the reason. */
#ifndef H5PACK_SCAN_H
#define H5PACK_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "skips.h"

typedef struct scan_entry {
    char *relpath;  /* path relative to SRC_DIR, bytes as on disk */
    char *name;     /* the same, valid UTF-8 (invalid bytes escaped as \xNN): what the file records */
    uint32_t label; /* class index (0 in flat mode) */
    size_t label_row; /* --labels: the CSV row of this image (set by label_match, not by the scan) */
    char *mask;       /* --masks: its mask's path relative to MASK_DIR (set by mask_match; NULL without) */
} scan_entry;

typedef struct scan_result {
    int has_classes;     /* ImageFolder mode */
    char **classes;      /* class names (UTF-8, escaped like names), sorted */
    size_t n_classes;
    scan_entry *entries; /* in sorted order: class by class */
    size_t n_entries;
    skip_list skipped;   /* in the order met */
    char **warnings;     /* e.g. empty class folders, escaped names */
    size_t n_warnings;
} scan_result;

/* Scans SRC_DIR. Returns 0, or -1 with a message in ERR when SRC_DIR cannot be listed. */
int scan_source(const char *src_dir, scan_result *out, char *err, size_t err_len);

void scan_free(scan_result *r);

/* True when NAME ends in .jpg, .jpeg or .png, any case. */
int scan_has_image_extension(const char *name);

/* Copies NAME with every byte that is not part of valid UTF-8 written as "\xNN" (malloc'ed). Sets
 * *CHANGED when something was escaped. */
char *utf8_escape(const char *name, int *changed);

#endif
