plugins {
    id("com.android.library") version "8.9.1" apply false
    id("com.android.application") version "8.9.1" apply false
    id("org.jetbrains.kotlin.android") version "2.4.21" apply false
}
