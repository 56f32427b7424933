#if canImport(AVFoundation) && !os(Linux)
import AVFoundation
import CoreVideo
import Foundation

/// Back-camera frames into a `CaptureController`: an `AVCaptureVideoDataOutput` delivering NV12
/// (`420YpCbCr8BiPlanarFullRange`) pixel buffers, whose two planes go to the native library as `Data` views of the
/// locked CVPixelBuffer memory (`bytesNoCopy`, no deallocator): nothing is copied, and the views are used only
/// inside the synchronous `submit` while the buffer is locked.
public final class CameraFrameSource: NSObject, AVCaptureVideoDataOutputSampleBufferDelegate {
    public enum SetupError: Error { case noCamera, cannotAddInput, cannotAddOutput }

    /// Add an `AVCaptureVideoPreviewLayer` for this session to show the preview.
    public let session = AVCaptureSession()
    private let output = AVCaptureVideoDataOutput()
    private let queue = DispatchQueue(label: "dev.netronocr.camera-frames")
    private let controller: CaptureController

    /// Clockwise rotation that makes buffers upright. The back camera's buffers are landscape, so a portrait UI
    /// needs `.r90` (the default); set it from the interface orientation when it changes.
    public var rotation: Rotation = .r90

    public init(controller: CaptureController) throws {
        self.controller = controller
        super.init()
        session.beginConfiguration()
        defer { session.commitConfiguration() }
        if session.canSetSessionPreset(.hd1920x1080) { session.sessionPreset = .hd1920x1080 }
        guard let camera = AVCaptureDevice.default(.builtInWideAngleCamera, for: .video, position: .back) else {
            throw SetupError.noCamera
        }
        let input = try AVCaptureDeviceInput(device: camera)
        guard session.canAddInput(input) else { throw SetupError.cannotAddInput }
        session.addInput(input)
        output.videoSettings = [
            kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_420YpCbCr8BiPlanarFullRange,
        ]
        // Like CameraX's KEEP_ONLY_LATEST: a slow frame drops the late ones instead of queueing them.
        output.alwaysDiscardsLateVideoFrames = true
        output.setSampleBufferDelegate(self, queue: queue)
        guard session.canAddOutput(output) else { throw SetupError.cannotAddOutput }
        session.addOutput(output)
    }

    /// Starts the camera (off the main thread; `startRunning` blocks).
    public func start() {
        queue.async { [session] in session.startRunning() }
    }

    public func stop() {
        queue.async { [session] in session.stopRunning() }
    }

    public func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer,
                              from connection: AVCaptureConnection) {
        guard let buffer = CMSampleBufferGetImageBuffer(sampleBuffer),
              CVPixelBufferGetPlaneCount(buffer) == 2 else { return }
        CVPixelBufferLockBaseAddress(buffer, .readOnly)
        defer { CVPixelBufferUnlockBaseAddress(buffer, .readOnly) }
        guard let yBase = CVPixelBufferGetBaseAddressOfPlane(buffer, 0),
              let uvBase = CVPixelBufferGetBaseAddressOfPlane(buffer, 1) else { return }
        let width = CVPixelBufferGetWidthOfPlane(buffer, 0)
        let height = CVPixelBufferGetHeightOfPlane(buffer, 0)
        let yStride = CVPixelBufferGetBytesPerRowOfPlane(buffer, 0)
        let uvStride = CVPixelBufferGetBytesPerRowOfPlane(buffer, 1)
        let uvRows = CVPixelBufferGetHeightOfPlane(buffer, 1)
        let y = Data(bytesNoCopy: yBase, count: yStride * height, deallocator: .none)
        let uv = Data(bytesNoCopy: uvBase, count: uvStride * uvRows, deallocator: .none)
        let info = FrameInfo(format: .nv12, width: UInt32(width), height: UInt32(height),
                             rowStrides: [UInt32(yStride), UInt32(uvStride)], pixelStride: 2, rotation: rotation)
        controller.submit(planes: [y, uv], info: info)
    }
}
#endif
