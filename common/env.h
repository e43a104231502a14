/* env.h - the one rule for h5pack's on/off environment switches (H5PACK_NO_MMAP, H5PACK_NO_LOCATE,
 * H5PACK_TWO_PASS, ...): on when set to anything but "" or "0"; so VAR=0 and an empty VAR both mean off,
 * as users of such switches expect. */
#ifndef H5PACK_COMMON_ENV_H
#define H5PACK_COMMON_ENV_H

/* 1 when the environment variable NAME is set, not empty and not "0". */
int h5pack_env_flag(const char *name);

#endif
