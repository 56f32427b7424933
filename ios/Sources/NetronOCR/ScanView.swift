#if canImport(SwiftUI) && canImport(UIKit) && canImport(AVFoundation)
import AVFoundation
import SwiftUI
import UniformTypeIdentifiers

/// Sample capture screen: camera preview, a framing guide coloured by state, the most important hint, a progress
/// ring while steadying, and a share sheet for the captured graph JSON.
@available(iOS 16.0, *)
public struct NetronScanView: View {
    @StateObject private var model: ScanViewModel

    public init(scanner: NetronScanner) {
        _model = StateObject(wrappedValue: ScanViewModel(scanner: scanner))
    }

    public var body: some View {
        ZStack {
            if let session = model.camera?.session {
                CameraPreview(session: session).ignoresSafeArea()
            }
            RoundedRectangle(cornerRadius: 16)
                .stroke(model.guideColor, lineWidth: 3)
                .padding(24)
            VStack {
                Text(model.headline)
                    .font(.headline)
                    .foregroundColor(.white)
                    .shadow(radius: 3)
                    .padding(.top, 48)
                Spacer()
                if case .steadying(_, _, let progress) = model.update {
                    Circle()
                        .trim(from: 0, to: CGFloat(progress))
                        .stroke(Color.orange, lineWidth: 6)
                        .rotationEffect(.degrees(-90))
                        .frame(width: 56, height: 56)
                }
                if case .captured(_, _, let graph, _) = model.update {
                    HStack {
                        if let graph, let file = GraphFile(graph: graph) {
                            ShareLink(item: file, preview: SharePreview(file.fileName))
                        }
                        Button("Scan again") { model.reset() }
                    }
                    .buttonStyle(.borderedProminent)
                }
            }
            .padding(.bottom, 32)
        }
        .task { await model.run() }
        .onDisappear { model.camera?.stop() }
    }
}

/// The state behind `NetronScanView`: owns the controller and the camera, and follows the update sequence.
@available(iOS 16.0, *)
@MainActor
final class ScanViewModel: ObservableObject {
    @Published var update: ScanUpdate?
    private(set) var camera: CameraFrameSource?
    private let controller: CaptureController?

    init(scanner: NetronScanner) {
        controller = try? CaptureController(scanner: scanner, stableFrames: 3)
        camera = controller.flatMap { try? CameraFrameSource(controller: $0) }
    }

    func run() async {
        guard let controller else { return }
        camera?.start()
        for await u in controller {
            update = u
        }
    }

    func reset() {
        try? controller?.reset()
        update = nil
    }

    var guideColor: Color {
        switch update {
        case .steadying: return .orange
        case .captured: return .green
        default: return .white
        }
    }

    var headline: String {
        switch update {
        case nil: return camera == nil ? "Camera unavailable" : "Point the camera at a Netron graph"
        case .searching(let hints, _): return hints.first?.message ?? "Looking for a graph"
        case .steadying(let hints, _, _): return hints.first?.message ?? "Hold steady"
        case .captured(let quality, _, let graph, let scanError):
            return scanError ?? Hint.capturedMessage(quality.hints, uncertain: graph?.uncertain())
        case .failed(let error): return "\(error)"
        }
    }
}

/// A graph as a shareable `.json` file (MIME `application/json`).
@available(iOS 16.0, *)
struct GraphFile: Transferable {
    let data: Data
    let fileName: String

    init?(graph: NetronGraph, capturedAt: Date = Date()) {
        guard let data = try? graph.encoded(pretty: true) else { return nil }
        let stamp = ISO8601DateFormatter.string(from: capturedAt, timeZone: .init(identifier: "UTC")!,
                                                formatOptions: [.withYear, .withMonth, .withDay, .withTime])
        self.data = data
        self.fileName = "netron-graph-\(stamp.replacingOccurrences(of: ":", with: "")).json"
    }

    static var transferRepresentation: some TransferRepresentation {
        // Written to a temporary file so the receiving app sees the file name.
        FileRepresentation(exportedContentType: .json) { file in
            let url = FileManager.default.temporaryDirectory.appendingPathComponent(file.fileName)
            try file.data.write(to: url, options: .atomic)
            return SentTransferredFile(url)
        }
    }
}

/// `AVCaptureVideoPreviewLayer` in SwiftUI.
struct CameraPreview: UIViewRepresentable {
    let session: AVCaptureSession

    final class PreviewView: UIView {
        override class var layerClass: AnyClass { AVCaptureVideoPreviewLayer.self }
        var previewLayer: AVCaptureVideoPreviewLayer { layer as! AVCaptureVideoPreviewLayer }
    }

    func makeUIView(context: Context) -> PreviewView {
        let view = PreviewView()
        view.previewLayer.session = session
        view.previewLayer.videoGravity = .resizeAspectFill
        return view
    }

    func updateUIView(_ uiView: PreviewView, context: Context) {}
}
#endif
