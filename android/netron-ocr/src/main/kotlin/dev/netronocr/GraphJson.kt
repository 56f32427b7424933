package dev.netronocr

import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.buildJsonArray
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.doubleOrNull
import kotlinx.serialization.json.longOrNull
import kotlinx.serialization.json.put

/**
 * Graph JSON, schema v1 (`docs/graph-json.md`): what a scan returns.
 *
 * Boxes are `[x0, y0, x1, y1]` and points `[x, y]`, in pixels of the upright source image; confidences are in
 * 0..1. Unknown fields are ignored (writers may add fields within v1); another major version is rejected by
 * [parse] with a [GraphJsonException]. Read and written with kotlinx-serialization's JSON tree (no compiler
 * plugin needed).
 */
data class GraphJson(
    val format: String,
    val version: Int,
    val image: ImageSize,
    val canvas: Canvas,
    val direction: Direction?,
    val nodes: List<Node>,
    val inputs: List<Port>,
    val outputs: List<Port>,
    val tensors: List<Tensor>,
    val edges: List<Edge>,
    /** Generator metadata, ground truth only. */
    val scene: JsonObject? = null,
) {
    /** This graph as compact graph JSON v1. */
    fun toJson(): String = compact.encodeToString(JsonElement.serializer(), toElement())

    /**
     * How many readings are more likely wrong than right: confidence under [below]. The scanner's confidences are
     * calibrated probabilities that the operator or text is right; a marked node (`op` null) counts as an
     * uncertain operator.
     */
    fun uncertain(below: Float = 0.5f): Uncertain = Uncertain(
        operators = nodes.count { it.op == null || it.opConfidence < below },
        shapes = tensors.count { it.confidence < below },
        names = (inputs + outputs).count { it.confidence < below },
    )

    /** This graph as indented graph JSON v1 (for sharing and reading). */
    fun toPrettyJson(): String = pretty.encodeToString(JsonElement.serializer(), toElement())

    fun toElement(): JsonObject = buildJsonObject {
        put("format", format)
        put("version", version)
        put("image", buildJsonObject { put("width", image.width); put("height", image.height) })
        put("canvas", buildJsonObject { put("box", box(canvas.box)); put("confidence", canvas.confidence) })
        direction?.let { put("direction", it.json) }
        put("nodes", JsonArray(nodes.map(Node::toElement)))
        put("inputs", JsonArray(inputs.map(Port::toElement)))
        put("outputs", JsonArray(outputs.map(Port::toElement)))
        put("tensors", JsonArray(tensors.map(Tensor::toElement)))
        put("edges", JsonArray(edges.map(Edge::toElement)))
        scene?.let { put("scene", it) }
    }

    companion object {
        const val FORMAT = "netron-ocr.graph"
        const val VERSION = 1

        private val compact = Json
        private val pretty = Json { prettyPrint = true }

        /**
         * Reads graph JSON v1. Checks `format` and the major `version` first, so a file of another version gets
         * a clear [GraphJsonException] rather than a field error.
         */
        fun parse(text: String): GraphJson {
            val root = try {
                compact.parseToJsonElement(text)
            } catch (e: SerializationException) {
                throw GraphJsonException("not valid JSON: ${e.message}", e)
            }
            if (root !is JsonObject) throw GraphJsonException("not a netron-ocr graph: top level is not an object")
            val format = (root["format"] as? JsonPrimitive)?.takeIf { it.isString }?.content
            if (format != FORMAT) throw GraphJsonException("not a netron-ocr graph: format is $format")
            val version = (root["version"] as? JsonPrimitive)?.takeIf { !it.isString }?.longOrNull
            if (version != VERSION.toLong()) {
                throw GraphJsonException(
                    "graph JSON version $version is not supported: this reader supports version $VERSION only",
                )
            }
            return try {
                Reader("").graph(root)
            } catch (e: SchemaError) {
                throw GraphJsonException("graph JSON does not match schema v1: ${e.message}", e)
            }
        }
    }
}

/** Why graph JSON could not be read. */
/** Counts of uncertain readings in a graph ([GraphJson.uncertain]). */
data class Uncertain(val operators: Int, val shapes: Int, val names: Int) {
    val total: Int get() = operators + shapes + names

    /** "2 operators and 1 shape", or null when nothing is uncertain. */
    fun describe(): String? {
        val parts = listOf(operators to "operator", shapes to "shape", names to "name")
            .filter { it.first > 0 }
            .map { (n, what) -> if (n == 1) "1 $what" else "$n ${what}s" }
        return when (parts.size) {
            0 -> null
            1 -> parts[0]
            else -> parts.dropLast(1).joinToString(", ") + " and " + parts.last()
        }
    }
}

class GraphJsonException(message: String, cause: Throwable? = null) : Exception(message, cause)

data class ImageSize(val width: Int, val height: Int)

data class Canvas(val box: Box, val confidence: Float)

enum class Direction(val json: String) { VERTICAL("vertical"), HORIZONTAL("horizontal") }

/** `[x0, y0, x1, y1]` in source-image pixels. */
data class Box(val x0: Float, val y0: Float, val x1: Float, val y1: Float)

