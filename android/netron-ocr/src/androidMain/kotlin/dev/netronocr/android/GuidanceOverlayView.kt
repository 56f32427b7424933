package dev.netronocr.android

import android.content.Context
import android.graphics.Canvas
import android.graphics.Color
import android.graphics.Paint
import android.graphics.RectF
import android.util.AttributeSet
import android.view.View
import dev.netronocr.HintText
import dev.netronocr.ScanUpdate

/**
 * Drawn over the camera preview: a framing guide whose colour follows the capture state (white searching,
 * amber steadying, green captured), a progress arc while steadying, and the most important hint as text.
 * Call [show] from the main thread with each [ScanUpdate] (e.g. collected from `CaptureController.updates`).
 */
class GuidanceOverlayView @JvmOverloads constructor(
    context: Context,
    attrs: AttributeSet? = null,
) : View(context, attrs) {
    private var update: ScanUpdate? = null
    private val density = resources.displayMetrics.density
    private val guidePaint = Paint(Paint.ANTI_ALIAS_FLAG).apply {
        style = Paint.Style.STROKE
        strokeWidth = 3f * density
    }
    private val arcPaint = Paint(Paint.ANTI_ALIAS_FLAG).apply {
        style = Paint.Style.STROKE
        strokeWidth = 6f * density
        color = AMBER
    }
    private val textPaint = Paint(Paint.ANTI_ALIAS_FLAG).apply {
        color = Color.WHITE
        textSize = 18f * density
        textAlign = Paint.Align.CENTER
        setShadowLayer(4f * density, 0f, 0f, Color.BLACK)
    }
    private val guide = RectF()
    private val arc = RectF()

    fun show(update: ScanUpdate) {
        this.update = update
        invalidate()
    }

    override fun onDraw(canvas: Canvas) {
        super.onDraw(canvas)
        val margin = 24f * density
        guide.set(margin, margin * 3, width - margin, height - margin * 5)
        val u = update
        guidePaint.color = when (u) {
            is ScanUpdate.Steadying -> AMBER
            is ScanUpdate.Captured -> GREEN
            else -> Color.WHITE
        }
        canvas.drawRoundRect(guide, 16f * density, 16f * density, guidePaint)

        if (u is ScanUpdate.Steadying) {
            val r = 28f * density
            arc.set(width / 2f - r, guide.bottom + margin, width / 2f + r, guide.bottom + margin + 2 * r)
            canvas.drawArc(arc, -90f, 360f * u.progress, false, arcPaint)
        }

        val text = when (u) {
            null -> "Point the camera at a Netron graph"
            is ScanUpdate.Searching -> HintText.headline(u.hints) ?: "Looking for a graph"
            is ScanUpdate.Steadying -> HintText.headline(u.hints) ?: "Hold steady"
            is ScanUpdate.Captured -> u.scanError ?: HintText.captured(u.quality.hints, u.graph?.uncertain())
            is ScanUpdate.Failed -> u.error.message ?: "Frame error"
        }
        canvas.drawText(text, width / 2f, margin * 2, textPaint)
    }

    private companion object {
        val AMBER = Color.rgb(0xFF, 0xB3, 0x00)
        val GREEN = Color.rgb(0x2E, 0xC4, 0x4F)
    }
}
