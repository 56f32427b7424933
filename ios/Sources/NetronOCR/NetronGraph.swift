import Foundation

/// Graph JSON, schema v1 (`docs/graph-json.md`): what a scan returns.
///
/// Boxes are `[x0, y0, x1, y1]` and points `[x, y]` in pixels of the upright source image; confidences are in
/// 0...1. Fields this reader does not know are ignored; another major version is rejected by `decode` with
/// `NetronGraph.ReadError.unsupportedVersion`. (`scene`, generator metadata in ground-truth files, is not
/// modelled.)
public struct NetronGraph: Codable, Equatable, Sendable {
    public static let format = "netron-ocr.graph"
    public static let version = 1

    public var format: String
    public var version: Int
    public var image: ImageSize
    public var canvas: Canvas
    public var direction: Direction?
    public var nodes: [Node]
    public var inputs: [Port]
    public var outputs: [Port]
    public var tensors: [Tensor]
    public var edges: [Edge]

    public struct ImageSize: Codable, Equatable, Sendable {
        public var width: Int
        public var height: Int
    }

    public struct Canvas: Codable, Equatable, Sendable {
        public var box: Box
        public var confidence: Double
    }

    public enum Direction: String, Codable, Equatable, Sendable {
        case vertical, horizontal
    }

    /// An operator card; `op` is nil when the classifier was not confident enough (`opConfidence` still holds).
    public struct Node: Codable, Equatable, Sendable {
        public var id: String
        public var op: String?
        public var opConfidence: Double
        public var box: Box
        public var confidence: Double
        public var weights: [Weight]
        public var titleBox: Box?
        public var quad: [Point]?
        public var truncated: Bool?

        enum CodingKeys: String, CodingKey {
            case id, op, box, confidence, weights, quad, truncated
            case opConfidence = "op_confidence"
            case titleBox = "title_box"
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(String.self, forKey: .id)
            op = try c.decodeRequiredOptional(String.self, forKey: .op)
            opConfidence = try c.decode(Double.self, forKey: .opConfidence)
            box = try c.decode(Box.self, forKey: .box)
            confidence = try c.decode(Double.self, forKey: .confidence)
            weights = try c.decode([Weight].self, forKey: .weights)
            titleBox = try c.decodeIfPresent(Box.self, forKey: .titleBox)
            quad = try c.decodeIfPresent([Point].self, forKey: .quad)
            truncated = try c.decodeIfPresent(Bool.self, forKey: .truncated)
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(op, forKey: .op) // required: null when unknown
            try c.encode(opConfidence, forKey: .opConfidence)
            try c.encode(box, forKey: .box)
            try c.encode(confidence, forKey: .confidence)
            try c.encode(weights, forKey: .weights)
            try c.encodeIfPresent(titleBox, forKey: .titleBox)
            try c.encodeIfPresent(quad, forKey: .quad)
            try c.encodeIfPresent(truncated, forKey: .truncated)
        }
    }

    /// A `W〈64×3×7×7〉` row of a card; `shape` is nil when the text could not be read as dims.
    public struct Weight: Codable, Equatable, Sendable {
        public var name: String
        public var shape: [Dim]?
        public var text: String
        public var box: Box?

