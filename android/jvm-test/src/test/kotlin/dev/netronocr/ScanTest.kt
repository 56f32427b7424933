package dev.netronocr

import dev.netronocr.ffi.BoundingBox
import dev.netronocr.ffi.Hint
import dev.netronocr.ffi.NetronException
import dev.netronocr.ffi.ScanResult
import dev.netronocr.ffi.ShapeDim
import java.io.File
import kotlin.math.abs
import kotlin.test.assertContains
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertNotNull
import kotlin.test.assertTrue
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance

/**
 * Scans through the real cdylib and models. The models are still weak, so only structure is checked (the JSON
 * contract, boxes inside the image, the typed records agreeing with the JSON, timings), never counts or ops.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ScanTest {
    private val scanner = NetronScanner.create()
    private val scenes = File(System.getProperty("netron.repo.root") ?: "../..", "tests/fixtures/scenes")
    private val photo = File(scenes, "000000.photo.jpg")

    @AfterAll
    fun closeScanner() = scanner.close()

    @Test
    fun `the fixture photo scans to a well-formed graph`() {
        val truth = Json.parseToJsonElement(File(scenes, "000000.photo.json").readText()).jsonObject
        val image = truth["image"]!!.jsonObject
        val (w, h) = image["width"]!!.jsonPrimitive.int to image["height"]!!.jsonPrimitive.int
        val r = scanner.scanImage(photo.readBytes())
        checkResult(r, w, h)
        assertEquals(1u, r.frames)
        assertTrue(r.timings.decodeMs > 0.0)
        assertEquals(r.graphJson, scanner.scanFile(photo.path).graphJson)
        // Its labels are 15 px high: a text height, and no zoom-in advice.
        val textHeight = assertNotNull(r.textHeight)
        assertTrue(textHeight >= 9f, "text height $textHeight")
        assertTrue(Hint.ZOOM_IN !in r.quality.hints)
    }

    @Test
    fun `small text comes back with the zoom-in hint`() {
        val dense = File(scenes.parentFile, "dense/000104.photo.jpg") // labels 7 px high
        val r = scanner.scanFile(dense.path)
        assertTrue(assertNotNull(r.textHeight) < 9f)
        assertContains(r.quality.hints, Hint.ZOOM_IN)
        assertTrue(HintText.message(Hint.ZOOM_IN).startsWith("Text too small"))
        assertEquals("Captured", HintText.captured(listOf(Hint.MOVE_BACK)))
        assertTrue(HintText.captured(listOf(Hint.MOVE_BACK, Hint.ZOOM_IN)).startsWith("Captured, but the text was small"))
        // At that size some labels read under 0.5 calibrated confidence: the capture message says so.
        val uncertain = GraphJson.parse(r.graphJson).uncertain()
        assertTrue(uncertain.shapes > 0, "$uncertain")
        assertContains(HintText.captured(r.quality.hints, uncertain), "Unsure of")
    }

    @Test
    fun `a raw NV21 frame scans, one buffer or per plane`() {
        val frame = SyntheticFrames.netronNv21()
        val r = scanner.scan(frame)
        checkResult(r, 640, 480)
        val packed = scanner.native.scan(Frame.direct(SyntheticFrames.rgbToNv21(SyntheticFrames.netronRgb(640, 480), 640, 480)), frame.info)
        assertEquals(r.graphJson, packed.graphJson)
    }

    @Test
    fun `short buffers and corrupt JPEGs are typed errors`() {
        val good = SyntheticFrames.netronNv21()
        assertFailsWith<NetronException.BufferTooShort> {
            scanner.scan(Frame(listOf(Frame.direct(ByteArray(100))), good.info))
        }
        val jpeg = photo.readBytes()
        val corrupt = jpeg.copyOf().also { it.fill(0, 4, it.size) } // the JPEG signature, then zeros
        assertFailsWith<NetronException.DecodeFailed> { scanner.scanImage(corrupt) }
        assertFailsWith<NetronException.Io> { scanner.scanFile("/nonexistent/photo.jpg") }
    }

    companion object {
        private fun near(a: Float, b: Float) = abs(a - b) <= 1e-4f * maxOf(1f, abs(a))

        private fun assertBox(typed: BoundingBox, json: Box, w: Int, h: Int) {
            assertTrue(
                near(typed.x0, json.x0) && near(typed.y0, json.y0) && near(typed.x1, json.x1) &&
                    near(typed.y1, json.y1),
                "$typed vs $json",
            )
            val eps = 1e-3f
            assertTrue(
                -eps <= typed.x0 && typed.x0 <= typed.x1 && typed.x1 <= w + eps &&
                    -eps <= typed.y0 && typed.y0 <= typed.y1 && typed.y1 <= h + eps,
                "$typed outside ${w}x$h",
            )
        }

        private fun dims(shape: List<ShapeDim>?): List<Dim>? = shape?.map {
            when (it) {
                is ShapeDim.Fixed -> Dim.Fixed(it.value.toLong())
                is ShapeDim.Symbolic -> Dim.Symbolic(it.name)
            }
        }

        /** Structural facts every scan result satisfies, whatever the models found. */
        fun checkResult(r: ScanResult, w: Int, h: Int) {
            val g = GraphJson.parse(r.graphJson) // checks format and version
            assertEquals(GraphJson.FORMAT to GraphJson.VERSION, g.format to g.version)
            assertEquals(ImageSize(w, h), g.image)
            val t = r.graph
            assertEquals(g.format to g.version.toUInt(), t.format to t.version)
            assertEquals(w.toUInt() to h.toUInt(), t.image.width to t.image.height)
            assertBox(t.canvas.bbox, g.canvas.box, w, h)

            assertEquals(g.nodes.map { it.id to it.op }, t.nodes.map { it.id to it.op })
            g.nodes.zip(t.nodes).forEach { (j, k) ->
                assertBox(k.bbox, j.box, w, h)
                assertTrue(near(j.confidence, k.confidence) && near(j.opConfidence, k.opConfidence))
                assertTrue(k.confidence in 0f..1f)
            }
            for ((json, typed) in listOf(g.inputs to t.inputs, g.outputs to t.outputs)) {
                assertEquals(json.map { it.id to it.name }, typed.map { it.id to it.name })
                json.zip(typed).forEach { (j, k) -> assertBox(k.bbox, j.box, w, h) }
            }
            assertEquals(g.tensors.map { Triple(it.id, it.text, it.shape) }, t.tensors.map { Triple(it.id, it.text, dims(it.shape)) })
            g.tensors.zip(t.tensors).forEach { (j, k) -> assertBox(k.bbox, j.box, w, h) }
            assertEquals(g.edges.map { Triple(it.from, it.to, it.tensor) }, t.edges.map { Triple(it.from, it.to, it.tensor) })

            val s = r.timings
            val stages = listOf(s.decodeMs, s.qualityMs, s.cropMs, s.detectMs, s.classifyMs, s.readMs, s.assembleMs)
            assertTrue(stages.all { it >= 0.0 }, "$s")
            assertTrue(abs(s.totalMs - stages.sum()) < 1e-6 * maxOf(1.0, s.totalMs), "$s")
            assertTrue(s.cropMs > 0.0, "the cropper always runs: $s")
            assertTrue(r.quality.score in 0f..1f)
            assertTrue(r.frames >= 1u)
        }
    }
}
