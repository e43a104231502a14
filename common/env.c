/* env.c - see env.h. */
#include "env.h"

#include <stdlib.h>
#include <string.h>

int h5pack_env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] && strcmp(v, "0") != 0;
}
