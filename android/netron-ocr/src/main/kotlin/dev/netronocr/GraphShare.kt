package dev.netronocr

import java.time.Instant
import java.time.ZoneOffset
import java.time.format.DateTimeFormatter

/**
 * The platform-independent half of sharing a scanned graph: what to share and under which name. The Android half
 * (`dev.netronocr.android.GraphShareIntents`) writes [Payload.text] to a cache file and builds the
 * `ACTION_SEND` intent through a FileProvider.
 */
object GraphShare {
    /** MIME type of shared graph files. */
    const val MIME_TYPE = "application/json"

    /** One shareable graph file. */
    data class Payload(
        /** File name, e.g. `netron-graph-20261130-085501.json`: safe on every file system, sorts by time. */
        val fileName: String,
        val mimeType: String,
        /** Indented graph JSON v1. */
        val text: String,
        /** Share-sheet subject line, e.g. `Netron graph: 12 nodes, 3 inputs, 1 output`. */
        val subject: String,
    )

    private val stamp = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC)

    /** The payload for [graph], captured at [capturedAt] (named in UTC). */
    fun payload(graph: GraphJson, capturedAt: Instant): Payload = Payload(
        fileName = "netron-graph-${stamp.format(capturedAt)}.json",
        mimeType = MIME_TYPE,
        text = graph.toPrettyJson() + "\n",
        subject = "Netron graph: ${count(graph.nodes.size, "node")}, " +
            "${count(graph.inputs.size, "input")}, ${count(graph.outputs.size, "output")}",
    )

    private fun count(n: Int, noun: String) = if (n == 1) "1 $noun" else "$n ${noun}s"
}
