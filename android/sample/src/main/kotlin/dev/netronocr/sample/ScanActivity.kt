package dev.netronocr.sample

import android.Manifest
import android.content.pm.PackageManager
import android.os.Bundle
import android.widget.Button
import androidx.activity.ComponentActivity
import androidx.activity.result.contract.ActivityResultContracts
import androidx.camera.core.CameraSelector
import androidx.camera.core.Preview
import androidx.camera.lifecycle.ProcessCameraProvider
import androidx.camera.view.PreviewView
import androidx.core.content.ContextCompat
import androidx.lifecycle.lifecycleScope
import dev.netronocr.CaptureController
import dev.netronocr.NetronScanner
import dev.netronocr.ScanUpdate
import dev.netronocr.android.CameraFrameAnalyzer
import dev.netronocr.android.GraphShareIntents
import dev.netronocr.android.GuidanceOverlayView
import kotlinx.coroutines.launch
import java.util.concurrent.Executors

/** Camera preview + guidance overlay; once captured, "Share graph" sends the graph JSON (or "Scan again"). */
class ScanActivity : ComponentActivity() {
    private lateinit var scanner: NetronScanner
    private lateinit var controller: CaptureController
    private val analysisExecutor = Executors.newSingleThreadExecutor()

    private val askCamera = registerForActivityResult(ActivityResultContracts.RequestPermission()) { granted ->
        if (granted) startCamera() else finish()
    }

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        setContentView(R.layout.activity_scan)
        scanner = NetronScanner.create()
        controller = scanner.capture(stableFrames = 3)

        val overlay = findViewById<GuidanceOverlayView>(R.id.overlay)
        val action = findViewById<Button>(R.id.action)
        lifecycleScope.launch {
            controller.updates.collect { update ->
                overlay.show(update)
                val captured = update as? ScanUpdate.Captured
                action.isEnabled = captured != null
                action.text = if (captured?.graph != null) "Share graph" else "Scan again"
                action.setOnClickListener {
                    val graph = captured?.graph
                    if (graph != null) startActivity(GraphShareIntents.chooser(this@ScanActivity, graph))
                    controller.reset()
                }
            }
        }

        if (ContextCompat.checkSelfPermission(this, Manifest.permission.CAMERA) == PackageManager.PERMISSION_GRANTED) {
            startCamera()
        } else {
            askCamera.launch(Manifest.permission.CAMERA)
        }
    }

    private fun startCamera() {
        val providerFuture = ProcessCameraProvider.getInstance(this)
        providerFuture.addListener({
            val provider = providerFuture.get()
            val preview = Preview.Builder().build().also {
                it.surfaceProvider = findViewById<PreviewView>(R.id.preview).surfaceProvider
            }
            val analysis = CameraFrameAnalyzer.useCase(controller, analysisExecutor)
            provider.unbindAll()
            provider.bindToLifecycle(this, CameraSelector.DEFAULT_BACK_CAMERA, preview, analysis)
        }, ContextCompat.getMainExecutor(this))
    }

    override fun onDestroy() {
        super.onDestroy()
        analysisExecutor.shutdown()
        controller.close()
        scanner.close()
    }
}
