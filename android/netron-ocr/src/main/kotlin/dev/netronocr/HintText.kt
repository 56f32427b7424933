package dev.netronocr

import dev.netronocr.ffi.Hint

/** Short user-facing guidance for each quality hint (English; apps may localise by mapping [Hint] themselves). */
object HintText {
    fun message(hint: Hint): String = when (hint) {
        Hint.TOO_DARK -> "Too dark: turn up the screen brightness"
        Hint.TOO_BRIGHT -> "Too bright: lower the screen brightness"
        Hint.REDUCE_GLARE -> "Glare on the screen: tilt the phone"
        Hint.HOLD_STEADY -> "Hold steady"
        Hint.TOO_BLURRY -> "Blurry: hold still and let the camera focus"
        Hint.MOVE_CLOSER -> "Move closer to the graph"
        Hint.MOVE_BACK -> "Move back: the graph runs off the edges"
        Hint.ZOOM_IN -> "Text too small to read: zoom in in Netron, or move closer and scan in parts"
    }

    /**
     * What to say once captured: a warning when the capture's text was too small ([Hint.ZOOM_IN] among [hints]),
     * and how many readings of the captured graph are uncertain ([GraphJson.uncertain]), when any are.
     */
    fun captured(hints: List<Hint>, uncertain: Uncertain? = null): String {
        val base = if (Hint.ZOOM_IN in hints) {
            "Captured, but the text was small: check the graph, or zoom in and scan again"
        } else {
            "Captured"
        }
        val doubts = uncertain?.describe() ?: return base
        return "$base. Unsure of $doubts"
    }

    /** The message of the most important hint, or null when there is none. */
    fun headline(hints: List<Hint>): String? = hints.firstOrNull()?.let(::message)
}
