#include "image_codecs.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jpeglib.h>
#include <jerror.h>

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf escape;
    /// Set when libjpeg warned that the data is damaged; it would otherwise fill the rest with gray.
    int corrupt_warning;
    char message[JMSG_LENGTH_MAX];
} vp_jpeg_error;

static void vp_jpeg_error_exit(j_common_ptr cinfo) {
    vp_jpeg_error *err = (vp_jpeg_error *)cinfo->err;
    cinfo->err->format_message(cinfo, err->message);
    longjmp(err->escape, 1);
}

static void vp_jpeg_emit_message(j_common_ptr cinfo, int level) {
    vp_jpeg_error *err = (vp_jpeg_error *)cinfo->err;
    if (level >= 0) return; // trace messages
    int code = cinfo->err->msg_code;
    // Premature end of data and lost sync mean the picture is incomplete: not a usable capture.
    if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_MUST_RESYNC) {
        if (!err->corrupt_warning) cinfo->err->format_message(cinfo, err->message);
        err->corrupt_warning = 1;
    }
    cinfo->err->num_warnings++;
}

/// libjpeg calls the progress monitor per scan and per row group: the place to stop a file that costs too much.
typedef struct {
    struct jpeg_progress_mgr base;
    vp_decode_limits limits;
    uint64_t start_ns;
    int exceeded;
    /// Calls since the CPU clock was last read: reading it is a system call (taking the scheduler's lock), so
    /// every 8th call only.
    unsigned calls_unchecked;
} vp_jpeg_progress;

static uint64_t vp_thread_cpu_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void vp_jpeg_progress_monitor(j_common_ptr cinfo) {
    vp_jpeg_progress *progress = (vp_jpeg_progress *)cinfo->progress;
    vp_jpeg_error *err = (vp_jpeg_error *)cinfo->err;
    if (cinfo->is_decompressor && progress->limits.max_scans > 0
        && ((j_decompress_ptr)cinfo)->input_scan_number > (int)progress->limits.max_scans) {
        snprintf(err->message, sizeof(err->message), "the image has more than %u scans", progress->limits.max_scans);
        progress->exceeded = 1;
        longjmp(err->escape, 1);
    }
    if (progress->limits.cpu_budget_ms > 0 && ++progress->calls_unchecked >= 8
        && (progress->calls_unchecked = 0, vp_thread_cpu_ns() - progress->start_ns > (uint64_t)progress->limits.cpu_budget_ms * 1000000u)) {
        snprintf(err->message, sizeof(err->message), "decoding took more than %u ms of CPU", progress->limits.cpu_budget_ms);
        progress->exceeded = 1;
        longjmp(err->escape, 1);
    }
}

static void vp_set_message(char *buffer, size_t size, const char *text) {
    if (size == 0) return;
    snprintf(buffer, size, "%s", text);
}

static inline uint8_t vp_luma(unsigned r, unsigned g, unsigned b) {
    return (uint8_t)((r * 299 + g * 587 + b * 114 + 500) / 1000);
}

vp_decode_status vp_jpeg_decode_gray(const uint8_t *data, size_t size, uint64_t target_pixels,
                                     vp_decode_limits limits, vp_gray_image *out,
                                     char *message, size_t message_size) {
    memset(out, 0, sizeof(*out));
    struct jpeg_decompress_struct cinfo;
    vp_jpeg_error err;
    memset(&err, 0, sizeof(err));
    vp_jpeg_progress progress;
    memset(&progress, 0, sizeof(progress));
    progress.base.progress_monitor = vp_jpeg_progress_monitor;
    progress.limits = limits;
    progress.start_ns = vp_thread_cpu_ns();
    uint64_t max_pixels = limits.max_pixels;
    // Everything freed on the error path must be visible after longjmp: keep it volatile.
    uint8_t *volatile pixels = NULL;
    JSAMPLE *volatile row = NULL;
    volatile vp_decode_status status = VP_DECODE_CORRUPT;

    cinfo.err = jpeg_std_error(&err.base);
    err.base.error_exit = vp_jpeg_error_exit;
    err.base.emit_message = vp_jpeg_emit_message;
    if (setjmp(err.escape)) {
        vp_set_message(message, message_size, err.message);
        if (progress.exceeded) status = VP_DECODE_TOO_COSTLY;
        goto fail;
    }
    jpeg_create_decompress(&cinfo);
    cinfo.progress = &progress.base;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);

    uint64_t declared = (uint64_t)cinfo.image_width * cinfo.image_height;
    if (max_pixels > 0 && declared > max_pixels) {
        snprintf(message, message_size, "image declares %ux%u pixels, more than the limit of %llu",
                 cinfo.image_width, cinfo.image_height, (unsigned long long)max_pixels);
        status = VP_DECODE_TOO_LARGE;
        goto fail;
    }

    unsigned denom = 1;
    if (target_pixels > 0) {
        for (unsigned d = 8; d > 1; d /= 2) {
            uint64_t w = (cinfo.image_width + d - 1) / d, h = (cinfo.image_height + d - 1) / d;
            if (w * h >= target_pixels) { denom = d; break; }
        }
    }
    cinfo.scale_num = 1;
    cinfo.scale_denom = denom;

    int cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_GRAYSCALE;
    jpeg_start_decompress(&cinfo);

    size_t width = cinfo.output_width, height = cinfo.output_height;
    pixels = malloc(width * height ? width * height : 1);
    if (cmyk) row = malloc(width * 4);
    if (!pixels || (cmyk && !row)) {
        vp_set_message(message, message_size, "out of memory");
        status = VP_DECODE_OUT_OF_MEMORY;
        goto fail;
    }
    // Adobe's CMYK JPEGs store inverted ink values (255 = no ink).
    int inverted = cinfo.saw_Adobe_marker;
    while (cinfo.output_scanline < cinfo.output_height) {
        uint8_t *dest = pixels + (size_t)cinfo.output_scanline * width;
        if (!cmyk) {
            JSAMPROW rows[1] = { dest };
            jpeg_read_scanlines(&cinfo, rows, 1);
            continue;
        }
        JSAMPROW rows[1] = { row };
        jpeg_read_scanlines(&cinfo, rows, 1);
        for (size_t x = 0; x < width; x++) {
            unsigned c = row[4 * x], m = row[4 * x + 1], y = row[4 * x + 2], k = row[4 * x + 3];
            if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
            dest[x] = vp_luma((c * k + 127) / 255, (m * k + 127) / 255, (y * k + 127) / 255);
        }
    }
    if (err.corrupt_warning) {
        vp_set_message(message, message_size, err.message);
        goto fail;
    }
    jpeg_finish_decompress(&cinfo);
    if (err.corrupt_warning) {
        vp_set_message(message, message_size, err.message);
        goto fail;
    }
    jpeg_destroy_decompress(&cinfo);
    free(row);
    out->pixels = pixels;
    out->width = (uint32_t)width;
    out->height = (uint32_t)height;
    out->source_width = cinfo.image_width;
    out->source_height = cinfo.image_height;
    return VP_DECODE_OK;

fail:
    jpeg_destroy_decompress(&cinfo);
    free(pixels);
    free(row);
    return status;
}

void vp_gray_image_free(vp_gray_image *image) {
    free(image->pixels);
    image->pixels = NULL;
}
