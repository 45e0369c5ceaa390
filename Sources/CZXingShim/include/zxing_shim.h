#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Formats this shim reads; a bit set, matching the Swift side's BarcodeFormat.
enum {
    VP_ZX_QR_CODE = 1 << 0,
    VP_ZX_PDF417 = 1 << 1,
    VP_ZX_CODE_128 = 1 << 2,
    VP_ZX_CODE_39 = 1 << 3,
    VP_ZX_EAN_13 = 1 << 4,
    VP_ZX_DATA_MATRIX = 1 << 5,
};

/// How hard zxing-cpp looks: each flag is one of its ReaderOptions.
typedef struct {
    int formats;          ///< VP_ZX_* bits
    int try_harder;       ///< denser scanning and more candidates
    int try_rotate;       ///< 90, 180 and 270 degrees as well
    int try_invert;       ///< light codes on a dark background as well
    int try_downscale;    ///< smaller copies of large images as well
    int return_errors;    ///< also report symbols found but not decoded (valid == 0, no payload)
} vp_zx_options;

typedef struct {
    int format;        ///< one VP_ZX_* bit
    int valid;         ///< 0: a symbol was located but could not be decoded (only with return_errors)
    int has_eci;       ///< the symbol declares its character set(s) with ECI designators
    uint8_t *bytes;    ///< the decoded payload, not NUL-terminated
    size_t length;
    char *text;        ///< the payload as zxing-cpp reads it (ECI, QR Kanji/Hanzi modes, its charset guess), UTF-8
    size_t text_length;
    int corners[8];    ///< x, y of the symbol's corners: top-left, top-right, bottom-right, bottom-left
} vp_zx_barcode;

typedef struct {
    vp_zx_barcode *items;
    size_t count;
} vp_zx_results;

/// Reads every barcode of `options->formats` in an 8-bit grayscale image. Never throws; returns 0 on success
/// (possibly with no results), -1 when zxing-cpp failed internally (message filled).
int vp_zx_read(const uint8_t *pixels, int width, int height, const vp_zx_options *options,
               vp_zx_results *out, char *message, size_t message_size);

void vp_zx_results_free(vp_zx_results *results);

#ifdef __cplusplus
}
#endif
