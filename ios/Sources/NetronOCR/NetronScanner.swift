/// The library's entry object (the generated `Scanner`). Foundation has a `Scanner` class too, so in files that
/// import both, `Scanner` is ambiguous: use this name (or `NetronOCR.Scanner`).
public typealias NetronScanner = Scanner
