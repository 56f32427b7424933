package dev.netronocr

import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.SerializationException
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.PrimitiveSerialDescriptor
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonDecoder
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonEncoder
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.longOrNull

/**
 * Graph JSON, schema v1 (`docs/graph-json.md`): what a scan returns.
 *
 * Boxes are `[x0, y0, x1, y1]` and points `[x, y]`, in pixels of the upright source image; confidences are in
 * 0..1. Unknown fields are ignored (writers may add fields within v1); another major version is rejected by
 * [parse] with a [GraphJsonException].
 */
@Serializable
data class GraphJson(
    val format: String,
    val version: Int,
    val image: ImageSize,
    val canvas: Canvas,
    val direction: Direction? = null,
    val nodes: List<Node>,
    val inputs: List<Port>,
    val outputs: List<Port>,
    val tensors: List<Tensor>,
    val edges: List<Edge>,
    /** Generator metadata, ground truth only. */
    val scene: JsonObject? = null,
) {
    /** This graph as compact graph JSON v1. */
    fun toJson(): String = json.encodeToString(serializer(), this)

    /** This graph as indented graph JSON v1 (for sharing and reading). */
    fun toPrettyJson(): String = pretty.encodeToString(serializer(), this)

    companion object {
        const val FORMAT = "netron-ocr.graph"
        const val VERSION = 1

        internal val json = Json { ignoreUnknownKeys = true; explicitNulls = true }
        private val pretty = Json(json) { prettyPrint = true }

        /**
         * Reads graph JSON v1. Checks `format` and the major `version` first, so a file of another version gets
         * a clear [GraphJsonException] rather than a field error.
         */
        fun parse(text: String): GraphJson {
            val root = try {
                json.parseToJsonElement(text)
            } catch (e: SerializationException) {
                throw GraphJsonException("not valid JSON: ${e.message}", e)
            }
            if (root !is JsonObject) throw GraphJsonException("not a netron-ocr graph: top level is not an object")
            val format = (root["format"] as? JsonPrimitive)?.contentOrNull
            if (format != FORMAT) throw GraphJsonException("not a netron-ocr graph: format is $format")
            val version = (root["version"] as? JsonPrimitive)?.longOrNull
            if (version != VERSION.toLong()) {
                throw GraphJsonException("graph JSON version $version is not supported: this reader supports version $VERSION only")
            }
            return try {
                json.decodeFromJsonElement(serializer(), root)
            } catch (e: SerializationException) {
                throw GraphJsonException("graph JSON does not match schema v1: ${e.message}", e)
            } catch (e: IllegalArgumentException) {
                throw GraphJsonException("graph JSON does not match schema v1: ${e.message}", e)
            }
        }
    }
}

/** Why graph JSON could not be read. */
class GraphJsonException(message: String, cause: Throwable? = null) : Exception(message, cause)

@Serializable
data class ImageSize(val width: Int, val height: Int)

@Serializable
data class Canvas(val box: List<Float>, val confidence: Float) {
    init { requireBox(box, "canvas box") }
}

/** Boxes are exactly `[x0, y0, x1, y1]`. */
internal fun requireBox(box: List<Float>?, what: String) {
    require(box == null || box.size == 4) { "$what must have 4 numbers, got ${box?.size}" }
}

@Serializable
enum class Direction {
    @SerialName("vertical") VERTICAL,
    @SerialName("horizontal") HORIZONTAL,
}

/** An operator card. [op] is null when the classifier was not confident enough ([opConfidence] still holds). */
@Serializable
data class Node(
    val id: String,
    val op: String?,
    @SerialName("op_confidence") val opConfidence: Float,
    val box: List<Float>,
    val confidence: Float,
    val weights: List<Weight>,
    @SerialName("title_box") val titleBox: List<Float>? = null,
    val quad: List<List<Float>>? = null,
    val truncated: Boolean? = null,
) {
    init {
        requireBox(box, "node $id box")
        requireBox(titleBox, "node $id title_box")
    }
}

/** A `W〈64×3×7×7〉` row of a card: [shape] is null when the text could not be read as dims. */
@Serializable
data class Weight(
    val name: String,
    val shape: List<Dim>?,
    val text: String,
    val box: List<Float>? = null,
)

/** A graph input or output pill. */
@Serializable
data class Port(
    val id: String,
    val name: String,
    val box: List<Float>,
    val confidence: Float,
    val quad: List<List<Float>>? = null,
    val truncated: Boolean? = null,
) {
    init { requireBox(box, "port $id box") }
}

/** A tensor label on an edge: [shape] is null when [text] is not a shape (Netron's names mode). */
@Serializable
data class Tensor(
    val id: String,
    val text: String,
    val shape: List<Dim>?,
    val box: List<Float>,
    val confidence: Float,
    val quad: List<List<Float>>? = null,
    val name: String? = null,
) {
    init { requireBox(box, "tensor $id box") }
}

/** A connection; [tensor] is the id of its label, or null when it has none. */
@Serializable
data class Edge(
    val from: String,
    val to: String,
    val tensor: String?,
    val confidence: Float,
    val points: List<List<Float>>? = null,
    val name: String? = null,
)

/** One dimension: a number, or a symbolic (`batch`) / unknown (`?`) name. */
@Serializable(with = DimSerializer::class)
sealed interface Dim {
    data class Fixed(val value: Long) : Dim {
        override fun toString() = value.toString()
    }

    data class Symbolic(val name: String) : Dim {
        override fun toString() = name
    }
}

/** A [Dim] is a JSON integer ≥ 0 or a non-empty string. */
object DimSerializer : KSerializer<Dim> {
    override val descriptor: SerialDescriptor = PrimitiveSerialDescriptor("dev.netronocr.Dim", PrimitiveKind.STRING)

    override fun deserialize(decoder: Decoder): Dim {
        val element: JsonElement = (decoder as? JsonDecoder)?.decodeJsonElement()
            ?: throw SerializationException("Dim can only be read from JSON")
        val p = element as? JsonPrimitive ?: throw SerializationException("dim must be an integer or a string")
        if (p.isString) {
            if (p.content.isEmpty()) throw SerializationException("symbolic dim must not be empty")
            return Dim.Symbolic(p.content)
        }
        val n = p.longOrNull ?: throw SerializationException("dim ${p.content} is not an integer")
        if (n < 0) throw SerializationException("dim $n is negative")
        return Dim.Fixed(n)
    }

    override fun serialize(encoder: Encoder, value: Dim) {
        val json = encoder as? JsonEncoder ?: throw SerializationException("Dim can only be written as JSON")
        json.encodeJsonElement(
            when (value) {
                is Dim.Fixed -> JsonPrimitive(value.value)
                is Dim.Symbolic -> JsonPrimitive(value.name)
            },
        )
    }
}

