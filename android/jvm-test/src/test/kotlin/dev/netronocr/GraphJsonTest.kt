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
    private companion object {
        /** A small graph written for these tests: one unclassified node, a symbolic shape, an unlabelled edge. */
        const val SMALL = """{"format":"netron-ocr.graph","version":1,"image":{"width":100,"height":80},
            "canvas":{"box":[0,0,100,80],"confidence":0.5},"direction":"horizontal",
            "nodes":[{"id":"n0","op":null,"op_confidence":0.25,"box":[1,2,30,40],"confidence":0.9,
              "weights":[{"name":"W","shape":[64,"?"],"text":"64×?"}],"future":1}],
            "inputs":[],"outputs":[],
            "tensors":[{"id":"t0","text":"batch×3","shape":["batch",3],"box":[5,5,9,9],"confidence":1}],
            "edges":[{"from":"n0","to":"n0","tensor":null,"confidence":0.7,"points":[[0,0],[5,5]]}]}"""
    }

    private val fixtures = File(System.getProperty("netron.repo.root") ?: "../..", "tests/fixtures/graphs")

    private fun fixture(name: String) = File(fixtures, name).readText()

    @Test
    fun `fields decode into the typed model`() {
        val g = GraphJson.parse(SMALL)
        assertEquals(Direction.HORIZONTAL, g.direction)
        val n0 = g.nodes.single()
        assertNull(n0.op)
        assertEquals(0.25f, n0.opConfidence)
        assertEquals(Box(1f, 2f, 30f, 40f), n0.box)
        assertEquals(listOf(Dim.Fixed(64), Dim.Symbolic("?")), n0.weights.single().shape)
        assertEquals(listOf(Dim.Symbolic("batch"), Dim.Fixed(3)), g.tensors.single().shape)
        assertEquals(listOf(Point(0f, 0f), Point(5f, 5f)), g.edges.single().points)
        assertNull(g.edges.single().tensor)
        assertEquals(GraphJson.parse(g.toJson()), g)
    }

    @Test
    fun `uncertain readings are counted and said`() {
        assertEquals(Uncertain(operators = 1, shapes = 0, names = 0), GraphJson.parse(SMALL).uncertain())
        assertEquals(Uncertain(1, 1, 0), GraphJson.parse(SMALL).uncertain(below = 1.5f))
        assertNull(Uncertain(0, 0, 0).describe())
        assertEquals("3 shapes", Uncertain(0, 3, 0).describe())
        assertEquals("2 operators, 5 shapes and 1 name", Uncertain(2, 5, 1).describe())
        assertEquals("Captured", HintText.captured(emptyList(), Uncertain(0, 0, 0)))
        assertEquals("Captured. Unsure of 1 operator and 2 shapes", HintText.captured(emptyList(), Uncertain(1, 2, 0)))
    }

    @Test
    fun `example graph decodes with every element`() {
        val text = fixture("example.json")
        val raw = kotlinx.serialization.json.Json.parseToJsonElement(text) as kotlinx.serialization.json.JsonObject
        val g = GraphJson.parse(text)
        for ((key, list) in listOf("nodes" to g.nodes, "inputs" to g.inputs, "outputs" to g.outputs,
            "tensors" to g.tensors, "edges" to g.edges)) {
            assertEquals((raw[key] as kotlinx.serialization.json.JsonArray).size, list.size, key)
        }
        val ids = (g.nodes.map { it.id } + g.inputs.map { it.id } + g.outputs.map { it.id }).toSet()
        assertTrue(g.edges.all { it.from in ids && it.to in ids })
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
        val small = GraphShare.payload(GraphJson.parse(SMALL), Instant.EPOCH)
        assertEquals("Netron graph: 1 node, 0 inputs, 0 outputs", small.subject)
        assertEquals("netron-graph-19700101-000000.json", small.fileName)
        assertEquals(g, GraphJson.parse(p.text))
        assertTrue(p.text.endsWith("}\n") && p.text.lines().size > 10)
        assertNull(HintText.headline(emptyList()))
    }
}
