/* test_env.c - the one rule for on/off environment switches (env.h): on when set, not empty and not
 * "0"; H5PACK_NO_LOCATE=0 used to switch locating off because only its presence was checked. */
#include <stdlib.h>

#include "check.h"
#include "env.h"

int main(void)
{
    const char *name = "H5PACK_TEST_SWITCH";
    unsetenv(name);
    CHECK_EQ_INT(h5pack_env_flag(name), 0);
    const char *off[] = {"", "0"}, *on[] = {"1", "yes", "00", "true"};
    for (int i = 0; i < 2; i++) {
        setenv(name, off[i], 1);
        CHECK_MSG(h5pack_env_flag(name) == 0, "'%s' must be off", off[i]);
    }
    for (int i = 0; i < 4; i++) {
        setenv(name, on[i], 1);
        CHECK_MSG(h5pack_env_flag(name) == 1, "'%s' must be on", on[i]);
    }
    printf("common_env: switches follow one rule\n");
    return 0;
}
