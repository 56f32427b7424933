package dev.netronocr

import dev.netronocr.ffi.PixelFormat
import kotlin.math.roundToInt

/** Small synthetic camera frames built in the tests (no fixtures on disk). */
object SyntheticFrames {
    /**
     * A Netron-like RGB screen of [w]×[h]: white background, a column of cards with a coloured header and dark
     * text-like strokes, thin edges between them. Deterministic. Returns packed RGB, 3 bytes a pixel.
     */
    fun netronRgb(w: Int, h: Int, shift: Int = 0): ByteArray {
        val rgb = ByteArray(w * h * 3) { 0xFF.toByte() }
        fun fill(x0: Int, y0: Int, cw: Int, ch: Int, r: Int, g: Int, b: Int) {
            for (y in maxOf(0, y0) until minOf(h, y0 + ch)) for (x in maxOf(0, x0 + shift) until minOf(w, x0 + shift + cw)) {
                val i = (y * w + x) * 3
                rgb[i] = r.toByte(); rgb[i + 1] = g.toByte(); rgb[i + 2] = b.toByte()
            }
        }
        val cardW = w / 3
        val cardH = h / 7
        for (k in 0 until 3) {
            val x0 = w / 3
            val y0 = h / 10 + k * (cardH + h / 10)
            fill(x0, y0, cardW, cardH, 40, 40, 40) // border
            fill(x0 + 2, y0 + 2, cardW - 4, cardH - 4, 252, 252, 252) // body
            fill(x0 + 2, y0 + 2, cardW - 4, cardH / 3, 51, 85, 136) // header
            // "Text": strokes 2 px wide, 8 px tall, every 5 px, on two rows of the body.
            for (row in 0 until 2) for (g in 0 until (cardW - 16) / 5) {
                if ((g * 7 + row * 3 + k) % 5 == 0) continue
                fill(x0 + 8 + g * 5, y0 + cardH / 3 + 6 + row * 12, 2, 8, 20, 20, 20)
            }
            if (k < 2) fill(x0 + cardW / 2, y0 + cardH, 2, h / 10, 60, 60, 60) // edge to the next card
        }
        return rgb
    }

    /** BT.601 full-range RGB → NV21 (Y plane, then interleaved V,U at half resolution), tight strides. */
    fun rgbToNv21(rgb: ByteArray, w: Int, h: Int): ByteArray {
        val cw = (w + 1) / 2
        val ch = (h + 1) / 2
        val out = ByteArray(w * h + cw * ch * 2)
        fun px(x: Int, y: Int, c: Int) = rgb[(y * w + x) * 3 + c].toInt() and 0xFF
        for (y in 0 until h) for (x in 0 until w) {
            val yv = 0.299 * px(x, y, 0) + 0.587 * px(x, y, 1) + 0.114 * px(x, y, 2)
            out[y * w + x] = yv.roundToInt().coerceIn(0, 255).toByte()
        }
        for (cy in 0 until ch) for (cx in 0 until cw) {
            val (x, y) = 2 * cx to 2 * cy
            val r = px(x, y, 0); val g = px(x, y, 1); val b = px(x, y, 2)
            val u = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
            val v = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
            val i = w * h + (cy * cw + cx) * 2
            out[i] = v.roundToInt().coerceIn(0, 255).toByte()
            out[i + 1] = u.roundToInt().coerceIn(0, 255).toByte()
        }
        return out
    }

    /** A Netron-like NV21 frame wrapped as a one-buffer [Frame] (Y and VU planes as two direct slices). */
    fun netronNv21(w: Int = 640, h: Int = 480, shift: Int = 0): Frame {
        val nv21 = rgbToNv21(netronRgb(w, h, shift), w, h)
        return nv21Frame(nv21, w, h)
    }

    fun nv21Frame(nv21: ByteArray, w: Int, h: Int): Frame {
        val all = Frame.direct(nv21)
        val y = all.duplicate().apply { limit(w * h) }.slice()
        val vu = all.duplicate().apply { position(w * h) }.slice()
        return Frame(listOf(y, vu), Frame.info(PixelFormat.NV21, w, h, listOf(w, w), 2))
    }

    /** A uniformly grey NV21 frame: no content at all. */
    fun flatNv21(w: Int = 640, h: Int = 480, luma: Int = 128): Frame {
        val bytes = ByteArray(w * h + w * ((h + 1) / 2)) { i -> if (i < w * h) luma.toByte() else 128.toByte() }
        return nv21Frame(bytes, w, h)
    }
}
