#include "zxing_shim.h"

#include <ZXing/ReadBarcode.h>
#include <ZXing/Version.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#if ZXING_VERSION_MAJOR < 3
#error "verify-pipeline needs zxing-cpp 3 or newer: run scripts/install-deps (it builds zxing-cpp 3.1.1 into /usr/local)"
#endif

using namespace ZXing;

// Each entry is a symbology: zxing-cpp reports variants (QR Model 1, Micro QR, compact PDF417) under it.
static const struct { int bit; BarcodeFormat format; } kFormats[] = {
    {VP_ZX_QR_CODE, BarcodeFormat::QRCode},   {VP_ZX_PDF417, BarcodeFormat::PDF417},
    {VP_ZX_CODE_128, BarcodeFormat::Code128}, {VP_ZX_CODE_39, BarcodeFormat::Code39},
    {VP_ZX_EAN_13, BarcodeFormat::EAN13},     {VP_ZX_DATA_MATRIX, BarcodeFormat::DataMatrix},
};

static int formatBit(const Barcode &barcode) {
    for (auto &entry : kFormats)
        if (barcode.format() == entry.format || barcode.symbology() == entry.format) return entry.bit;
    return 0;
}

static void *copyOut(const void *data, size_t length) {
    void *copy = malloc(length ? length : 1);
    if (!copy) throw std::bad_alloc();
    if (length) memcpy(copy, data, length);
    return copy;
}

extern "C" int vp_zx_read(const uint8_t *pixels, int width, int height, const vp_zx_options *options,
                          vp_zx_results *out, char *message, size_t message_size) {
    out->items = nullptr;
    out->count = 0;
    try {
        std::vector<BarcodeFormat> wanted;
        for (auto &entry : kFormats) if (options->formats & entry.bit) wanted.push_back(entry.format);
        ReaderOptions reader;
        reader.setFormats(BarcodeFormats(std::move(wanted)))
            .setTryHarder(options->try_harder != 0)
            .setTryRotate(options->try_rotate != 0)
            .setTryInvert(options->try_invert != 0)
            .setTryDownscale(options->try_downscale != 0)
            .setReturnErrors(options->return_errors != 0)
            .setTextMode(TextMode::Plain);
        ImageView image(pixels, width, height, ImageFormat::Lum);
        Barcodes results = ReadBarcodes(image, reader);
        size_t kept = 0;
        for (auto &r : results) if (formatBit(r)) kept++;
        if (kept == 0) return 0;
        out->items = static_cast<vp_zx_barcode *>(calloc(kept, sizeof(vp_zx_barcode)));
        if (!out->items) throw std::bad_alloc();
        for (auto &r : results) {
            int bit = formatBit(r);
            if (!bit) continue;
            // Counted before its buffers are allocated: a failure part-way frees what there is (calloc'd NULLs).
            vp_zx_barcode &item = out->items[out->count++];
            item.format = bit;
            item.valid = r.isValid() ? 1 : 0;
            item.has_eci = r.hasECI() ? 1 : 0;
            auto &position = r.position();
            for (int corner = 0; corner < 4; corner++) {
                item.corners[2 * corner] = position[corner].x;
                item.corners[2 * corner + 1] = position[corner].y;
            }
            if (!item.valid) continue;
            const std::vector<uint8_t> &bytes = r.bytes();
            item.length = bytes.size();
            item.bytes = static_cast<uint8_t *>(copyOut(bytes.data(), item.length));
            std::string text = r.text();
            item.text_length = text.size();
            item.text = static_cast<char *>(copyOut(text.data(), item.text_length));
        }
        return 0;
    } catch (const std::exception &error) {
        vp_zx_results_free(out);
        snprintf(message, message_size, "zxing-cpp: %s", error.what());
        return -1;
    } catch (...) {
        vp_zx_results_free(out);
        snprintf(message, message_size, "zxing-cpp: unknown failure");
        return -1;
    }
}

extern "C" void vp_zx_results_free(vp_zx_results *results) {
    for (size_t i = 0; i < results->count; i++) {
        free(results->items[i].bytes);
        free(results->items[i].text);
    }
    free(results->items);
    results->items = nullptr;
    results->count = 0;
}
