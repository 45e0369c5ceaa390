#pragma once
#include <stddef.h>
#include <stdint.h>

/// Outcome of a decode; anything but VP_DECODE_OK leaves `pixels` NULL and a message in the caller's buffer.
typedef enum {
    VP_DECODE_OK = 0,
    VP_DECODE_CORRUPT = 1,      ///< the library reported an error, or the data ended early
    VP_DECODE_TOO_LARGE = 2,    ///< the header declares more pixels than the caller allows
    VP_DECODE_OUT_OF_MEMORY = 3,
    VP_DECODE_TOO_COSTLY = 4,   ///< more JPEG scans than allowed, or the CPU budget spent
} vp_decode_status;

/// What one decode may cost. Zero turns a limit off.
typedef struct {
    /// Images declaring more pixels are refused before any allocation (decompression bombs).
    uint64_t max_pixels;
    /// Progressive JPEGs with more scans are refused (each scan is a pass over the whole image).
    uint32_t max_scans;
    /// CPU time (of the decoding thread) one decode may use, in milliseconds.
    uint32_t cpu_budget_ms;
} vp_decode_limits;

/// An 8-bit grayscale image, rows packed (stride == width). `pixels` is malloc'd: free with vp_gray_image_free.
typedef struct {
    uint8_t *pixels;
    uint32_t width;
    uint32_t height;
    /// The size the file declares, before any DCT scaling.
    uint32_t source_width;
    uint32_t source_height;
} vp_gray_image;

/// Decodes a JPEG to grayscale. When `target_pixels` > 0, libjpeg's DCT scaling (1/2, 1/4, 1/8) picks the
/// smallest output that still has at least `target_pixels` pixels.
vp_decode_status vp_jpeg_decode_gray(const uint8_t *data, size_t size, uint64_t target_pixels,
                                     vp_decode_limits limits, vp_gray_image *out,
                                     char *message, size_t message_size);

/// Decodes a PNG of any colour type and bit depth to grayscale; alpha is composited over white.
vp_decode_status vp_png_decode_gray(const uint8_t *data, size_t size, vp_decode_limits limits,
                                    vp_gray_image *out, char *message, size_t message_size);

/// Decodes a still WebP (lossy or lossless) to grayscale; alpha is composited over white. When `target_pixels` > 0,
/// libwebp scales while decoding to the smallest size that still has at least `target_pixels` pixels.
vp_decode_status vp_webp_decode_gray(const uint8_t *data, size_t size, uint64_t target_pixels,
                                     vp_decode_limits limits, vp_gray_image *out,
                                     char *message, size_t message_size);

void vp_gray_image_free(vp_gray_image *image);

/// Serves every allocation of at least `mmap_threshold` bytes with a mapping of its own, returned to the system when
/// freed (glibc's M_MMAP_THRESHOLD, fixed), and keeps up to `top_pad` bytes of freed heap at the top of each arena
/// instead of returning it (M_TOP_PAD). Returns 1 when applied, 0 where the C library has no such settings.
int vp_tune_allocator(size_t mmap_threshold, size_t top_pad);
