package dev.netronocr

import dev.netronocr.ffi.Hint
import dev.netronocr.ffi.NetronException
import dev.netronocr.ffi.PixelFormat
import kotlin.test.assertContains
import kotlin.test.assertEquals
import kotlin.test.assertIs
import kotlin.test.assertNotNull
import kotlin.test.assertNull
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Test

class CaptureControllerTest {
    @Test
    fun `flow emits searching, steadying with progress, then captured`() = runTest {
        NetronScanner.create().use { scanner ->
            scanner.capture(stableFrames = 2).use { controller ->
                val collected = async(start = CoroutineStart.UNDISPATCHED) { controller.updates.take(6).toList() }
                val good = SyntheticFrames.netronNv21()
                controller.submit(SyntheticFrames.flatNv21()) // searching: nothing to read
                controller.submit(good) // rejected: everything changed since the flat frame (hold steady)
                controller.submit(good) // accepted and steady: 1 of 2
                controller.submit(good) // 2 of 2: captured
                controller.submit(SyntheticFrames.flatNv21()) // captured is sticky
                controller.submit(Frame(listOf(Frame.direct(ByteArray(10))), good.info)) // bad frame: Failed
                val updates = collected.await()

                assertContains(assertIs<ScanUpdate.Searching>(updates[0]).hints, Hint.MOVE_CLOSER)
                assertContains(assertIs<ScanUpdate.Searching>(updates[1]).hints, Hint.HOLD_STEADY)
                assertEquals(0.5f, assertIs<ScanUpdate.Steadying>(updates[2]).progress)
                val captured = assertIs<ScanUpdate.Captured>(updates[3])
                // The two steady frames were scanned and fused; the Kotlin model reads the fused JSON.
                assertNull(captured.scanError)
                val result = assertNotNull(captured.result)
                assertEquals(2u, result.frames)
                ScanTest.checkResult(result, 640, 480)
                assertEquals(GraphJson.parse(result.graphJson), captured.graph)
                assertIs<ScanUpdate.Captured>(updates[4])
                assertIs<NetronException.BufferTooShort>(assertIs<ScanUpdate.Failed>(updates[5]).error)

                controller.reset()
                // After a reset the first good frame has nothing to compare with: accepted, 0 steady frames.
                assertEquals(0f, assertIs<ScanUpdate.Steadying>(controller.submit(good)).progress)
            }
        }
    }

    @Test
    fun `a moving camera is told to hold steady`() {
        NetronScanner.create().use { scanner ->
            scanner.capture(stableFrames = 3).use { controller ->
                controller.submit(SyntheticFrames.netronNv21(shift = 0))
                val moved = controller.submit(SyntheticFrames.netronNv21(shift = 160))
                val searching = assertIs<ScanUpdate.Searching>(moved)
                assertContains(searching.hints, Hint.HOLD_STEADY)
            }
        }
    }

    @Test
    fun `frame info from Android integers`() {
        val info = Frame.info(PixelFormat.I420, 640, 480, listOf(640, 320, 320), 1, rotationDegrees = 270)
        assertEquals(listOf(640u, 320u, 320u), info.rowStrides)
        assertEquals(dev.netronocr.ffi.Rotation.R270, info.rotation)
    }
}
