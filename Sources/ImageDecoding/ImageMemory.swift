import CImageCodecs

/// How the process allocates image-sized buffers.
public enum ImageMemory {
    /// Decoded images and image files are large buffers that live for one document. glibc serves them from
    /// its heap once it has raised its mmap threshold (it does when the first one is freed), and the heap's
    /// fragmentation then grows a long-running process by kilobytes per document. Mapped, each buffer goes
    /// back to the system when freed. Call once, at startup, before any image is decoded.
    @discardableResult
    public static func mapLargeBuffers(threshold: Int = 128 * 1024) -> Bool {
        vp_map_large_allocations(threshold) == 1
    }
}
