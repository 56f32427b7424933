package dev.netronocr.android

import android.content.ClipData
import android.content.Context
import android.content.Intent
import androidx.core.content.FileProvider
import dev.netronocr.GraphJson
import dev.netronocr.GraphShare
import java.io.File
import java.time.Instant

/**
 * The Android half of sharing a graph: writes the [GraphShare.Payload] to `cacheDir/netron-ocr-shared/` and
 * returns a chooser for `ACTION_SEND` with a `content://` URI from this library's FileProvider (authority
 * `<applicationId>.netronocr.fileprovider`, declared in the library manifest), readable by the receiving app.
 */
object GraphShareIntents {
    /** Sub-directory of `cacheDir` exposed by the FileProvider (see `res/xml/netron_ocr_file_paths.xml`). */
    const val SHARE_DIR = "netron-ocr-shared"

    fun authority(context: Context) = "${context.packageName}.netronocr.fileprovider"

    fun chooser(context: Context, graph: GraphJson, capturedAt: Instant = Instant.now()): Intent {
        val payload = GraphShare.payload(graph, capturedAt)
        val dir = File(context.cacheDir, SHARE_DIR).apply { mkdirs() }
        val file = File(dir, payload.fileName).apply { writeText(payload.text) }
        val uri = FileProvider.getUriForFile(context, authority(context), file)
        val send = Intent(Intent.ACTION_SEND).apply {
            type = payload.mimeType
            putExtra(Intent.EXTRA_STREAM, uri)
            putExtra(Intent.EXTRA_SUBJECT, payload.subject)
            clipData = ClipData.newRawUri(payload.fileName, uri)
            addFlags(Intent.FLAG_GRANT_READ_URI_PERMISSION)
        }
        return Intent.createChooser(send, payload.subject)
    }
}
