// Android build of netron-ocr: the `netron-ocr` library (AAR) and a sample app.
// Needs the Android SDK + NDK, Rust with the Android targets and cargo-ndk: see docs/mobile.md.
// (Not buildable on the project's CI machines, which have no Android SDK; android/jvm-test is what CI runs.)
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}
dependencyResolutionManagement {
    repositoriesMode.set(RepositoriesMode.FAIL_ON_PROJECT_REPOS)
    repositories {
        google()
        mavenCentral()
    }
}
rootProject.name = "netron-ocr-android"
include(":netron-ocr", ":sample")
