/* store.h - where a file's bytes come from. A store is an opened object of known size read by byte range:
 * a local file (store_file.c: pread, and a memory map for zero-copy views), and whatever else
 * store_list.h registers. Everything above it (HDF5's metadata reads through store_h5.c, the stored chunks
 * of stored.h, the chunk and tile sources) asks a store for bytes and never learns which kind it is.
 *
 * Adding a transport: one store_<name>.c defining `const store_ops h5pack_store_<name>_ops` and one X(name)
 * line in store_list.h; a location "<name>://..." then opens with it (docs/design.md, "A storage kind").
 *
 * Thread rules: read, view and unview are called from any thread at once; open and close from one. */
#ifndef H5PACK_STORE_STORE_H
#define H5PACK_STORE_STORE_H

#include <stddef.h>
#include <stdint.h>

typedef struct store store;

typedef struct store_ops {
    const char *name; /* the location's scheme ("file" also takes plain paths) */
    /* Opens LOCATION (the whole string the user gave). 0, or an h5pack error code with the reason in ERR
     * (without the location: the caller names it). */
    int (*open)(const char *location, store **out, char *err, size_t err_len);
    /* Exactly LEN bytes at OFFSET into DST: 0, or EIO (the transport failed) / ECORRUPT (the object ends
     * before OFFSET + LEN), with the reason in ERR. */
    int (*read)(store *s, uint64_t offset, void *dst, size_t len, char *err, size_t err_len);
    /* Optional (NULL: read). The same for HDF5's metadata: small reads, one after another, near each other;
     * a store that pays a round trip per request may serve them from larger blocks it reads ahead. */
    int (*read_meta)(store *s, uint64_t offset, void *dst, size_t len, char *err, size_t err_len);
    /* Optional (NULL: the object cannot change). 0 while the object is as it was at open, else ECORRUPT
     * (or EIO) with what changed in ERR. */
    int (*check)(store *s, char *err, size_t err_len);
    /* Optional (NULL: no views). A pointer to [OFFSET, OFFSET + LEN) readable without faults that could
     * kill the process (a mapped file's pages brought in), or NULL: read it instead. Valid until close. */
    const uint8_t *(*view)(store *s, uint64_t offset, uint64_t len);
    /* Optional. The view of [OFFSET, OFFSET + LEN) is no longer used: memory it holds may be given back
     * (a later view or a reader still copying from it brings it in again). */
    void (*unview)(store *s, uint64_t offset, uint64_t len);
    /* Optional. The views lent at once may hold at most BYTES of memory (0: no limit); a view past it is
     * refused (NULL), and the caller reads instead. Set once, before views are taken. A store that reads
     * ahead (will_read) holds at most BYTES of fetched-ahead bytes: the reader passes its cache's size. */
    void (*limit_views)(store *s, uint64_t bytes);
    /* Optional (NULL: never asked). How many reads the store wants announced ahead of their use, 0 for
     * none: a store far from its data (remote stores) keeps that many requests in flight, and the reader
     * plans its batches far enough ahead to name them. */
    unsigned (*reads_ahead)(const store *s);
    /* Optional. [OFFSET, OFFSET + LEN) will be read soon, by one read that covers it or reads inside it;
     * calls come in the order the reads are likely to come. Only a hint: the store may fetch the bytes
     * ahead (store_http_ahead.c); the read later still reports every failure. */
    void (*will_read)(store *s, uint64_t offset, uint64_t len);
    /* Optional. Reads will cover large runs of the object: ask for large pages where that helps. */
    void (*advise_large)(store *s);
    /* Optional (NULL: no locking). HDF5's file locking while HDF5 has the object open: a shared lock that
     * fails while a writer holds the object (0, or -1), and its end. */
    int (*lock)(store *s);
    void (*unlock)(store *s);
    void (*close)(store *s);
} store_ops;

/* The part every store shares; each kind's own struct starts with it. */
struct store {
    const store_ops *ops;
    char *location; /* as given: every message about the object names it */
    uint64_t size;  /* bytes of the object */
};

/* Opens LOCATION with the store its scheme names ("NAME://...": store_list.h), a plain path with the file
 * store. 0, or ENOTFOUND / EFORMAT / EIO / EINVAL / ENOMEM with "LOCATION: reason" in ERR. */
int h5pack_store_open(const char *location, store **out, char *err, size_t err_len);

/* Closes S (NULL: nothing). */
void h5pack_store_close(store *s);

/* S->ops->read with WHAT (e.g. "chunk 12") before the reason in ERR; the code as read returns. */
int h5pack_store_read(store *s, uint64_t offset, void *dst, size_t len, const char *what, char *err, size_t err_len);

/* S->ops->check with S's location before the reason in ERR: 0 while S is as it was at open. */
int h5pack_store_check(store *s, char *err, size_t err_len);

/* Views when S offers them, else NULL; unview and advise_large are no-ops then. */
const uint8_t *h5pack_store_view(store *s, uint64_t offset, uint64_t len);
void h5pack_store_unview(store *s, uint64_t offset, uint64_t len);
void h5pack_store_advise_large(store *s);
void h5pack_store_limit_views(store *s, uint64_t bytes);

/* S->ops->reads_ahead (0 without it), and S->ops->will_read where S has it. */
unsigned h5pack_store_reads_ahead(const store *s);
void h5pack_store_will_read(store *s, uint64_t offset, uint64_t len);
int h5pack_store_has_views(const store *s);

/* 1 when S holds an HDF5 file (the signature at 0, 512, 1024, 2048, ...), 0 when not, -1 when S cannot
 * be read. */
int h5pack_store_is_hdf5(store *s);

/* The version of S's HDF5 superblock (0..3: 2 and 3 checksum all metadata), -1 without an HDF5 signature,
 * -2 when S cannot be read. */
int h5pack_store_superblock_version(store *s);

#endif
