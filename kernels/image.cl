/* image.cl: the mask of a region of an OpenCL image (image2d_t), one byte
 * per pixel, for nonzero over images. Kept apart from mask.cl: only devices
 * with image support build it.
 *
 * A channel's value is read by the read_image* call its channel type
 * allows (IMAGE_READ: 0 read_imageui, 1 read_imagei, 2 read_imagef) and
 * tested as CLNZ_DTYPE's bit pattern: u32, i32, or f32. Normalized types are
 * read as floats and scaled back to their stored integers (UNORM_SCALE),
 * so that predicates compare the values the image holds. */
#include "kname.h"
#include "element.cl"

#ifndef IMAGE_READ
#define IMAGE_READ 0
#endif
#ifndef UNORM_SCALE
#define UNORM_SCALE 0
#endif

__constant sampler_t exact = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;

/* One work-item per pixel of the width x height region at (x0, y0); the
 * mask is the region's pixels in C order (row after row). */
__kernel void KERNEL(image_mask)(__read_only image2d_t img, int x0, int y0, int width, int height,
                         int channels, ekey_t lo, ekey_t hi, uint invert, int all,
                         __global uchar *mask)
{
    ulong p = get_global_id(0);
    if (p >= (ulong)width * (ulong)height)
        return;
    int x = (int)(p % (ulong)width), y = (int)(p / (ulong)width);
    int2 at = (int2)(x0 + x, y0 + y);
#if IMAGE_READ == 0
    uint4 v = read_imageui(img, exact, at);
#elif IMAGE_READ == 1
    uint4 v = as_uint4(read_imagei(img, exact, at));
#elif UNORM_SCALE
    uint4 v = convert_uint4_sat_rte(read_imagef(img, exact, at) * (float)UNORM_SCALE);
#else
    uint4 v = as_uint4(read_imagef(img, exact, at));
#endif
    uint c[4] = {v.x, v.y, v.z, v.w};
    uint any = 0, every = 1;
    for (int k = 0; k < channels; ++k) {
        uint s = elem_selected(c[k], lo, hi, invert);
        any |= s;
        every &= s;
    }
    mask[p] = (uchar)(all ? every : any);
}
