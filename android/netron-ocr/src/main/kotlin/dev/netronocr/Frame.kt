package dev.netronocr

import dev.netronocr.ffi.FrameInfo
import dev.netronocr.ffi.PixelFormat
import dev.netronocr.ffi.rotationFromDegrees
import java.nio.ByteBuffer

/**
 * One camera frame and its geometry (layout contract: `netron_ocr_core::frame`), as either
 * * **one buffer** holding all the format's planes packed one after another (e.g. an NV21 byte array), or
 * * **one buffer per plane** (CameraX `ImageProxy.planes`: exactly as many buffers as the format has planes).
 *
 * The buffers must be **direct** ByteBuffers (CameraX `ImageProxy.planes[i].buffer` are); they are passed to the
 * native library without a copy and read only during the call that receives the frame, so a frame must not be
 * kept past the analyzer callback that produced it. Each buffer's bytes run from its `position()` to its
 * `limit()`.
 */
class Frame(val planes: List<ByteBuffer>, val info: FrameInfo) {
    init {
        require(planes.size in 1..3) { "a frame has 1 to 3 planes, got ${planes.size}" }
        require(planes.all { it.isDirect }) { "frame planes must be direct ByteBuffers (no copy is made)" }
    }

    /** True when [planes] is the one-buffer layout (a single buffer for any format). */
    val isPacked: Boolean get() = planes.size == 1

    /** Calls [packed] with the one buffer, or [perPlane] with three plane buffers (unused ones empty); every
     * buffer starts at index 0. */
    internal inline fun <T> dispatch(
        packed: (ByteBuffer) -> T,
        perPlane: (ByteBuffer, ByteBuffer, ByteBuffer) -> T,
    ): T {
        val p = planes.map { it.zeroBased() }
        return if (isPacked) packed(p[0]) else perPlane(p[0], p.getOrElse(1) { EMPTY }, p.getOrElse(2) { EMPTY })
    }

    companion object {
        private val EMPTY: ByteBuffer = ByteBuffer.allocateDirect(0)

        /**
         * Geometry from Android-style integers: [rowStrides] per plane, chroma (or packed RGB) [pixelStride], and
         * the clockwise [rotationDegrees] that makes the frame upright (0, 90, 180 or 270).
         */
        fun info(
            format: PixelFormat,
            width: Int,
            height: Int,
            rowStrides: List<Int>,
            pixelStride: Int,
            rotationDegrees: Int = 0,
        ): FrameInfo {
            require(width > 0 && height > 0) { "frame size must be positive, got ${width}x$height" }
            require(rotationDegrees >= 0) { "rotation must be 0, 90, 180 or 270, got $rotationDegrees" }
            return FrameInfo(
                format = format,
                width = width.toUInt(),
                height = height.toUInt(),
                rowStrides = rowStrides.map { require(it >= 0) { "negative row stride $it" }; it.toUInt() },
                pixelStride = pixelStride.toUInt(),
                rotation = rotationFromDegrees(rotationDegrees.toUInt()),
            )
        }

        /** A direct copy of [bytes] (for tests and still images; camera planes are direct already). */
        fun direct(bytes: ByteArray): ByteBuffer =
            ByteBuffer.allocateDirect(bytes.size).put(bytes).also { it.flip() }
    }
}

/**
 * The generated bindings pass a direct buffer's base address with its `remaining()` length, ignoring
 * `position()`; a slice starts at the position, so the native side sees exactly `position..limit`.
 */
internal fun ByteBuffer.zeroBased(): ByteBuffer = if (position() == 0) this else slice()
