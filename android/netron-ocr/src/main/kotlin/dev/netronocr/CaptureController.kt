package dev.netronocr

import dev.netronocr.ffi.CaptureSession
import dev.netronocr.ffi.CaptureState
import dev.netronocr.ffi.CaptureUpdate
import dev.netronocr.ffi.FrameQuality
import dev.netronocr.ffi.Hint
import dev.netronocr.ffi.NetronException
import dev.netronocr.ffi.ScanResult
import kotlinx.coroutines.channels.BufferOverflow
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.MutableSharedFlow
import kotlinx.coroutines.flow.asSharedFlow

/** What the capture UI shows after each frame. */
sealed interface ScanUpdate {
    /** The last frame was rejected; [hints] say why (most important first). */
    data class Searching(val hints: List<Hint>, val quality: FrameQuality) : ScanUpdate

    /** Good frames are coming in; [progress] is the share of the steady frames needed, 0..1. */
    data class Steadying(val hints: List<Hint>, val quality: FrameQuality, val progress: Float) : ScanUpdate

    /**
     * Captured. [result] is the graph fused from the steady frames (`result.frames` of them) with timings;
     * [graph] its [GraphJson] model. Both are null, with [scanError] saying why, only if the library returned no
     * result or JSON this model cannot read (the UI should then say so; it never shows a made-up graph).
     */
    data class Captured(
        val quality: FrameQuality,
        val result: ScanResult?,
        val graph: GraphJson?,
        val scanError: String?,
    ) : ScanUpdate

    /** A frame could not be processed (bad geometry, or an internal error); capture state is unchanged. */
    data class Failed(val error: NetronException) : ScanUpdate
}

/**
 * Drives a native `CaptureSession` from a camera stream and publishes a [ScanUpdate] per frame on [updates].
 *
 * [submit] is synchronous: call it from the camera analyzer thread while the frame's buffers are valid (it
 * copies nothing). Collect [updates] anywhere (e.g. `lifecycleScope`); it replays the latest update to new
 * collectors and drops the oldest when a collector is slow, so the camera thread never blocks.
 */
class CaptureController internal constructor(
    scanner: NetronScanner,
    stableFrames: Int,
) : AutoCloseable {
    private val session: CaptureSession
    private val flow = MutableSharedFlow<ScanUpdate>(
        replay = 1,
        extraBufferCapacity = 16,
        onBufferOverflow = BufferOverflow.DROP_OLDEST,
    )

    init {
        require(stableFrames >= 1) { "stableFrames must be at least 1, got $stableFrames" }
        session = CaptureSession(scanner.native, stableFrames.toUInt())
    }

    /** One update per submitted frame. */
    val updates: Flow<ScanUpdate> = flow.asSharedFlow()

    /** Pushes one frame through the quality gate and the capture state machine; returns (and emits) the update. */
    fun submit(frame: Frame): ScanUpdate {
        val update = try {
            val update = frame.dispatch(
                { session.pushFrame(it, frame.info) },
                { p0, p1, p2 -> session.pushPlanes(p0, p1, p2, frame.info) },
            )
            toScanUpdate(update)
        } catch (e: NetronException) {
            ScanUpdate.Failed(e)
        }
        flow.tryEmit(update) // never fails: DROP_OLDEST
        return update
    }

    /** Starts over (Searching), e.g. after the user dismissed a result. */
    fun reset() = session.reset()

    override fun close() = session.close()

    companion object {
        /** Maps a native update to the UI model (pure; also used by tests). */
        fun toScanUpdate(u: CaptureUpdate): ScanUpdate = when (u.state) {
            CaptureState.SEARCHING -> ScanUpdate.Searching(u.hints, u.quality)
            CaptureState.STEADYING -> ScanUpdate.Steadying(
                u.hints,
                u.quality,
                u.stableFrames.toFloat() / u.requiredStableFrames.toFloat(),
            )
            CaptureState.CAPTURED -> {
                val result = u.result
                if (result == null) {
                    ScanUpdate.Captured(u.quality, null, null, NO_RESULT)
                } else {
                    try {
                        ScanUpdate.Captured(u.quality, result, GraphJson.parse(result.graphJson), null)
                    } catch (e: GraphJsonException) {
                        ScanUpdate.Captured(u.quality, null, null, "unreadable graph JSON: ${e.message}")
                    }
                }
            }
        }

        /** [ScanUpdate.Captured.scanError] when the library captured without a result (a library bug). */
        const val NO_RESULT = "The capture completed without a scan result."
    }
}