/** `[x, y]` in source-image pixels. */
data class Point(val x: Float, val y: Float)

/** An operator card. [op] is null when the classifier was not confident enough ([opConfidence] still holds). */
data class Node(
    val id: String,
    val op: String?,
    val opConfidence: Float,
    val box: Box,
    val confidence: Float,
    val weights: List<Weight>,
    val titleBox: Box? = null,
    val quad: List<Point>? = null,
    val truncated: Boolean? = null,
) {
    fun toElement() = buildJsonObject {
        put("id", id)
        put("op", op)
        put("op_confidence", opConfidence)
        put("box", box(box))
        put("confidence", confidence)
        put("weights", JsonArray(weights.map(Weight::toElement)))
        titleBox?.let { put("title_box", box(it)) }
        quad?.let { put("quad", points(it)) }
        truncated?.let { put("truncated", it) }
    }
}

/** A `W〈64×3×7×7〉` row of a card: [shape] is null when the text could not be read as dims. */
data class Weight(val name: String, val shape: List<Dim>?, val text: String, val box: Box? = null) {
    fun toElement() = buildJsonObject {
        put("name", name)
        put("shape", dims(shape))
        put("text", text)
        box?.let { put("box", box(it)) }
    }
}

/** A graph input or output pill. */
data class Port(
    val id: String,
    val name: String,
    val box: Box,
    val confidence: Float,
    val quad: List<Point>? = null,
    val truncated: Boolean? = null,
) {
    fun toElement() = buildJsonObject {
        put("id", id)
        put("name", name)
        put("box", box(box))
        put("confidence", confidence)
        quad?.let { put("quad", points(it)) }
        truncated?.let { put("truncated", it) }
    }
}

/** A tensor label on an edge: [shape] is null when [text] is not a shape (Netron's names mode). */
data class Tensor(
    val id: String,
    val text: String,
    val shape: List<Dim>?,
    val box: Box,
    val confidence: Float,
    val quad: List<Point>? = null,
    val name: String? = null,
) {
    fun toElement() = buildJsonObject {
        put("id", id)
        put("text", text)
        put("shape", dims(shape))
        put("box", box(box))
        put("confidence", confidence)
        quad?.let { put("quad", points(it)) }
        name?.let { put("name", it) }
    }
}

/** A connection; [tensor] is the id of its label, or null when it has none. */
data class Edge(
    val from: String,
    val to: String,
    val tensor: String?,
    val confidence: Float,
    val points: List<Point>? = null,
    val name: String? = null,
) {
    fun toElement() = buildJsonObject {
        put("from", from)
        put("to", to)
        put("tensor", tensor)
        put("confidence", confidence)
        points?.let { put("points", points(it)) }
        name?.let { put("name", it) }
    }
}

/** One dimension: a number, or a symbolic (`batch`) / unknown (`?`) name. */
sealed interface Dim {
    data class Fixed(val value: Long) : Dim {
        override fun toString() = value.toString()
    }

    data class Symbolic(val name: String) : Dim {
        override fun toString() = name
    }
}

private fun box(b: Box) = buildJsonArray { add(JsonPrimitive(b.x0)); add(JsonPrimitive(b.y0)); add(JsonPrimitive(b.x1)); add(JsonPrimitive(b.y1)) }

private fun points(ps: List<Point>) = JsonArray(ps.map { JsonArray(listOf(JsonPrimitive(it.x), JsonPrimitive(it.y))) })

private fun dims(ds: List<Dim>?): JsonElement = ds?.let { list ->
    JsonArray(list.map { d -> if (d is Dim.Fixed) JsonPrimitive(d.value) else JsonPrimitive((d as Dim.Symbolic).name) })
} ?: JsonNull

private class SchemaError(message: String) : Exception(message)

/** Reads the v1 tree, naming the JSON path of the first problem (e.g. `/nodes/2/box`). */
private class Reader(private val path: String) {
    private fun at(key: String) = Reader("$path/$key")
    private fun fail(what: String): Nothing = throw SchemaError("${path.ifEmpty { "/" }}: $what")

    fun graph(o: JsonObject) = GraphJson(
        format = at("format").string(o["format"]),
        version = at("version").long(o["version"]).toInt(),
        image = at("image").obj(o["image"]).let { i ->
            ImageSize(at("image/width").long(i["width"]).toInt(), at("image/height").long(i["height"]).toInt())
        },
        canvas = at("canvas").obj(o["canvas"]).let { c ->
            Canvas(at("canvas/box").box(c["box"]), at("canvas/confidence").float(c["confidence"]))
        },
        direction = o["direction"]?.let { d ->
            val s = at("direction").string(d)
            Direction.entries.firstOrNull { it.json == s } ?: at("direction").fail("unknown direction $s")
        },
        nodes = at("nodes").list(o["nodes"]) { r, e -> r.node(r.obj(e)) },
        inputs = at("inputs").list(o["inputs"]) { r, e -> r.port(r.obj(e)) },
        outputs = at("outputs").list(o["outputs"]) { r, e -> r.port(r.obj(e)) },
        tensors = at("tensors").list(o["tensors"]) { r, e -> r.tensor(r.obj(e)) },
        edges = at("edges").list(o["edges"]) { r, e -> r.edge(r.obj(e)) },
        scene = o["scene"]?.let { it as? JsonObject ?: at("scene").fail("not an object") },
    )

