/* h5masks.c - the masks dataset's description for h5pack-stats info (masks_info.h). */
#include <hdf5.h>
#include <string.h>

#include "format.h"
#include "h5glue.h"
#include "masks_info.h"

/* The values attribute of D (at most H5PACK_MASKS_INFO_VALUES of them) into OUT. */
static void read_values(hid_t d, h5pack_masks_info *out)
{
    int64_t all[256];
    hid_t a = H5Aexists(d, H5PACK_ATTR_MASK_VALUES) > 0 ? H5Aopen(d, H5PACK_ATTR_MASK_VALUES, H5P_DEFAULT) : -1;
    hid_t space = a >= 0 ? H5Aget_space(a) : -1;
    hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : 0;
    if (n > 0 && n <= 256 && H5Aread(a, H5T_NATIVE_INT64, all) >= 0) {
        out->n_listed = n < H5PACK_MASKS_INFO_VALUES ? (int)n : H5PACK_MASKS_INFO_VALUES;
        memcpy(out->values, all, (size_t)out->n_listed * sizeof *all);
    }
    if (space >= 0)
        H5Sclose(space);
    if (a >= 0)
        H5Aclose(a);
}

static int describe(hid_t d, h5pack_masks_info *out)
{
    hid_t type = H5Dget_type(d), space = H5Dget_space(d);
    hsize_t dims[3] = {0, 0, 0};
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1, rc = -1;
    if (type >= 0 && rank >= 1 && rank <= 3 && H5Sget_simple_extent_dims(space, dims, NULL) >= 0) {
        h5pack_h5_type_name(type, out->dtype, sizeof out->dtype);
        out->rank = rank;
        for (int i = 0; i < rank; i++)
            out->dims[i] = dims[i];
        char why[64];
        if (h5pack_h5_read_int_attr(d, H5PACK_ATTR_MASK_VALUE_COUNT, &out->value_count, why, sizeof why) != 1)
            out->value_count = -1;
        read_values(d, out);
        rc = 0;
    }
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    return rc;
}

int h5pack_masks_info_read(const char *path, h5pack_masks_info *out)
{
    h5pack_h5_quiet quiet;
    memset(out, 0, sizeof *out);
    out->value_count = -1;
    h5pack_h5_quiet_begin(&quiet);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = -1;
    int rc = f >= 0 ? 0 : -1;
    if (f >= 0 && h5pack_h5_path_exists(f, H5PACK_DS_MASKS) && (d = H5Dopen2(f, H5PACK_DS_MASKS, H5P_DEFAULT)) >= 0) {
        out->present = 1;
        rc = describe(d, out);
        H5Dclose(d);
    }
    if (f >= 0)
        H5Fclose(f);
    h5pack_h5_quiet_end(&quiet);
    return rc;
}
