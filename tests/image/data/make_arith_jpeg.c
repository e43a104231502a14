/* make_arith_jpeg.c - how data/arith_48x40.jpg was made (not built: needs libjpeg's jpeglib.h, which
 * the TurboJPEG package does not ship; TurboJPEG 2.1 cannot write arithmetic coding).
 *   cc make_arith_jpeg.c -ljpeg -o make_arith_jpeg && ./make_arith_jpeg arith_48x40.jpg */
#include <stdio.h>
#include <jpeglib.h>

int main(int argc, char **argv)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    unsigned char row[48 * 3];
    FILE *f = argc > 1 ? fopen(argv[1], "wb") : NULL;
    if (!f)
        return 1;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = 48;
    c.image_height = 40;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    c.arith_code = TRUE;
    jpeg_set_quality(&c, 90, TRUE);
    jpeg_start_compress(&c, TRUE);
    for (int y = 0; y < 40; y++) {
        for (int x = 0; x < 48; x++) {
            row[3 * x] = (unsigned char)(x * 5);
            row[3 * x + 1] = (unsigned char)(y * 6);
            row[3 * x + 2] = ((x / 8 + y / 8) & 1) ? 200 : 30;
        }
        JSAMPROW r = row;
        jpeg_write_scanlines(&c, &r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return fclose(f) != 0;
}
