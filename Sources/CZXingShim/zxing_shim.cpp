#include "zxing_shim.h"

#include <ZXing/ReadBarcode.h>
#include <ZXing/TextUtfEncoding.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

using namespace ZXing;

static const struct { int bit; BarcodeFormat format; } kFormats[] = {
    {VP_ZX_QR_CODE, BarcodeFormat::QRCode},   {VP_ZX_PDF417, BarcodeFormat::PDF417},
    {VP_ZX_CODE_128, BarcodeFormat::Code128}, {VP_ZX_CODE_39, BarcodeFormat::Code39},
    {VP_ZX_EAN_13, BarcodeFormat::EAN13},     {VP_ZX_DATA_MATRIX, BarcodeFormat::DataMatrix},
};

extern "C" int vp_zx_read(const uint8_t *pixels, int width, int height, int formats, int try_harder,
                          vp_zx_results *out, char *message, size_t message_size) {
    out->items = nullptr;
    out->count = 0;
    try {
        BarcodeFormats wanted;
        for (auto &entry : kFormats) if (formats & entry.bit) wanted |= entry.format;
        DecodeHints hints;
        hints.setFormats(wanted);
        hints.setTryHarder(try_harder != 0);
        hints.setTryRotate(try_harder != 0);
        hints.setTryDownscale(true);
        ImageView image(pixels, width, height, ImageFormat::Lum);
        Results results = ReadBarcodes(image, hints);
        size_t valid = 0;
        for (auto &r : results) if (r.isValid()) valid++;
        if (valid == 0) return 0;
        out->items = static_cast<vp_zx_barcode *>(calloc(valid, sizeof(vp_zx_barcode)));
        if (!out->items) throw std::bad_alloc();
        for (auto &r : results) {
            if (!r.isValid()) continue;
            // Counted before its buffers are allocated: a failure part-way frees what there is (calloc'd NULLs).
            vp_zx_barcode &item = out->items[out->count++];
            for (auto &entry : kFormats) if (r.format() == entry.format) item.format = entry.bit;
            const ByteArray &bytes = r.bytes();
            item.length = bytes.size();
            item.bytes = static_cast<uint8_t *>(malloc(item.length ? item.length : 1));
            if (!item.bytes) throw std::bad_alloc();
            if (item.length) memcpy(item.bytes, bytes.data(), item.length);
            std::string text = TextUtfEncoding::ToUtf8(r.text());
            item.text_length = text.size();
            item.text = static_cast<char *>(malloc(item.text_length ? item.text_length : 1));
            if (!item.text) throw std::bad_alloc();
            if (item.text_length) memcpy(item.text, text.data(), item.text_length);
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
