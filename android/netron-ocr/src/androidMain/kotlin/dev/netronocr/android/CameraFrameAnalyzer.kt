package dev.netronocr.android

import android.util.Size
import androidx.camera.core.ImageAnalysis
import androidx.camera.core.ImageProxy
import androidx.camera.core.resolutionselector.ResolutionSelector
import androidx.camera.core.resolutionselector.ResolutionStrategy
import dev.netronocr.CaptureController
import dev.netronocr.Frame
import dev.netronocr.ffi.PixelFormat
import java.util.concurrent.Executor

/**
 * CameraX analyzer feeding a [CaptureController]: each `YUV_420_888` frame goes to the native library as its
 * three plane ByteBuffers (direct buffers, passed without a copy) with their row strides, the chroma pixel
 * stride (2 on most devices: interleaved) and the rotation CameraX reports. The frame is closed after the
 * synchronous native call, so buffers never outlive the callback.
 */
class CameraFrameAnalyzer(private val controller: CaptureController) : ImageAnalysis.Analyzer {
    override fun analyze(image: ImageProxy) {
        image.use {
            val planes = it.planes
            val frame = Frame(
                planes = planes.map { p -> p.buffer },
                info = Frame.info(
                    format = PixelFormat.I420,
                    width = it.width,
                    height = it.height,
                    rowStrides = planes.map { p -> p.rowStride },
                    pixelStride = planes[1].pixelStride,
                    rotationDegrees = it.imageInfo.rotationDegrees,
                ),
            )
            controller.submit(frame)
        }
    }

    companion object {
        /**
         * The `ImageAnalysis` use case to bind next to the preview: YUV_420_888 output, about 1080p (the quality
         * gate works on a 480-px thumbnail; more pixels only cost copies in the camera stack), and
         * `STRATEGY_KEEP_ONLY_LATEST` so a slow frame drops older ones instead of queueing them.
         */
        fun useCase(controller: CaptureController, executor: Executor): ImageAnalysis =
            ImageAnalysis.Builder()
                .setOutputImageFormat(ImageAnalysis.OUTPUT_IMAGE_FORMAT_YUV_420_888)
                .setBackpressureStrategy(ImageAnalysis.STRATEGY_KEEP_ONLY_LATEST)
                .setResolutionSelector(
                    ResolutionSelector.Builder()
                        .setResolutionStrategy(
                            ResolutionStrategy(
                                Size(1920, 1080),
                                ResolutionStrategy.FALLBACK_RULE_CLOSEST_LOWER_THEN_HIGHER,
                            ),
                        )
                        .build(),
                )
                .build()
                .also { it.setAnalyzer(executor, CameraFrameAnalyzer(controller)) }
    }
}
