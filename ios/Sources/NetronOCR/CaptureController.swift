import Foundation

/// What the capture UI shows after each frame.
public enum ScanUpdate {
    /// The last frame was rejected; `hints` say why, most important first.
    case searching(hints: [Hint], quality: FrameQuality)
    /// Good frames are coming in; `progress` is the share of the steady frames needed, 0...1.
    case steadying(hints: [Hint], quality: FrameQuality, progress: Float)
    /// Captured. `result` is the graph fused from the steady frames (`result.frames` of them) with timings, and
    /// `graph` its `NetronGraph` model. Both are nil, with `scanError` saying why, only if the library returned no
    /// result or JSON this model cannot read (the UI should then say so; it never shows a made-up graph).
    case captured(quality: FrameQuality, result: ScanResult?, graph: NetronGraph?, scanError: String?)
    /// A frame could not be processed (bad geometry or an internal error); the capture state is unchanged.
    case failed(NetronError)
}

/// Drives a native `CaptureSession` from a camera stream. It is an `AsyncSequence` of one `ScanUpdate` per
/// submitted frame (iterate it from one task); it keeps the newest 16 updates when the consumer is slow, so the
/// camera queue never blocks.
///
/// `submit` is synchronous: call it on the camera queue while the frame's memory is valid (e.g. with the
/// CVPixelBuffer locked); the planes are passed to the native library without a copy.
public final class CaptureController: AsyncSequence, @unchecked Sendable {
    public typealias Element = ScanUpdate
    public typealias AsyncIterator = AsyncStream<ScanUpdate>.Iterator

    /// `scanError` of a capture that completed without a scan result (a library bug).
    public static let noResult = "The capture completed without a scan result."

    private let session: CaptureSession
    private let stream: AsyncStream<ScanUpdate>
    private let continuation: AsyncStream<ScanUpdate>.Continuation

    /// A controller capturing after `stableFrames` (≥ 1) steady accepted frames in a row.
    public init(scanner: NetronScanner, stableFrames: Int = 3) throws {
        guard stableFrames >= 1, stableFrames <= Int(UInt32.max) else {
            throw NetronError.InvalidArgument(message: "stableFrames must be at least 1, got \(stableFrames)")
        }
        session = try CaptureSession(scanner: scanner, stableFrames: UInt32(stableFrames))
        (stream, continuation) = AsyncStream.makeStream(of: ScanUpdate.self, bufferingPolicy: .bufferingNewest(16))
    }

    deinit {
        continuation.finish()
    }

    public func makeAsyncIterator() -> AsyncStream<ScanUpdate>.Iterator {
        stream.makeAsyncIterator()
    }

    /// Pushes a frame held in one buffer (planes packed one after another).
    @discardableResult
    public func submit(frame: Data, info: FrameInfo) -> ScanUpdate {
        publish { try session.pushFrame(frame: frame, info: info) }
    }

    /// Pushes a frame given as one buffer per plane (1 to 3 planes, in the format's order).
    @discardableResult
    public func submit(planes: [Data], info: FrameInfo) -> ScanUpdate {
        guard (1...3).contains(planes.count) else {
            let update = ScanUpdate.failed(.InvalidFrame(message: "a frame has 1 to 3 planes, got \(planes.count)"))
            continuation.yield(update)
            return update
        }
        let p = planes + Array(repeating: Data(), count: 3 - planes.count)
        return publish { try session.pushPlanes(plane0: p[0], plane1: p[1], plane2: p[2], info: info) }
    }

    /// Starts over (searching), e.g. after the user dismissed a result.
    public func reset() throws {
        try session.reset()
    }

    /// Ends the sequence: iteration stops after the updates already buffered.
    public func finish() {
        continuation.finish()
    }

    private func publish(_ push: () throws -> CaptureUpdate) -> ScanUpdate {
        let update: ScanUpdate
        do {
            update = CaptureController.scanUpdate(try push())
        } catch let error as NetronError {
            update = .failed(error)
        } catch {
            update = .failed(.Internal(message: "\(error)"))
        }
        continuation.yield(update)
        return update
    }

    /// Maps a native update to the UI model.
    public static func scanUpdate(_ u: CaptureUpdate) -> ScanUpdate {
        switch u.state {
        case .searching:
            return .searching(hints: u.hints, quality: u.quality)
        case .steadying:
            return .steadying(hints: u.hints, quality: u.quality,
                              progress: Float(u.stableFrames) / Float(u.requiredStableFrames))
        case .captured:
            guard let result = u.result else {
                return .captured(quality: u.quality, result: nil, graph: nil, scanError: noResult)
            }
            do {
                let graph = try NetronGraph.decode(Data(result.graphJson.utf8))
                return .captured(quality: u.quality, result: result, graph: graph, scanError: nil)
            } catch {
                return .captured(quality: u.quality, result: nil, graph: nil, scanError: "\(error)")
            }
        }
    }
}

extension Hint {
    /// What to say once captured: a warning when the capture's text was too small (`zoomIn` among `hints`), and how
    /// many readings of the captured graph are uncertain (`NetronGraph.uncertain(below:)`), when any are.
    public static func capturedMessage(_ hints: [Hint], uncertain: NetronGraph.Uncertain? = nil) -> String {
        let base = hints.contains(.zoomIn)
            ? "Captured, but the text was small: check the graph, or zoom in and scan again" : "Captured"
        guard let doubts = uncertain?.description else { return base }
        return "\(base). Unsure of \(doubts)"
    }

    /// Short user-facing guidance (English).
    public var message: String {
        switch self {
        case .tooDark: return "Too dark: turn up the screen brightness"
        case .tooBright: return "Too bright: lower the screen brightness"
        case .reduceGlare: return "Glare on the screen: tilt the phone"
        case .holdSteady: return "Hold steady"
        case .tooBlurry: return "Blurry: hold still and let the camera focus"
        case .moveCloser: return "Move closer to the graph"
        case .moveBack: return "Move back: the graph runs off the edges"
        case .zoomIn: return "Text too small to read: zoom in in Netron, or move closer and scan in parts"
        }
    }
}