    fun node(o: JsonObject) = Node(
        id = at("id").string(o["id"]),
        op = at("op").nullableString(o, "op"),
        opConfidence = at("op_confidence").float(o["op_confidence"]),
        box = at("box").box(o["box"]),
        confidence = at("confidence").float(o["confidence"]),
        weights = at("weights").list(o["weights"]) { r, e ->
            val w = r.obj(e)
            Weight(r.at("name").string(w["name"]), r.at("shape").dims(w, "shape"), r.at("text").string(w["text"]),
                w["box"]?.let { r.at("box").box(it) })
        },
        titleBox = o["title_box"]?.let { at("title_box").box(it) },
        quad = o["quad"]?.let { at("quad").points(it) },
        truncated = o["truncated"]?.let { at("truncated").bool(it) },
    )

    fun port(o: JsonObject) = Port(
        id = at("id").string(o["id"]),
        name = at("name").string(o["name"]),
        box = at("box").box(o["box"]),
        confidence = at("confidence").float(o["confidence"]),
        quad = o["quad"]?.let { at("quad").points(it) },
        truncated = o["truncated"]?.let { at("truncated").bool(it) },
    )

    fun tensor(o: JsonObject) = Tensor(
        id = at("id").string(o["id"]),
        text = at("text").string(o["text"]),
        shape = at("shape").dims(o, "shape"),
        box = at("box").box(o["box"]),
        confidence = at("confidence").float(o["confidence"]),
        quad = o["quad"]?.let { at("quad").points(it) },
        name = o["name"]?.let { at("name").string(it) },
    )

    fun edge(o: JsonObject) = Edge(
        from = at("from").string(o["from"]),
        to = at("to").string(o["to"]),
        tensor = at("tensor").nullableString(o, "tensor"),
        confidence = at("confidence").float(o["confidence"]),
        points = o["points"]?.let { at("points").points(it) },
        name = o["name"]?.let { at("name").string(it) },
    )

    fun obj(e: JsonElement?): JsonObject = e as? JsonObject ?: fail(if (e == null) "missing" else "not an object")

    fun <T> list(e: JsonElement?, item: (Reader, JsonElement) -> T): List<T> {
        val a = e as? JsonArray ?: fail(if (e == null) "missing" else "not an array")
        return a.mapIndexed { i, x -> item(at("$i"), x) }
    }

    fun string(e: JsonElement?): String {
        val p = e as? JsonPrimitive
        if (p == null || !p.isString) fail(if (e == null) "missing" else "not a string")
        return p.content
    }

    /** A key that must be present but may be null (schema v1's `op`, `tensor`). */
    fun nullableString(o: JsonObject, key: String): String? {
        val e = o[key] ?: fail("missing (may be null)")
        return if (e is JsonNull) null else string(e)
    }

    fun long(e: JsonElement?): Long {
        val p = e as? JsonPrimitive
        if (p == null || p.isString) fail(if (e == null) "missing" else "not an integer")
        return p.longOrNull ?: fail("not an integer")
    }

    fun float(e: JsonElement?): Float {
        val p = e as? JsonPrimitive
        if (p == null || p.isString) fail(if (e == null) "missing" else "not a number")
        return p.doubleOrNull?.toFloat() ?: fail("not a number")
    }

    fun bool(e: JsonElement): Boolean {
        val p = e as? JsonPrimitive
        if (p == null || p.isString) fail("not a boolean")
        return p.booleanOrNull ?: fail("not a boolean")
    }

    fun box(e: JsonElement?): Box {
        val v = list(e) { r, x -> r.float(x) }
        if (v.size != 4) fail("a box has 4 numbers, got ${v.size}")
        return Box(v[0], v[1], v[2], v[3])
    }

    fun points(e: JsonElement): List<Point> = list(e) { r, x ->
        val v = r.list(x) { rr, y -> rr.float(y) }
        if (v.size != 2) r.fail("a point has 2 numbers, got ${v.size}")
        Point(v[0], v[1])
    }

    /** A required, nullable dim array: integers ≥ 0 or non-empty strings. */
    fun dims(o: JsonObject, key: String): List<Dim>? {
        val e = o[key] ?: fail("missing (may be null)")
        if (e is JsonNull) return null
        return list(e) { r, x ->
            val p = x as? JsonPrimitive ?: r.fail("a dim is an integer or a string")
            when {
                p.isString && p.content.isNotEmpty() -> Dim.Symbolic(p.content)
                p.isString -> r.fail("a symbolic dim must not be empty")
                else -> {
                    val n = p.longOrNull ?: r.fail("dim ${p.content} is not an integer")
                    if (n < 0) r.fail("dim $n is negative")
                    Dim.Fixed(n)
                }
            }
        }
    }
}
