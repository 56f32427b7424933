package dev.netronocr

import dev.netronocr.ffi.NetronException
import dev.netronocr.ffi.normalizeGraphJson
import java.io.File
import java.time.Instant
import kotlin.test.assertContains
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertNull
import kotlin.test.assertTrue
import org.junit.jupiter.api.Test

class GraphJsonTest {
    private val fixtures = File(System.getProperty("netron.repo.root") ?: "../..", "tests/fixtures/graphs")

    private fun fixture(name: String) = File(fixtures, name).readText()

    @Test
    fun `example graph decodes into the typed model`() {
        val g = GraphJson.parse(fixture("example.json"))
        assertEquals(GraphJson.FORMAT, g.format)
        assertEquals(Direction.VERTICAL, g.direction)
        val conv = g.nodes.first { it.id == "n0" }
        assertEquals("Conv", conv.op)
        assertEquals(listOf(Dim.Fixed(32), Dim.Fixed(3), Dim.Fixed(3), Dim.Fixed(3)), conv.weights[0].shape)
        val t1 = g.tensors.first { it.id == "t1" }
        assertEquals(listOf(Dim.Fixed(1), Dim.Fixed(32), Dim.Symbolic("?"), Dim.Symbolic("?")), t1.shape)
        assertTrue(g.edges.all { e -> g.tensors.any { it.id == e.tensor } || e.tensor == null })
    }

    @Test
    fun `round trip through the native reader keeps the graph`() {
        val g = GraphJson.parse(fixture("example.json"))
        val normalized = normalizeGraphJson(g.toJson())
        assertEquals(g.copy(scene = null), GraphJson.parse(normalized).copy(scene = null))
    }

    @Test
    fun `other versions and broken files get clear errors`() {
        val v2 = assertFailsWith<GraphJsonException> { GraphJson.parse(fixture("invalid/version-2.json")) }
        assertContains(v2.message!!, "version 2 is not supported")
        assertFailsWith<NetronException.UnsupportedGraphVersion> { normalizeGraphJson(fixture("invalid/version-2.json")) }
        assertFailsWith<GraphJsonException> { GraphJson.parse(fixture("invalid/not-json.json")) }
        assertFailsWith<GraphJsonException> { GraphJson.parse(fixture("invalid/box-three-numbers.json")) }
        assertFailsWith<NetronException.InvalidGraph> { normalizeGraphJson(fixture("invalid/dangling-edge.json")) }
    }

    @Test
    fun `share payload names the file and sets the JSON MIME type`() {
        val g = GraphJson.parse(fixture("example.json"))
        val p = GraphShare.payload(g, Instant.parse("2026-11-30T08:55:01Z"))
        assertEquals("netron-graph-20261130-085501.json", p.fileName)
        assertEquals("application/json", p.mimeType)
        assertEquals("Netron graph: ${g.nodes.size} nodes, ${g.inputs.size} input, ${g.outputs.size} output", p.subject)
        assertEquals(g, GraphJson.parse(p.text))
        assertTrue(p.text.endsWith("}\n") && p.text.contains("\n  \"nodes\""))
        assertNull(HintText.headline(emptyList()))
    }
}
