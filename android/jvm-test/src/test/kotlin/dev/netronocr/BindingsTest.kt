package dev.netronocr

import dev.netronocr.ffi.FrameInfo
import dev.netronocr.ffi.Hint
import dev.netronocr.ffi.LogLevel
import dev.netronocr.ffi.LogRecord
import dev.netronocr.ffi.LogSink
import dev.netronocr.ffi.NetronException
import dev.netronocr.ffi.PixelFormat
import dev.netronocr.ffi.Rotation
import dev.netronocr.ffi.assess
import dev.netronocr.ffi.clearLogSink
import dev.netronocr.ffi.debugPanic
import dev.netronocr.ffi.defaultQualityParams
import dev.netronocr.ffi.rotationFromDegrees
import dev.netronocr.ffi.setLogSink
import dev.netronocr.ffi.tightFrameInfo
import java.io.File
import java.nio.ByteBuffer
import java.util.concurrent.Callable
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.Executors
import kotlin.test.assertContains
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertTrue
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BindingsTest {
    private val scanner = NetronScanner.create()

    @AfterAll
    fun closeScanner() = scanner.close()

    @Test
    fun `generated bindings load and return the core defaults`() {
        val p = defaultQualityParams()
        assertEquals(480u, p.analysisMaxSide)
        assertEquals(8u, p.cellSize)
        assertEquals(p, scanner.qualityParams)
        assertEquals(Rotation.R90, rotationFromDegrees(90u))
    }

    @Test
    fun `a Netron-like frame is accepted and a flat one is not`() {
        val good = scanner.assess(SyntheticFrames.netronNv21())
        assertTrue(good.accept, "hints: ${good.hints}")
        assertTrue(good.content > 0f && good.score > 0f)
        assertEquals(null, good.stability) // single frames have no stability

        val flat = scanner.assess(SyntheticFrames.flatNv21())
        assertFalse(flat.accept)
        assertContains(flat.hints, Hint.MOVE_CLOSER)
        assertEquals(0f, flat.content)
    }

    @Test
    fun `one-buffer, per-plane and offset buffers give the same verdict`() {
        val (w, h) = 320 to 240
        val nv21 = SyntheticFrames.rgbToNv21(SyntheticFrames.netronRgb(w, h), w, h)
        val info = tightFrameInfo(PixelFormat.NV21, w.toUInt(), h.toUInt(), Rotation.R0)
        val whole = assess(Frame.direct(nv21), info)
        val planes = scanner.assess(SyntheticFrames.nv21Frame(nv21, w, h))
        // The same bytes 7 bytes into a bigger direct buffer: Frame must pass exactly position..limit.
        val padded = ByteBuffer.allocateDirect(nv21.size + 7).apply { position(7); put(nv21); position(7) }
        val offset = scanner.assess(Frame(listOf(padded), info))
        assertEquals(whole, planes)
        assertEquals(whole, offset)
    }

    @Test
    fun `typed errors for a short buffer and a bad stride`() {
        val (w, h) = 64 to 48
        val info = Frame.info(PixelFormat.NV21, w, h, listOf(w, w), 2)
        val short = Frame(listOf(Frame.direct(ByteArray(w * h))), info) // no chroma plane bytes
        val e1 = assertFailsWith<NetronException.BufferTooShort> { scanner.assess(short) }
        assertContains(e1.message!!, "needs")

        val badStride: FrameInfo = info.copy(rowStrides = listOf(10u, w.toUInt()))
        assertFailsWith<NetronException.InvalidStride> {
            scanner.assess(Frame(listOf(Frame.direct(ByteArray(w * h * 2))), badStride))
        }
        assertFailsWith<NetronException.InvalidFrame> { rotationFromDegrees(45u) }
        assertFailsWith<NetronException.ModelLoad> { NetronScanner.fromModelDir("/nonexistent/models") }
    }

    @Test
    fun `a panic inside the library comes back as Internal and the library keeps working`() {
        val e = assertFailsWith<NetronException.Internal> { debugPanic("kotlin-side") }
        assertContains(e.message!!, "kotlin-side")
        assertTrue(scanner.assess(SyntheticFrames.netronNv21()).accept)
    }

    @Test
    fun `a scan reads the same graph on one thread as on the default count`() {
        val repo = File(System.getProperty("netron.repo.root") ?: "../..")
        val photo = File(repo, "tests/fixtures/scenes/000000.photo.jpg").path
        val expected = scanner.scanFile(photo).graphJson
        scanner.withThreads(1).use { one -> assertEquals(expected, one.scanFile(photo).graphJson) }
        assertFailsWith<IllegalArgumentException> { scanner.withThreads(-1) }
    }

    @Test
    fun `four threads share one scanner`() {
        val frames = (0 until 4).map { SyntheticFrames.netronNv21(shift = 8 * it) }
        val expected = frames.map { scanner.assess(it) }
        val pool = Executors.newFixedThreadPool(4)
        try {
            val results = pool.invokeAll(
                (0 until 4).map { t -> Callable { (0 until 10).map { scanner.assess(frames[t]) } } },
            ).map { it.get() }
            results.forEachIndexed { t, rs -> rs.forEach { assertEquals(expected[t], it) } }
        } finally {
            pool.shutdown()
        }
    }

    @Test
    fun `log records reach a Kotlin sink`() {
        val seen = CopyOnWriteArrayList<LogRecord>()
        val active = setLogSink(
            object : LogSink {
                override fun log(record: LogRecord) {
                    seen.add(record)
                }
            },
            LogLevel.DEBUG,
        )
        try {
            assertTrue(active)
            NetronScanner.create().close()
        } finally {
            clearLogSink()
        }
        assertTrue(seen.any { it.level == LogLevel.DEBUG && "bundled models" in it.message }, "got $seen")
    }
}
