import CImageCodecs

/// How the process allocates image-sized buffers.
public enum ImageMemory {
    /// Decoded images, image files and the readers' working copies are buffers of a few megabytes that live for one
    /// document. Each mapped on its own (glibc's 128 KB threshold) or handed back to the system as soon as the heap's
    /// top is free (glibc keeps 128 KB), every image is page-faulted in and zeroed again by the kernel: 460 faults and
    /// about a quarter of `run`'s CPU per document on a 2-core machine, and a TLB shootdown on every other core at each
    /// unmap. Served from the heap and kept there (a 32 MiB threshold and top pad), a worker's freed buffers are reused:
    /// measured over 3,000 documents of `run`, page faults 1.37 M → 25 k, system CPU 5.7 s → 1.5 s, and anonymous memory
    /// levels off at about 92 MB after 1,000 documents (mapped: about 57 MB) instead of following the work. Images of
    /// 32 MiB and more are still mapped each on its own. Call once, at startup, before any image is decoded.
    @discardableResult
    public static func reuseImageBuffers(upTo size: Int = 32 << 20) -> Bool {
        vp_tune_allocator(size, size) == 1
    }
}
