package dev.netronocr

import dev.netronocr.ffi.FrameQuality
import dev.netronocr.ffi.NetronException
import dev.netronocr.ffi.QualityParams
import dev.netronocr.ffi.ScanResult
import dev.netronocr.ffi.Scanner

/**
 * The Kotlin entry point: a thread-safe scanner (share one per app) over the native `Scanner`.
 *
 * Every call is synchronous and CPU-bound; call it off the main thread. Failures are typed
 * [NetronException] subclasses (`BufferTooShort`, `DecodeFailed`, `ModelLoad`, `Inference`, `Internal`, ...).
 */
class NetronScanner private constructor(internal val native: Scanner) : AutoCloseable {
    /** Quality verdict on one frame (no stability; use [capture] for a camera stream). */
    fun assess(frame: Frame): FrameQuality = frame.dispatch(
        { native.assess(it, frame.info) },
        { p0, p1, p2 -> native.assessPlanes(p0, p1, p2, frame.info) },
    )

    /** Quality verdict on an encoded JPEG or PNG image. */
    fun assessImage(encoded: ByteArray): FrameQuality = native.assessImage(Frame.direct(encoded))

    /**
     * Reads the graph in one frame. The [ScanResult] holds the graph as typed records (`graph`) and as graph
     * JSON v1 (`graphJson`; [parse] gives the [GraphJson] model), the frame's quality and per-stage timings.
     * An image without a graph gives an empty graph with a low canvas confidence, not an exception.
     */
    fun scan(frame: Frame): ScanResult = frame.dispatch(
        { native.scan(it, frame.info) },
        { p0, p1, p2 -> native.scanPlanes(p0, p1, p2, frame.info) },
    )

    /** Reads the graph in an encoded JPEG or PNG image (see [scan]). */
    fun scanImage(encoded: ByteArray): ScanResult = native.scanImage(Frame.direct(encoded))

    /** Reads the graph in a JPEG or PNG file (see [scan]). */
    fun scanFile(path: String): ScanResult = native.scanFile(path)

    /** The [GraphJson] model of a result's graph JSON. */
    fun parse(result: ScanResult): GraphJson = GraphJson.parse(result.graphJson)

    /** A capture controller over a camera stream, capturing after [stableFrames] steady accepted frames. */
    fun capture(stableFrames: Int = 3): CaptureController = CaptureController(this, stableFrames)

    /** This scanner's quality thresholds. */
    val qualityParams: QualityParams get() = native.qualityParams()

    /** A scanner with the same models and other quality thresholds. */
    fun withQualityParams(params: QualityParams): NetronScanner = NetronScanner(native.withQualityParams(params))

    /**
     * A scanner with the same models whose scans spread their model runs over [threads] threads (0: the available
     * cores, at most 4, the default). The graph is the same at any count; 1 leaves the other cores to the camera.
     */
    fun withThreads(threads: Int): NetronScanner {
        require(threads >= 0) { "threads must be >= 0, got $threads" }
        return NetronScanner(native.withThreads(threads.toUInt()))
    }

    override fun close() = native.close()

    companion object {
        /** Native library name (`libnetron_ocr_ffi.so`). */
        const val LIBRARY = "netron_ocr_ffi"

        @Volatile private var loaded = false

        /**
         * Loads the native library through `System.loadLibrary`, so its `JNI_OnLoad` installs the logcat logger
         * (JNA's own loading, used by the generated bindings, does not run `JNI_OnLoad`). Called by the factory
         * functions; harmless to call again. On a desktop JVM, where the library is found through
         * `jna.library.path` instead, a failure here is ignored.
         */
        fun loadNativeLibrary() {
            if (loaded) return
            try {
                System.loadLibrary(LIBRARY)
            } catch (_: UnsatisfiedLinkError) {
                // Desktop JVM tests: not on java.library.path; JNA loads it from jna.library.path.
            }
            loaded = true
        }

        /** A scanner with the models bundled in the library. */
        fun create(): NetronScanner {
            loadNativeLibrary()
            return NetronScanner(Scanner())
        }

        /** A scanner loading its models from [path] (a directory). */
        fun fromModelDir(path: String): NetronScanner {
            loadNativeLibrary()
            return NetronScanner(Scanner.fromModelDir(path))
        }
    }
}