        enum CodingKeys: String, CodingKey { case name, shape, text, box }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            shape = try c.decodeRequiredOptional([Dim].self, forKey: .shape)
            text = try c.decode(String.self, forKey: .text)
            box = try c.decodeIfPresent(Box.self, forKey: .box)
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(shape, forKey: .shape)
            try c.encode(text, forKey: .text)
            try c.encodeIfPresent(box, forKey: .box)
        }
    }

    /// A graph input or output pill.
    public struct Port: Codable, Equatable, Sendable {
        public var id: String
        public var name: String
        public var box: Box
        public var confidence: Double
        public var quad: [Point]?
        public var truncated: Bool?
    }

    /// A tensor label on an edge; `shape` is nil when `text` is not a shape (Netron's names mode).
    public struct Tensor: Codable, Equatable, Sendable {
        public var id: String
        public var text: String
        public var shape: [Dim]?
        public var box: Box
        public var confidence: Double
        public var quad: [Point]?
        public var name: String?

        enum CodingKeys: String, CodingKey { case id, text, shape, box, confidence, quad, name }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(String.self, forKey: .id)
            text = try c.decode(String.self, forKey: .text)
            shape = try c.decodeRequiredOptional([Dim].self, forKey: .shape)
            box = try c.decode(Box.self, forKey: .box)
            confidence = try c.decode(Double.self, forKey: .confidence)
            quad = try c.decodeIfPresent([Point].self, forKey: .quad)
            name = try c.decodeIfPresent(String.self, forKey: .name)
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(text, forKey: .text)
            try c.encode(shape, forKey: .shape)
            try c.encode(box, forKey: .box)
            try c.encode(confidence, forKey: .confidence)
            try c.encodeIfPresent(quad, forKey: .quad)
            try c.encodeIfPresent(name, forKey: .name)
        }
    }

    /// A connection; `tensor` is the id of its label, or nil when it has none.
    public struct Edge: Codable, Equatable, Sendable {
        public var from: String
        public var to: String
        public var tensor: String?
        public var confidence: Double
        public var points: [Point]?
        public var name: String?

        enum CodingKeys: String, CodingKey { case from, to, tensor, confidence, points, name }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            from = try c.decode(String.self, forKey: .from)
            to = try c.decode(String.self, forKey: .to)
            tensor = try c.decodeRequiredOptional(String.self, forKey: .tensor)
            confidence = try c.decode(Double.self, forKey: .confidence)
            points = try c.decodeIfPresent([Point].self, forKey: .points)
            name = try c.decodeIfPresent(String.self, forKey: .name)
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(from, forKey: .from)
            try c.encode(to, forKey: .to)
            try c.encode(tensor, forKey: .tensor)
            try c.encode(confidence, forKey: .confidence)
            try c.encodeIfPresent(points, forKey: .points)
            try c.encodeIfPresent(name, forKey: .name)
        }
    }

    /// `[x0, y0, x1, y1]`, exactly four numbers.
    public struct Box: Codable, Equatable, Sendable {
        public var x0, y0, x1, y1: Double

        public init(x0: Double, y0: Double, x1: Double, y1: Double) {
            (self.x0, self.y0, self.x1, self.y1) = (x0, y0, x1, y1)
        }

        public init(from decoder: Decoder) throws {
            let v = try decoder.singleValueContainer().decode([Double].self)
            guard v.count == 4 else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                        debugDescription: "a box has 4 numbers, got \(v.count)"))
            }
            self.init(x0: v[0], y0: v[1], x1: v[2], y1: v[3])
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode([x0, y0, x1, y1])
        }
    }

    /// `[x, y]`.
    public struct Point: Codable, Equatable, Sendable {
        public var x, y: Double

        public init(x: Double, y: Double) { (self.x, self.y) = (x, y) }

        public init(from decoder: Decoder) throws {
            let v = try decoder.singleValueContainer().decode([Double].self)
            guard v.count == 2 else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                        debugDescription: "a point has 2 numbers, got \(v.count)"))
            }
            self.init(x: v[0], y: v[1])
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode([x, y])
        }
    }

    /// One dimension: an integer ≥ 0, or a symbolic (`batch`) / unknown (`?`) name.
    public enum Dim: Codable, Equatable, Sendable, CustomStringConvertible {
        case fixed(UInt64)
        case symbolic(String)

        public init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(UInt64.self) {
                self = .fixed(n)
            } else if let s = try? c.decode(String.self), !s.isEmpty {
                self = .symbolic(s)
            } else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                        debugDescription: "a dim is an integer ≥ 0 or a non-empty string"))
            }
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .fixed(let n): try c.encode(n)
            case .symbolic(let s): try c.encode(s)
            }
        }

        public var description: String {
            switch self {
            case .fixed(let n): return String(n)
            case .symbolic(let s): return s
            }
        }
    }

    /// Why graph JSON could not be read.
    public enum ReadError: Error, Equatable, CustomStringConvertible {
        case notAGraph(String)
        case unsupportedVersion(found: Int)
        case schema(String)

        public var description: String {
            switch self {
            case .notAGraph(let why): return "not a netron-ocr graph: \(why)"
            case .unsupportedVersion(let v):
                return "graph JSON version \(v) is not supported: this reader supports version \(NetronGraph.version) only"
            case .schema(let why): return "graph JSON does not match schema v1: \(why)"
            }
        }
    }

    private struct Header: Decodable {
        var format: String?
        var version: Int?
    }

    /// Reads graph JSON v1, checking `format` and the major `version` before anything else.
    public static func decode(_ data: Data) throws -> NetronGraph {
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: data)
        } catch {
            throw ReadError.notAGraph("not a JSON object with format and version (\(error))")
        }
        guard header.format == format else { throw ReadError.notAGraph("format is \(header.format ?? "missing")") }
        guard header.version == version else { throw ReadError.unsupportedVersion(found: header.version ?? -1) }
        do {
            return try JSONDecoder().decode(NetronGraph.self, from: data)
        } catch {
            throw ReadError.schema("\(error)")
        }
    }

    /// This graph as graph JSON v1 (keys sorted; indented when `pretty`).
    public func encoded(pretty: Bool = false) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys]
        return try encoder.encode(self)
    }
}

extension KeyedDecodingContainer {
    /// A key that must be present but may be `null` (schema v1's `op`, `shape`, `tensor`).
    func decodeRequiredOptional<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "required (may be null)"))
        }
        return try decodeIfPresent(type, forKey: key)
    }
}

extension NetronGraph {
    /// Counts of uncertain readings in a graph (`NetronGraph.uncertain(below:)`).
    public struct Uncertain: Equatable, Sendable {
        public var operators: Int
        public var shapes: Int
        public var names: Int

        public init(operators: Int, shapes: Int, names: Int) {
            self.operators = operators
            self.shapes = shapes
            self.names = names
        }

        public var total: Int { operators + shapes + names }

        /// "2 operators and 1 shape", or nil when nothing is uncertain.
        public var description: String? {
            let parts = [(operators, "operator"), (shapes, "shape"), (names, "name")]
                .filter { $0.0 > 0 }
                .map { $0.0 == 1 ? "1 \($0.1)" : "\($0.0) \($0.1)s" }
            switch parts.count {
            case 0: return nil
            case 1: return parts[0]
            default: return parts.dropLast().joined(separator: ", ") + " and " + parts[parts.count - 1]
            }
        }
    }

    /// How many readings are more likely wrong than right: confidence under `below`. The scanner's confidences
    /// are calibrated probabilities that the operator or text is right; a marked node (`op` nil) counts as an
    /// uncertain operator.
    public func uncertain(below: Double = 0.5) -> Uncertain {
        Uncertain(
            operators: nodes.filter { $0.op == nil || $0.opConfidence < below }.count,
            shapes: tensors.filter { $0.confidence < below }.count,
            names: (inputs + outputs).filter { $0.confidence < below }.count
        )
    }
}
