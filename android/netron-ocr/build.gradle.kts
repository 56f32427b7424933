// The netron-ocr Android library: native libnetron_ocr_ffi.so for three ABIs (built with cargo-ndk), the
// UniFFI-generated Kotlin bindings (generated from that .so), the pure-Kotlin API (src/main/kotlin, also compiled
// and tested on the JVM by android/jvm-test) and the CameraX / View / FileProvider code (src/androidMain/kotlin).
import org.gradle.api.tasks.Exec

plugins {
    id("com.android.library")
    id("org.jetbrains.kotlin.android")
}

val repoRoot = rootProject.projectDir.parentFile
val rustJniLibs = layout.buildDirectory.dir("rustJniLibs")
val uniffiOut = layout.buildDirectory.dir("generated/uniffi")
val abis = listOf("arm64-v8a", "armeabi-v7a", "x86_64")

android {
    namespace = "dev.netronocr"
    compileSdk = 35
    ndkVersion = "27.2.12479018"
    defaultConfig {
        minSdk = 24
        consumerProguardFiles("consumer-rules.pro")
        ndk { abiFilters += abis }
    }
    sourceSets["main"].apply {
        java.srcDirs("src/main/kotlin", "src/androidMain/kotlin", uniffiOut)
        jniLibs.srcDir(rustJniLibs)
    }
    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
    kotlinOptions { jvmTarget = "17" }
}

// cargo ndk -t arm64-v8a -t armeabi-v7a -t x86_64 -o build/rustJniLibs build --release -p netron-ocr-ffi
//     --no-default-features --features bundled-models,nnef
// (the models converted to NNEF at build time, so tract's ONNX parser is not linked: docs/mobile.md, "Size")
val cargoNdk by tasks.registering(Exec::class) {
    workingDir = repoRoot
    commandLine(
        listOf("cargo", "ndk") + abis.flatMap { listOf("-t", it) } +
            listOf("-o", rustJniLibs.get().asFile.path, "build", "--release", "-p", "netron-ocr-ffi") +
            listOf("--no-default-features", "--features", "bundled-models,nnef"),
    )
    inputs.dir(File(repoRoot, "core/src"))
    inputs.dir(File(repoRoot, "ffi/src"))
    outputs.dir(rustJniLibs)
}

// Bindings come from the built .so itself (library mode), so they always match the native code they call.
val uniffiKotlin by tasks.registering(Exec::class) {
    dependsOn(cargoNdk)
    workingDir = repoRoot
    val so = rustJniLibs.get().file("arm64-v8a/libnetron_ocr_ffi.so").asFile.path
    commandLine(
        "cargo", "run", "--release", "--manifest-path", "ffi/bindgen/Cargo.toml", "--",
        "generate", "--library", so, "--language", "kotlin", "--out-dir", uniffiOut.get().asFile.path, "--no-format",
    )
    outputs.dir(uniffiOut)
}

tasks.named("preBuild") { dependsOn(uniffiKotlin) }

dependencies {
    // Versions match android/jvm-test/pom.xml.
    implementation("net.java.dev.jna:jna:5.19.1@aar")
    implementation("org.jetbrains.kotlinx:kotlinx-coroutines-android:1.11.0")
    implementation("org.jetbrains.kotlinx:kotlinx-serialization-json:1.12.0")
    implementation("androidx.core:core-ktx:1.16.0")
    implementation("androidx.camera:camera-core:1.4.2")
    implementation("androidx.camera:camera-camera2:1.4.2")
    implementation("androidx.camera:camera-lifecycle:1.4.2")
}
