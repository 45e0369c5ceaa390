#include "image_codecs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <webp/decode.h>

static uint64_t vp_webp_thread_cpu_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/// libwebp's Y plane is BT.601 "studio swing" (16-235): stretched back to 0-255 it is the luma the JPEG and PNG
/// paths give, with alpha composited over white as for PNG.
static uint8_t vp_webp_gray(uint8_t y, uint8_t alpha) {
    int gray = ((int)y - 16) * 255;
    gray = gray <= 0 ? 0 : (gray + 109) / 219;
    if (gray > 255) gray = 255;
    return (uint8_t)((gray * alpha + 255 * (255 - alpha) + 127) / 255);
}

vp_decode_status vp_webp_decode_gray(const uint8_t *data, size_t size, uint64_t target_pixels,
                                     vp_decode_limits limits, vp_gray_image *out,
                                     char *message, size_t message_size) {
    memset(out, 0, sizeof(*out));
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) {
        snprintf(message, message_size, "libwebp version mismatch");
        return VP_DECODE_CORRUPT;
    }
    if (WebPGetFeatures(data, size, &config.input) != VP8_STATUS_OK) {
        snprintf(message, message_size, "not a readable WebP header");
        return VP_DECODE_CORRUPT;
    }
    uint32_t width = (uint32_t)config.input.width, height = (uint32_t)config.input.height;
    if (config.input.has_animation) {
        snprintf(message, message_size, "animated WebP is not a document image");
        return VP_DECODE_CORRUPT;
    }
    if (limits.max_pixels > 0 && (uint64_t)width * height > limits.max_pixels) {
        snprintf(message, message_size, "image declares %ux%u pixels, more than the limit of %llu",
                 width, height, (unsigned long long)limits.max_pixels);
        return VP_DECODE_TOO_LARGE;
    }
    uint32_t out_width = width, out_height = height;
    if (target_pixels > 0 && (uint64_t)width * height > target_pixels) {
        // The smallest size that keeps at least target_pixels, as the JPEG path's DCT scaling does.
        double scale = sqrt((double)target_pixels / ((double)width * height));
        out_width = (uint32_t)ceil(width * scale);
        out_height = (uint32_t)ceil(height * scale);
        if (out_width < 1) out_width = 1;
        if (out_height < 1) out_height = 1;
        config.options.use_scaling = 1;
        config.options.scaled_width = (int)out_width;
        config.options.scaled_height = (int)out_height;
    }
    config.output.colorspace = MODE_YUVA;

    // Fed in slices, so the CPU budget is checked as the decode goes (one call would decode it whole).
    WebPIDecoder *decoder = WebPIDecode(NULL, 0, &config);
    if (!decoder) {
        snprintf(message, message_size, "out of memory");
        return VP_DECODE_OUT_OF_MEMORY;
    }
    const uint64_t start = vp_webp_thread_cpu_ns();
    const size_t slice = 64 * 1024;
    VP8StatusCode status = VP8_STATUS_SUSPENDED;
    for (size_t offset = 0; offset < size && status == VP8_STATUS_SUSPENDED; offset += slice) {
        size_t length = size - offset < slice ? size - offset : slice;
        status = WebPIAppend(decoder, data + offset, length);
        if (limits.cpu_budget_ms > 0 && vp_webp_thread_cpu_ns() - start > (uint64_t)limits.cpu_budget_ms * 1000000u) {
            WebPIDelete(decoder);
            WebPFreeDecBuffer(&config.output);
            snprintf(message, message_size, "decoding took more than %u ms of CPU", limits.cpu_budget_ms);
            return VP_DECODE_TOO_COSTLY;
        }
    }
    if (status != VP8_STATUS_OK) {
        WebPIDelete(decoder);
        WebPFreeDecBuffer(&config.output);
        snprintf(message, message_size, status == VP8_STATUS_SUSPENDED ? "premature end of WebP data"
                 : status == VP8_STATUS_OUT_OF_MEMORY ? "out of memory" : "corrupt WebP data");
        return status == VP8_STATUS_OUT_OF_MEMORY ? VP_DECODE_OUT_OF_MEMORY : VP_DECODE_CORRUPT;
    }
    const WebPYUVABuffer *planes = &config.output.u.YUVA;
    uint8_t *pixels = malloc((size_t)out_width * out_height ? (size_t)out_width * out_height : 1);
    if (!pixels) {
        WebPIDelete(decoder);
        WebPFreeDecBuffer(&config.output);
        snprintf(message, message_size, "out of memory");
        return VP_DECODE_OUT_OF_MEMORY;
    }
    for (uint32_t row = 0; row < out_height; row++) {
        const uint8_t *y = planes->y + (size_t)row * planes->y_stride;
        const uint8_t *a = planes->a ? planes->a + (size_t)row * planes->a_stride : NULL;
        uint8_t *target = pixels + (size_t)row * out_width;
        for (uint32_t column = 0; column < out_width; column++) {
            target[column] = vp_webp_gray(y[column], a ? a[column] : 255);
        }
    }
    WebPIDelete(decoder);
    WebPFreeDecBuffer(&config.output);
    out->pixels = pixels;
    out->width = out_width;
    out->height = out_height;
    out->source_width = width;
    out->source_height = height;
    return VP_DECODE_OK;
}
