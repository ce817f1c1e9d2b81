/*
 * Includes the template WB_TEMPLATE (a quoted file name) once per lane
 * width, with WB_W set to 8, 16, 32 and 64 in turn. Used by lanes.c and the
 * kernels' files (lanes_kernels.h).
 */
#define WB_W 8
#include WB_TEMPLATE
#undef WB_W
#define WB_W 16
#include WB_TEMPLATE
#undef WB_W
#define WB_W 32
#include WB_TEMPLATE
#undef WB_W
#define WB_W 64
#include WB_TEMPLATE
#undef WB_W
