#include "image_codecs.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
    char message[256];
    uint32_t cpu_budget_ms;
    uint64_t start_ns;
    int exceeded;
    /// Rows finished since the CPU clock was last read: reading it is a system call, so every 16th row only.
    uint32_t rows_unchecked;
} vp_png_source;

static void vp_png_read(png_structp png, png_bytep dest, png_size_t length) {
    vp_png_source *source = png_get_io_ptr(png);
    if (length > source->size - source->offset) {
        png_error(png, "premature end of PNG data");
    }
    memcpy(dest, source->data + source->offset, length);
    source->offset += length;
}

static void vp_png_error(png_structp png, png_const_charp text) {
    vp_png_source *source = png_get_error_ptr(png);
    snprintf(source->message, sizeof(source->message), "%s", text);
    png_longjmp(png, 1);
}

static void vp_png_warning(png_structp png, png_const_charp text) {
    (void)png; (void)text; // ancillary-chunk problems (bad sRGB, iCCP...) do not spoil the pixels
}

static uint64_t vp_png_thread_cpu_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/// Called by libpng after each row (of each interlace pass): stops a decode that has spent its CPU budget.
static void vp_png_row_done(png_structp png, png_uint_32 row, int pass) {
    (void)row; (void)pass;
    vp_png_source *source = (vp_png_source *)png_get_io_ptr(png);
    if (++source->rows_unchecked < 16) return;
    source->rows_unchecked = 0;
    if (source->cpu_budget_ms > 0 && vp_png_thread_cpu_ns() - source->start_ns > (uint64_t)source->cpu_budget_ms * 1000000u) {
        snprintf(source->message, sizeof(source->message), "decoding took more than %u ms of CPU", source->cpu_budget_ms);
        source->exceeded = 1;
        png_longjmp(png, 1);
    }
}

vp_decode_status vp_png_decode_gray(const uint8_t *data, size_t size, vp_decode_limits limits,
                                    vp_gray_image *out, char *message, size_t message_size) {
    uint64_t max_pixels = limits.max_pixels;
    memset(out, 0, sizeof(*out));
    if (size < 8 || png_sig_cmp(data, 0, 8) != 0) {
        snprintf(message, message_size, "not a PNG file");
        return VP_DECODE_CORRUPT;
    }
    vp_png_source source = { data, size, 0, "", limits.cpu_budget_ms, vp_png_thread_cpu_ns(), 0, 0 };
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, vp_png_error, vp_png_warning);
    if (!png) {
        snprintf(message, message_size, "out of memory");
        return VP_DECODE_OUT_OF_MEMORY;
    }
    png_infop info = png_create_info_struct(png);
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    volatile vp_decode_status status = VP_DECODE_CORRUPT;
    if (!info) {
        snprintf(message, message_size, "out of memory");
        png_destroy_read_struct(&png, NULL, NULL);
        return VP_DECODE_OUT_OF_MEMORY;
    }
    if (setjmp(png_jmpbuf(png))) {
        snprintf(message, message_size, "%s", source.message);
        if (source.exceeded) status = VP_DECODE_TOO_COSTLY;
        goto fail;
    }
    png_set_read_fn(png, &source, vp_png_read);
    png_set_read_status_fn(png, vp_png_row_done);
    png_read_info(png, info);

    png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
    if (max_pixels > 0 && (uint64_t)width * height > max_pixels) {
        snprintf(message, message_size, "image declares %ux%u pixels, more than the limit of %llu",
                 width, height, (unsigned long long)max_pixels);
        status = VP_DECODE_TOO_LARGE;
        goto fail;
    }
    int color_type = png_get_color_type(png, info);
    png_set_expand(png);            // palette -> RGB, gray < 8 bits -> 8 bits, tRNS -> alpha
    png_set_strip_16(png);          // keep the high byte, as every viewer does
    if (color_type & PNG_COLOR_MASK_ALPHA || png_get_valid(png, info, PNG_INFO_tRNS)) {
        png_color_16 white = { 0, 255, 255, 255, 255 };
        png_set_background(png, &white, PNG_BACKGROUND_GAMMA_SCREEN, 0, 1.0);
    }
    if (color_type & PNG_COLOR_MASK_COLOR || color_type == PNG_COLOR_TYPE_PALETTE) {
        // Rec. 601 luma, the weights libjpeg uses, so that both formats agree.
        png_set_rgb_to_gray_fixed(png, 1, 29900, 58700);
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != width || png_get_channels(png, info) != 1) {
        snprintf(message, message_size, "unsupported PNG layout");
        goto fail;
    }
    pixels = malloc((size_t)width * height ? (size_t)width * height : 1);
    rows = malloc(sizeof(png_bytep) * (height ? height : 1));
    if (!pixels || !rows) {
        snprintf(message, message_size, "out of memory");
        status = VP_DECODE_OUT_OF_MEMORY;
        goto fail;
    }
    for (png_uint_32 y = 0; y < height; y++) rows[y] = pixels + (size_t)y * width;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    out->pixels = pixels;
    out->width = out->source_width = width;
    out->height = out->source_height = height;
    return VP_DECODE_OK;

fail:
    png_destroy_read_struct(&png, &info, NULL);
    free(pixels);
    free(rows);
    return status;
}
